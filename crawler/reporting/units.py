"""Numbers as a reader takes them in: a duration in the unit that suits it."""

from __future__ import annotations

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


def duration(seconds: float) -> str:
    """`0.4 s`, `42 s`, `1.1 min`, `1.5 h`, `3.0 days`."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < MINUTE:
        return f"{seconds:.0f} s"
    if seconds < HOUR:
        return f"{seconds / MINUTE:.1f} min"
    if seconds < DAY:
        return f"{seconds / HOUR:.1f} h"
    return f"{seconds / DAY:.1f} days"
