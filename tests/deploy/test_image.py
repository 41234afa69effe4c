"""The image builds the same twice: its base pinned, its dependencies installed from a
lock file that covers pyproject.toml; every command in its help works in it; its health
check is cheap and has headroom."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.deploy.tools import DEPLOY, ROOT

LOCK = DEPLOY / "requirements.lock"
DOCKERFILE = (DEPLOY / "Dockerfile").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pins() -> dict[str, Version]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9._-]+)(\[[^\]]*\])?==([^\s;\\]+)", line)
        if found:
            pins[canonicalize_name(found.group(1))] = Version(found.group(3))
    return pins


def test_the_lock_pins_every_dependency_within_its_specifier() -> None:
    pins = _pins()
    for line in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in {LOCK.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{LOCK.name} pins {requirement.name} {pins[name]}, outside {requirement.specifier}"
        )
    # every pin carries its hashes, so that pip can require them
    text = LOCK.read_text()
    assert len(re.findall(r"^\S+==", text, re.M)) == len(pins)
    assert text.count("--hash=sha256:") >= len(pins)
    # and the lock says how it was made
    assert "pip-compile" in text


def test_the_image_installs_the_lock_and_the_project_without_resolving_again() -> None:
    lines = DOCKERFILE.replace("\\\n", " ")
    assert re.search(r"pip install .*--require-hashes .*-r \S*requirements\.lock", lines)
    assert re.search(r"pip install .*--no-deps .*\.", lines)


def test_the_base_image_is_pinned_and_the_docs_say_how_to_move_it() -> None:
    base = re.search(r"^FROM (\S+)", DOCKERFILE, re.M)
    assert base is not None
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base.group(1))
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "docker buildx imagetools inspect" in operations
    assert "pip-compile" in operations


def test_the_image_holds_every_package_the_project_installs() -> None:
    """`crawler demo` and `crawler testbed` are in the image's help: their package is too."""
    for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        assert re.search(rf"^COPY {package} \./{package}$", DOCKERFILE, re.M), package


def test_the_health_check_is_cheap_and_has_headroom() -> None:
    text = DOCKERFILE.replace("\\\n", " ")
    found = re.search(r"^HEALTHCHECK .*--timeout=(\d+)s.* CMD (\[.*\])$", text, re.M)
    assert found is not None
    docker_timeout = int(found.group(1))
    assert docker_timeout >= 10
    argv = json.loads(found.group(2))
    own = float(argv[argv.index("--timeout") + 1])
    assert own <= docker_timeout / 2  # the check gives up well before Docker does
    # cheap: it loads neither the database layer nor the HTTP client's
    assert argv[:3] == ["python", "-m", "crawler.telemetry.healthcheck"]
    script = (
        "import runpy, sys\n"
        f"sys.argv = ['healthcheck', '--config', {str(DEPLOY / 'crawl.toml')!r}, "
        "'--timeout', '0.5']\n"
        "try:\n"
        "    runpy.run_module('crawler.telemetry.healthcheck', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('sqlalchemy', 'aiohttp', 'sklearn', 'storage') "
        "if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr
