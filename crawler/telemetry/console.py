"""The terminal's one writer. On a terminal, log lines scroll above a live progress line,
which is drawn again below each of them; anywhere else (a pipe, a file, a daemon's
journal) log lines are plain lines and the progress line is never drawn.

Logs and progress go through one `Console`, so that neither writes into the other's line;
a lock keeps lines whole when a log record comes from another thread.
"""

from __future__ import annotations

import logging
import threading
from typing import TextIO

CLEAR_LINE = "\r\x1b[K"  # back to the line's start, and erase it


class Console:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self._progress = ""  # the progress line drawn at the bottom, if any
        self._lock = threading.Lock()

    def show_progress(self, line: str) -> None:
        """Draw `line` as the live progress line (on a terminal only)."""
        if not self.live:
            return
        with self._lock:
            self._progress = line
            self.stream.write(CLEAR_LINE + line)
            self.stream.flush()

    def write_line(self, text: str) -> None:
        """A whole line above the progress line, which is drawn again below it."""
        with self._lock:
            if self._progress:
                self.stream.write(CLEAR_LINE)
            self.stream.write(text + "\n")
            if self._progress:
                self.stream.write(self._progress)
            self.stream.flush()

    def end_progress(self) -> None:
        """Leave the last progress line on the screen, and start a new line below it."""
        with self._lock:
            if self._progress:
                self.stream.write("\n")
                self.stream.flush()
            self._progress = ""


class ConsoleHandler(logging.Handler):
    """A logging handler that writes each record through a `Console`."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.write_line(self.format(record))
        except Exception:  # logging's own rule: a failing handler never raises
            self.handleError(record)
