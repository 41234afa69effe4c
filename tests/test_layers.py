"""Every module and subpackage of the crawler sits in a layer of the import contract, so
that `lint-imports` checks what each may import."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = "the crawler's layers: each imports only those below it"
NOT_LAYERED = {"crawler.__init__", "crawler.__main__"}  # the package's door, not a layer


def test_every_module_of_the_crawler_is_in_a_layer() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    (layers,) = [contract["layers"] for contract in contracts if contract["name"] == CONTRACT]
    layered = {name for layer in layers for name in re.split(r"[|:]", layer)}
    layered = {name.strip() for name in layered}
    children = {
        f"crawler.{path.stem}" if path.is_file() else f"crawler.{path.name}"
        for path in (ROOT / "crawler").iterdir()
        if path.suffix == ".py" or (path / "__init__.py").is_file()
    }
    assert sorted(children - NOT_LAYERED - layered) == []
