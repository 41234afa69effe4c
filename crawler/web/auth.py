"""The bearer token a changing request must carry. A daemon started without one takes
no changes (403, saying how to give one); a missing or wrong token is 401. Tokens are
compared in constant time."""

from __future__ import annotations

import hmac

from aiohttp import web

from crawler.web.errors import ApiError

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="crawler"'}


def authorize(request: web.Request, token: str | None) -> None:
    """Raise the ApiError that refuses `request`, unless it carries `token`."""
    if token is None:
        raise ApiError(
            403,
            "this daemon takes no changes: it was started without an API token "
            "(give one with --api-token or CRAWLER_API_TOKEN)",
        )
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise ApiError(
            401, "this change needs the header Authorization: Bearer TOKEN", headers=CHALLENGE
        )
    if not hmac.compare_digest(given.strip().encode("utf-8", "replace"), token.encode()):
        raise ApiError(401, "the API token is wrong", headers=CHALLENGE)
