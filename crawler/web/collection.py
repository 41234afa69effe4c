"""The API's part that reads and labels the collection: search, a page, the pages worth
labelling, a label. It runs in the daemon's server process (`crawler.web.server_process`)
with a database engine of its own, so that its answers do not wait for a busy crawl."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.web.auth import authorize
from crawler.web.errors import ApiError
from crawler.web.requests import (
    Field,
    bad_request,
    check_query,
    json_object,
    query_float,
    query_int,
)
from crawler.web.routes import MAX_HITS, PREFIX
from storage.labels import save_label, uncertain_pages
from storage.pages import PageDetail, page_detail, url_ids

RELEVANT = Field("true or false", lambda value: isinstance(value, bool))


class Collection:
    def __init__(self, *, db_url: str, token: str | None) -> None:
        self.db_url = db_url
        self.token = token
        self._db: AsyncEngine | None = None  # opened on the server's loop, at first use

    @property
    def db(self) -> AsyncEngine:
        if self._db is None:
            self._db = storage.open_engine(self.db_url)
        return self._db

    async def close(self, _app: web.Application | None = None) -> None:
        if self._db is not None:
            await self._db.dispose()
            self._db = None

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(f"{PREFIX}/search", self.search),
            web.get(PREFIX + "/pages/{id}", self.page),
            web.post(PREFIX + "/pages/{id}/label", self.label),
            web.get(f"{PREFIX}/pages", self.pages),
        ]

    async def search(self, request: web.Request) -> web.Response:
        check_query(request, {"q", "limit", "min_relevance"})
        query = request.query.get("q", "")
        try:
            storage.search.query_words(query)
        except ValueError as error:
            raise bad_request(f"q: {error}") from None
        limit = query_int(request, "limit", default=10, low=1, high=MAX_HITS)
        least = query_float(request, "min_relevance", low=0.0, high=1.0)
        try:
            async with self.db.connect() as connection:
                hits = await storage.search_pages(
                    connection, query, limit=limit, min_relevance=least
                )
                ids = await url_ids(connection, [hit.url for hit in hits])
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        return web.json_response(
            {
                "query": query,
                "hits": [
                    {
                        "id": ids.get(hit.url),
                        "url": hit.url,
                        "title": hit.title,
                        "host": hit.host,
                        "relevance": _rounded(hit.relevance),
                        "score": round(hit.score, 4),
                        "snippet": hit.snippet,
                    }
                    for hit in hits
                ],
            }
        )

    async def page(self, request: web.Request) -> web.Response:
        check_query(request, set())
        url_id = _page_id(request)
        try:
            async with self.db.connect() as connection:
                page = await page_detail(connection, url_id)
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        if page is None:
            raise ApiError(404, f"no page with id {url_id} has been fetched")
        return web.json_response(_page_json(page))

    async def label(self, request: web.Request) -> web.Response:
        authorize(request, self.token)
        url_id = _page_id(request)
        body = await json_object(request, {"relevant": RELEVANT})
        try:
            saved = await save_label(self.db, url_id, body["relevant"])
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be written: {error}") from error
        if not saved:
            raise ApiError(404, f"no page with id {url_id} is stored with its text")
        return web.json_response({"id": url_id, "relevant": body["relevant"]})

    async def pages(self, request: web.Request) -> web.Response:
        """The pages worth labelling next: those the topic model is least sure of."""
        check_query(request, {"sort", "limit"})
        sort = request.query.get("sort")
        if sort != "uncertain":
            said = "" if sort is None else f", not {sort!r:.40}"
            raise bad_request(f"sort must be uncertain{said} (the pages worth labelling next)")
        limit = query_int(request, "limit", default=10, low=1, high=MAX_HITS)
        try:
            found = await uncertain_pages(self.db, limit)
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        return web.json_response(
            {
                "pages": [
                    {
                        "id": page.url_id,
                        "url": page.url,
                        "title": page.title,
                        "relevance": _rounded(page.relevance),
                        "margin": round(page.margin, 4),
                    }
                    for page in found
                ]
            }
        )


def _page_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise bad_request(f"a page's id is a whole number, not {raw!r:.40}")
    return int(raw)


def _page_json(page: PageDetail) -> dict[str, Any]:
    return {
        "id": page.url_id,
        "url": page.url,
        "title": page.title,
        "host": page.host,
        "relevance": _rounded(page.relevance),
        "depth": page.depth,
        "text": page.text,
        "label": page.label,
        "outlinks": [
            {"id": link.url_id, "url": link.url, "visited": link.visited} for link in page.outlinks
        ],
        "more_outlinks": page.more_outlinks,
        "fetch": {
            "status": page.status,
            "content_type": page.content_type,
            "content_length": page.content_length,
            "fetched_at": None if page.fetched_at is None else page.fetched_at.isoformat(),
            "fetch_count": page.fetch_count,
            "final_url": page.final_url,
            "error": page.error,
            "discovered_from": page.discovered_from,
        },
    }


def _rounded(relevance: float | None) -> float | None:
    return None if relevance is None else round(relevance, 4)
