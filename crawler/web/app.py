"""The daemon's public web application, served by its server process: the collection's
part of the API, the engine's part passed on to the crawl (`crawler.web.crawl_link`),
the OpenAPI document and the web page, with the limits and headers every answer has."""

from __future__ import annotations

from aiohttp import web

from crawler.web.collection import Collection
from crawler.web.crawl_link import CrawlLink
from crawler.web.errors import errors_as_json
from crawler.web.hosts import answer_known_hosts
from crawler.web.openapi import openapi_document
from crawler.web.page import add_security_headers, page_routes
from crawler.web.requests import MAX_BODY
from crawler.web.routes import PREFIX


def build_app(
    collection: Collection, crawl: CrawlLink, *, host_names: tuple[str, ...] = ()
) -> web.Application:
    """`host_names`: the names beside IP addresses and localhost that the API and the
    page answer to (`crawler.web.hosts`)."""
    app = web.Application(
        client_max_size=MAX_BODY, middlewares=[errors_as_json, answer_known_hosts(host_names)]
    )
    app.on_response_prepare.append(add_security_headers)
    app.on_cleanup.append(collection.close)
    app.on_cleanup.append(crawl.close)
    document = openapi_document()

    async def openapi(_request: web.Request) -> web.Response:
        return web.json_response(document)

    app.router.add_routes(
        [
            *collection.routes(),
            *crawl.routes(),
            web.get(f"{PREFIX}/openapi.json", openapi),
            *page_routes(),
        ]
    )
    return app
