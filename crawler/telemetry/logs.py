"""Where the crawler's log records go: one handler on the root logger, writing through the
terminal's `Console` (`crawler.telemetry.console`), as text lines or as one JSON object
per event (`--log-format json`, for a daemon's log collector)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from crawler.telemetry.console import Console, ConsoleHandler

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# a LogRecord's own attributes; any other is a field the call gave in `extra`
RECORD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys() | {"message", "asctime"}
)


class JsonFormatter(logging.Formatter):
    """One JSON object a record: time (ISO 8601, UTC), level, logger, message, the
    fields given in `extra`, and the exception's traceback if there is one."""

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in RECORD_ATTRIBUTES and not name.startswith("_"):
                event[name] = value
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return json.dumps(event, default=str, ensure_ascii=False)


def log_to(console: Console, *, level: int, log_format: str = "text") -> None:
    """Send every record at `level` or above through `console`, as text or json, in
    place of the handler an earlier call installed (other handlers, such as a test's,
    stay)."""
    root = logging.getLogger()
    stop_logging()
    handler = ConsoleHandler(console)
    json_lines = log_format == "json"
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level)


def stop_logging() -> None:
    """Remove the handler `log_to` installed, if any: a command run in-process leaves
    the logging of the program around it as it found it."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, ConsoleHandler)]:
        root.removeHandler(handler)
