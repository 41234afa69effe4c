"""Reading what a request sends: its JSON body and its query, each problem an `ApiError`
400 naming it. A body holds a JSON object of the fields an endpoint declares, each of
its type, and nothing else."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from crawler.web.errors import ApiError

MAX_BODY = 64 * 1024  # bytes of a request's body, at most


@dataclass(frozen=True, slots=True)
class Field:
    """A body's field: what it must be, in words, and the check of a value."""

    kind: str
    check: Callable[[Any], bool]


def bad_request(message: str, **fields: Any) -> ApiError:
    return ApiError(400, message, **fields)


async def body_bytes(request: web.Request) -> bytes:
    """The body, of `MAX_BODY` bytes at most."""
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise bad_request(f"the body is larger than {MAX_BODY} bytes") from None


async def json_object(request: web.Request, fields: Mapping[str, Field]) -> dict[str, Any]:
    """The body's object, holding every one of `fields` and no other; an endpoint
    without fields takes an empty body or {}."""
    raw = await body_bytes(request)
    if not raw.strip():
        if fields:
            raise bad_request(f"send a JSON object with {_names(fields)}")
        return {}
    if request.content_type != "application/json":
        raise bad_request(
            f"send JSON with Content-Type: application/json, not {request.content_type!r}"
        )
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise bad_request(f"the body is not JSON: {error}") from None
    if not isinstance(body, dict):
        raise bad_request(f"the body must be a JSON object, not {type(body).__name__}")
    unknown = sorted(set(body) - set(fields))
    if unknown:
        known = _names(fields) if fields else "no field"
        raise bad_request(f"unknown field {unknown[0]!r}: this endpoint takes {known}")
    for name, field in fields.items():
        if name not in body:
            raise bad_request(f"the field {name!r} is missing: it must be {field.kind}")
        if not field.check(body[name]):
            raise bad_request(f"the field {name!r} must be {field.kind}, not {body[name]!r:.80}")
    return body


def _names(fields: Mapping[str, Field]) -> str:
    return ", ".join(f"{name!r} ({field.kind})" for name, field in fields.items())


def check_query(request: web.Request, allowed: set[str]) -> None:
    """No parameter but `allowed`, none given twice."""
    for name in request.query:
        if name not in allowed:
            takes = ", ".join(sorted(allowed)) or "none"
            raise bad_request(f"unknown query parameter {name!r}: this endpoint takes {takes}")
        if len(request.query.getall(name)) > 1:
            raise bad_request(f"the query parameter {name!r} is given more than once")


def query_int(request: web.Request, name: str, *, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name} must be a whole number, not {raw!r:.40}") from None
    if not low <= value <= high:
        raise bad_request(f"{name} must be between {low} and {high}, not {value}")
    return value


def query_float(request: web.Request, name: str, *, low: float, high: float) -> float | None:
    raw = request.query.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise bad_request(f"{name} must be a number, not {raw!r:.40}") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise bad_request(f"{name} must be between {low:g} and {high:g}, not {raw!r:.40}")
    return value
