"""Records for the storage tests."""

from __future__ import annotations

from datetime import UTC, datetime

from storage import FetchRecord


def fetched(url_id: int, **changes: object) -> FetchRecord:
    values: dict[str, object] = {
        "url_id": url_id,
        "final_url": None,
        "status": 200,
        "content_type": "text/html",
        "content_length": 10,
        "relevance": 0.5,
        "title": "t",
        "fetched_at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        "error": None,
    }
    values.update(changes)
    return FetchRecord(**values)  # type: ignore[arg-type]
