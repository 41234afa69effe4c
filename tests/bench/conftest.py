"""The benchmark scripts' tests are slow ones: they check the tools a maintainer runs,
not the crawler, and run with `python -m pytest -m slow` (CI runs both)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.slow)
