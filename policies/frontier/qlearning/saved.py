"""What a Q-learning frontier saves: an .npz archive of the link model's arrays, with the
subsidy, the hosts' and sections' values, the sections' skill and the exploration budget
as JSON in an array of bytes named "rest". A state of JSON alone, the model's arrays as
lists, is read too, and a state without the sections' skill or the budget (they start
unskilled and unspent)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from policies.frontier.qlearning.exploration_budget import ExplorationBudget
from policies.frontier.qlearning.link_model import LinkContextModel
from policies.frontier.qlearning.site_values import SectionSkill, SiteValues
from policies.npz import is_npz, npz_bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedFrontier:
    model: dict[str, np.ndarray]
    subsidy: float
    hosts: dict[str, list[float]]
    sections: dict[str, list[float]]
    section_skill: list[float]
    budget: list[float] | None  # None: a state saved without one

    @classmethod
    def of(
        cls,
        model: LinkContextModel,
        subsidy: float,
        host_values: SiteValues,
        section_values: SiteValues,
        section_skill: SectionSkill,
        budget: ExplorationBudget,
    ) -> SavedFrontier:
        return cls(
            model=model.get_state(),
            subsidy=subsidy,
            hosts=host_values.get_state(),
            sections=section_values.get_state(),
            section_skill=section_skill.get_state(),
            budget=budget.get_state(),
        )

    def restore(
        self,
        model: LinkContextModel,
        host_values: SiteValues,
        section_values: SiteValues,
        section_skill: SectionSkill,
        budget: ExplorationBudget,
    ) -> None:
        """Bring back each part's state (a state saved without a budget leaves it
        unspent)."""
        with unreadable():
            model.set_state(self.model)
            host_values.set_state(self.hosts)
            section_values.set_state(self.sections)
            section_skill.set_state(self.section_skill)
            if self.budget is not None:
                budget.set_state(self.budget)

    def to_bytes(self) -> bytes:
        rest = {
            "subsidy": self.subsidy,
            "hosts": self.hosts,
            "sections": self.sections,
            "section_skill": self.section_skill,
            "exploration_budget": self.budget,
        }
        return npz_bytes(
            **self.model, rest=np.frombuffer(json.dumps(rest).encode(), dtype=np.uint8)
        )

    @classmethod
    def from_bytes(cls, blob: bytes) -> SavedFrontier:
        with unreadable():
            if is_npz(blob):
                with np.load(io.BytesIO(blob), allow_pickle=False) as saved:
                    model = {name: saved[name] for name in saved.files if name != "rest"}
                    state = json.loads(saved["rest"].tobytes())
            else:
                state = json.loads(blob)
                model = _model_of_json(state["model"])
            saved_state = cls(
                model=model,
                subsidy=float(state["subsidy"]),
                hosts=state.get("hosts", {}),
                sections=state.get("sections", {}),
                section_skill=state.get("section_skill", [0.0] * 8),
                budget=state.get("exploration_budget"),
            )
        if not math.isfinite(saved_state.subsidy):
            raise ValueError("saved Q-learning frontier state has a non-finite subsidy")
        return saved_state


def _model_of_json(saved: dict[str, Any]) -> dict[str, np.ndarray]:
    return {
        "weight_columns": np.asarray(saved["weights"][0]),
        "weights": np.asarray(saved["weights"][1]),
        "count_columns": np.asarray(saved["counts"][0]),
        "counts": np.asarray(saved["counts"][1]),
        "calibration": np.asarray(saved["calibration"]),
        "errors": np.asarray(saved["errors"]),
        "updates": np.array([int(saved["updates"])]),
    }


def merge_models(model: LinkContextModel, subsidy: float, states: Sequence[bytes]) -> float:
    """Parameter mixing of `model` with the models of other daemons' saved `states`
    (`LinkContextModel.merge`); the subsidy averaged over them, weighted by each model's
    updates."""
    saved = [SavedFrontier.from_bytes(blob) for blob in states]
    with unreadable():
        updates = [model.own_updates] + [int(other.model["updates"][0]) for other in saved]
        model.merge([other.model for other in saved])
    if sum(updates) == 0:
        return subsidy
    return float(np.average([subsidy] + [other.subsidy for other in saved], weights=updates))


@contextlib.contextmanager
def unreadable() -> Iterator[None]:
    """A state that cannot be read is a ValueError saying so."""
    try:
        yield
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"saved Q-learning frontier state is unreadable: {error}") from None
