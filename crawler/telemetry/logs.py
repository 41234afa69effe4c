"""Where the crawler's log records go: one handler on the root logger, writing through the
terminal's `Console` (`crawler.telemetry.console`)."""

from __future__ import annotations

import logging

from crawler.telemetry.console import Console, ConsoleHandler

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_to(console: Console, *, level: int) -> None:
    """Send every record at `level` or above through `console`, in place of the handler
    an earlier call installed (other handlers, such as a test's, stay)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, ConsoleHandler)]:
        root.removeHandler(handler)
    handler = ConsoleHandler(console)
    handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level)
