"""The API's errors as JSON: `ApiError` raised by a handler, and whatever aiohttp
raises itself (an unknown route, a method not allowed), each answered with a JSON
object whose `error` says what is wrong."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A request the API refuses: its status, the message, more fields of the answer."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        self.fields = fields


def error_response(
    status: int, message: str, *, headers: Mapping[str, str] | None = None, **fields: Any
) -> web.Response:
    return web.json_response({"error": message, **fields}, status=status, headers=headers)


@web.middleware
async def errors_as_json(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as error:
        return error_response(error.status, error.message, headers=error.headers, **error.fields)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        headers = {name: value for name, value in error.headers.items() if name == "Allow"}
        message = {404: f"no such route: {request.path}"}.get(error.status, error.reason)
        return error_response(error.status, message, headers=headers)
    except Exception:
        # a bug of the API's own: said in the log, not to the client
        log.exception("the API failed on %s %s", request.method, request.path)
        return error_response(500, "internal error: see the daemon's log")
