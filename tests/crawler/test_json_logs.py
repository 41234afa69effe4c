"""`--log-format json`: one JSON object per log event, for a daemon's log collector."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import sys
from pathlib import Path

import pytest

from crawler.config import ConfigError, build_config
from crawler.telemetry.console import Console
from crawler.telemetry.logs import log_to, stop_logging
from testbed.server import Testbed
from testbed.web import WebSpec


def test_a_record_is_one_object_with_its_fields_and_extras() -> None:
    stream = io.StringIO()
    level = logging.getLogger().level
    log_to(Console(stream), level=logging.INFO, log_format="json")
    try:
        logger = logging.getLogger("crawler.example")
        logger.info("fetched %s", "http://a/", extra={"pages": 3})
        try:
            raise ValueError("broken")
        except ValueError:
            logger.warning("a bug\non two lines", exc_info=True)
    finally:
        stop_logging()
        logging.getLogger().setLevel(level)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = map(json.loads, lines)
    assert first["level"] == "INFO"
    assert first["logger"] == "crawler.example"
    assert first["message"] == "fetched http://a/"
    assert first["pages"] == 3
    assert first["time"].endswith("+00:00")
    assert second["message"] == "a bug\non two lines"
    assert "ValueError: broken" in second["exception"]


def test_the_log_format_is_a_setting_like_the_others(tmp_path: Path) -> None:
    assert build_config().log_format == "text"
    assert build_config(environ={"CRAWLER_LOG_FORMAT": "json"}).log_format == "json"
    assert build_config(file_values={"log_format": "json"}).log_format == "json"
    with pytest.raises(ConfigError, match="'log_format' must be one of text, json"):
        build_config(flag_values={"log_format": "xml"})


async def test_a_crawl_logs_json_lines(tmp_path: Path) -> None:
    async with Testbed(WebSpec(pages=200, hosts=1, seed=4)) as bed:
        args = ["run", "--seed", bed.seeds[0], "--topic", bed.topic, "--allow-private-networks"]
        args += ["--db", str(tmp_path / "crawl.db"), "--metrics-port", "0", "--delay", "0.02"]
        args += ["--max-pages", "40", "--progress-interval", "0.2", "--processors", "1"]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "crawler",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "CRAWLER_LOG_FORMAT": "json"},
        )
        _, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 0
    events = [json.loads(line) for line in err.decode().splitlines()]
    assert {"time", "level", "logger", "message"} <= set(events[0])
    assert any(event["message"].startswith("crawl started") for event in events)
    progress = [event for event in events if event["message"].startswith("progress")]
    assert progress
    assert isinstance(progress[-1]["pages"], int)


def test_a_command_run_in_process_leaves_the_logging_as_it_was(tmp_path: Path) -> None:
    from crawler.cli import main

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    with pytest.raises(SystemExit):
        main(["status", "--db", str(tmp_path / "none.db")])
    assert root.handlers == handlers
    assert root.level == level
