"""The API described in OpenAPI 3.1, written by hand beside the handlers
(`crawler.web.control`, `crawler.web.collection`): its paths here, the bodies' schemas
in `crawler.web.openapi_schemas`; a test validates it and checks it names every route."""

from __future__ import annotations

from typing import Any

from crawler import __version__
from crawler.web.openapi_schemas import SCHEMAS
from crawler.web.requests import MAX_BODY
from crawler.web.routes import MAX_HITS, PREFIX


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


ERROR = _ref("Error")
BAD_REQUEST = _json(ERROR, "bad input: bad JSON, an unknown field, a wrong type, too large")
REFUSED = {
    "401": _json(ERROR, "no token, or a wrong one"),
    "403": _json(ERROR, "the daemon was started without an API token: it takes no changes"),
}
STATUS = {"200": _json(_ref("Status"), "the crawl's status after the change")}


def _change(summary: str, description: str) -> dict[str, Any]:
    return {
        "summary": summary,
        "description": description,
        "security": [{"bearer": []}],
        "responses": {**STATUS, "400": BAD_REQUEST, **REFUSED},
    }


def _query(name: str, schema: dict[str, Any], description: str, *, required: bool = False):
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


def openapi_document() -> dict[str, Any]:
    empty = {"required": False, "content": {"application/json": {"schema": _ref("Empty")}}}
    paths: dict[str, Any] = {
        f"{PREFIX}/status": {
            "get": {
                "summary": "The crawl at a glance",
                "responses": {"200": _json(_ref("Status"), "this run's figures")},
            }
        },
        f"{PREFIX}/seeds": {
            "post": {
                "summary": "Queue URLs as seeds",
                "description": "Queued at once, as seeds given at start are: canonical, at "
                "depth 0, within the crawl's scope (the start's seeds' hosts, or "
                "allowed_domains, and the URL filters). If any URL is invalid none is "
                "queued, and the answer names each.",
                "security": [{"bearer": []}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("Seeds")}},
                },
                "responses": {
                    "200": _json(_ref("SeedsQueued"), "the URLs queued and those known"),
                    "400": BAD_REQUEST,
                    **REFUSED,
                    "503": _json(ERROR, "the database cannot be written"),
                },
            }
        },
        f"{PREFIX}/pause": {
            "post": {
                **_change(
                    "Stop dispatching",
                    "The visits in flight finish and are stored; nothing new is fetched "
                    "until resumed. A paused daemon with nothing left to do waits.",
                ),
                "requestBody": empty,
            }
        },
        f"{PREFIX}/resume": {
            "post": {**_change("Dispatch again", "Undoes a pause."), "requestBody": empty}
        },
        f"{PREFIX}/search": {
            "get": {
                "summary": "Search the stored pages (as `crawler search`)",
                "parameters": [
                    _query("q", {"type": "string"}, "words all hits hold", required=True),
                    _query(
                        "limit",
                        {"type": "integer", "minimum": 1, "maximum": MAX_HITS, "default": 10},
                        "hits, at most",
                    ),
                    _query(
                        "min_relevance",
                        {"type": "number", "minimum": 0, "maximum": 1},
                        "only pages this relevant or more",
                    ),
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "query": {"type": "string"},
                                "hits": {"type": "array", "items": _ref("Hit")},
                            },
                        },
                        "the hits, best first",
                    ),
                    "400": BAD_REQUEST,
                },
            }
        },
        PREFIX + "/pages/{id}": {
            "get": {
                "summary": "A page: its fetch, main text and outlinks",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {
                    "200": _json(_ref("Page"), "the page"),
                    "400": BAD_REQUEST,
                    "404": _json(ERROR, "no fetched page has this id"),
                },
            }
        },
        PREFIX + "/pages/{id}/label": {
            "post": {
                "summary": "Label a page relevant to the topic or not",
                "description": "The topic model learns from the labels. Labelling a page "
                "again replaces its label. A page can be labelled once stored with its text.",
                "security": [{"bearer": []}],
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("Label")}},
                },
                "responses": {
                    "200": _json(_ref("Labelled"), "the label saved"),
                    "400": BAD_REQUEST,
                    **REFUSED,
                    "404": _json(ERROR, "no page with this id is stored with its text"),
                },
            }
        },
        f"{PREFIX}/pages": {
            "get": {
                "summary": "The pages worth labelling next",
                "description": "Unlabelled pages whose relevance lies nearest the crawl's "
                "relevance threshold (the topic model least sure of them), nearest first.",
                "parameters": [
                    _query(
                        "sort",
                        {"type": "string", "enum": ["uncertain"]},
                        "the order",
                        required=True,
                    ),
                    _query(
                        "limit",
                        {"type": "integer", "minimum": 1, "maximum": MAX_HITS, "default": 10},
                        "pages, at most",
                    ),
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {"pages": {"type": "array", "items": _ref("Uncertain")}},
                        },
                        "the pages, the least sure first",
                    ),
                    "400": BAD_REQUEST,
                },
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Topical crawler daemon API",
            "version": __version__,
            "description": "Steer and search a running crawl. Reading is open to whoever "
            "reaches the server; a change needs the bearer token the daemon was started "
            f"with. Bodies are JSON objects of at most {MAX_BODY} bytes; an unknown "
            "field is an error.",
        },
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
