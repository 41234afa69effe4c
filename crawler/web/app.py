"""The daemon's web application: the API, its OpenAPI document and the web page, with
the limits and headers every answer has. The metrics server serves it, beside /metrics
and /healthz."""

from __future__ import annotations

from aiohttp import web

from crawler.web.api import PREFIX, Api
from crawler.web.errors import errors_as_json
from crawler.web.hosts import answer_known_hosts
from crawler.web.openapi import openapi_document
from crawler.web.page import add_security_headers, page_routes
from crawler.web.requests import MAX_BODY


def build_app(api: Api, *, host_names: tuple[str, ...] = ()) -> web.Application:
    """`host_names`: the names beside IP addresses and localhost that the API and the
    page answer to (`crawler.web.hosts`)."""
    app = web.Application(
        client_max_size=MAX_BODY, middlewares=[errors_as_json, answer_known_hosts(host_names)]
    )
    app.on_response_prepare.append(add_security_headers)
    app.on_cleanup.append(api.close)  # its engine closes on the loop that used it
    document = openapi_document()

    async def openapi(_request: web.Request) -> web.Response:
        return web.json_response(document)

    app.router.add_routes(
        [*api.routes(), web.get(f"{PREFIX}/openapi.json", openapi), *page_routes()]
    )
    return app
