"""What a crawl's run did, as `crawler run` prints it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# the engine's stop reasons that do not read as why a crawl ended
STOP_REASONS = {"stopped": "asked to stop (a signal)"}


@dataclass(slots=True)
class CrawlSummary:
    stop_reason: str = ""
    fetched: int = 0  # visits recorded in this run
    relevant: int = 0
    outcomes: dict[str, int] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    frontier: int = 0

    @property
    def why_stopped(self) -> str:
        """The stop reason in words."""
        return STOP_REASONS.get(self.stop_reason, self.stop_reason)
