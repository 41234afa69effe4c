"""The policies in subpackages by purpose, with the package's public names kept."""

from __future__ import annotations

from pathlib import Path

import policies

POLICIES = Path(policies.__file__).parent
SHARED = {"__init__.py", "errors.py", "npz.py", "registry.py", "terms.py"}
PURPOSES = {"frontier", "frontier/qlearning", "offline", "pool", "relevance", "revisit"}


def test_every_policy_module_is_in_the_subpackage_of_its_purpose() -> None:
    top = {path.name for path in POLICIES.glob("*.py")}
    assert top == SHARED
    packages = {
        path.parent.relative_to(POLICIES).as_posix() for path in POLICIES.rglob("__init__.py")
    }
    assert packages - {"."} == PURPOSES


def test_the_public_names_load_from_the_package() -> None:
    for name in policies.__all__:
        assert getattr(policies, name).__name__ == name
