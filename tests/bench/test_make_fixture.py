"""`bench/realweb/make_fixture.py` makes the tests' real-HTML fixture again, byte for byte,
where the package it was made from is installed, in the version it was made from."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realhtml import DATA

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "realweb" / "make_fixture.py"
VERSION = "5.3.0-4"  # tests/data/realhtml/README.md's


def installed_version(package: str) -> str | None:
    try:
        answer = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status} ${Version}", package],
            capture_output=True,
            text=True,
        )
    except OSError:  # no dpkg
        return None
    status, _, version = answer.stdout.rpartition(" ")
    return version if status == "install ok installed" else None


@pytest.mark.skipif(
    installed_version("sphinx-doc") != VERSION, reason=f"sphinx-doc {VERSION} is not installed"
)
def test_the_script_makes_the_fixture_again_byte_for_byte(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "134 pages (133 files)" in made
    assert "extension-api ('sphinx extension api'): 17 relevant" in made
    assert "docstrings ('google numpy docstrings'): 12 relevant" in made
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    shipped = sorted(
        p.relative_to(DATA) for p in DATA.rglob("*") if p.is_file() and p.name != "README.md"
    )
    assert written == shipped
    assert all(filecmp.cmp(tmp_path / p, DATA / p, shallow=False) for p in written)
