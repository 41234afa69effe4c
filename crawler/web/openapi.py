"""The API described in OpenAPI 3.1, written by hand beside the handlers
(`crawler.web.api`); a test validates it and checks it names every route."""

from __future__ import annotations

from typing import Any

from crawler import __version__
from crawler.web.api import MAX_HITS, MAX_SEEDS, PREFIX
from crawler.web.requests import MAX_BODY


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


SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {"type": "string", "description": "what is wrong, in words"},
            "invalid": {
                "type": "array",
                "description": "seeds only: each URL refused and why",
                "items": {
                    "type": "object",
                    "properties": {"url": {"type": "string"}, "reason": {"type": "string"}},
                },
            },
        },
    },
    "Status": {
        "type": "object",
        "description": "this run of the daemon's figures (a resumed crawl's earlier runs "
        "are in `crawler status`)",
        "properties": {
            "state": {"type": "string", "enum": ["running", "paused"]},
            "pages": {"type": "integer", "description": "pages fetched"},
            "relevant": {"type": "integer", "description": "pages at or above the threshold"},
            "visited": {"type": "integer", "description": "URLs whose visit ended"},
            "errors": {"type": "integer", "description": "visits that ended in an error"},
            "pages_per_second": {"type": "number", "description": "visits a second, this run"},
            "hosts": {"type": "integer", "description": "hosts with URLs queued or under way"},
            "frontier": {"type": "integer", "description": "URLs queued"},
            "in_flight": {"type": "integer", "description": "visits fetching now"},
            "seconds": {"type": "number", "description": "since the daemon started"},
            "relevance_threshold": {"type": "number"},
            "changes_allowed": {
                "type": "boolean",
                "description": "whether the daemon has a token, and so takes changes",
            },
        },
    },
    "Hit": {
        "type": "object",
        "properties": {
            "id": {"type": ["integer", "null"], "description": "the page's id (pages/{id})"},
            "url": {"type": "string"},
            "title": {"type": ["string", "null"]},
            "host": {"type": "string"},
            "relevance": {"type": ["number", "null"]},
            "score": {"type": "number", "description": "text match and relevance, at most 1"},
            "snippet": {
                "type": "string",
                "description": "a passage of the text, the query's words between [ and ]",
            },
        },
    },
    "Page": {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "url": {"type": "string"},
            "title": {"type": ["string", "null"]},
            "host": {"type": "string"},
            "relevance": {"type": ["number", "null"]},
            "depth": {"type": "integer", "description": "links from a seed"},
            "text": {
                "type": ["string", "null"],
                "description": "the main text; null when the crawl keeps no texts",
            },
            "label": {
                "type": ["boolean", "null"],
                "description": "a user's label: relevant or not; null: not labelled",
            },
            "outlinks": {
                "type": "array",
                "description": "the URLs this page revealed: those the crawl first met on "
                "it (the database records the page each URL was discovered from). A link "
                "to a URL known before, from another page or as a seed, is not among them. "
                "At most 200, in the order found.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "url": {"type": "string"},
                        "visited": {"type": "boolean", "description": "false: still queued"},
                    },
                },
            },
            "more_outlinks": {"type": "boolean", "description": "it revealed more than shown"},
            "fetch": {
                "type": "object",
                "properties": {
                    "status": {"type": ["integer", "null"]},
                    "content_type": {"type": ["string", "null"]},
                    "content_length": {"type": ["integer", "null"]},
                    "fetched_at": {"type": ["string", "null"], "format": "date-time"},
                    "fetch_count": {"type": "integer"},
                    "final_url": {"type": ["string", "null"], "description": "after redirects"},
                    "error": {"type": ["string", "null"], "description": "the visit's error"},
                    "discovered_from": {
                        "type": ["string", "null"],
                        "description": "the page it was first met on; null: a seed",
                    },
                },
            },
        },
    },
    "Seeds": {
        "type": "object",
        "required": ["urls"],
        "additionalProperties": False,
        "properties": {
            "urls": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_SEEDS,
                "items": {"type": "string"},
            }
        },
    },
    "SeedsQueued": {
        "type": "object",
        "properties": {
            "queued": {"type": "array", "items": {"type": "string"}, "description": "new"},
            "known": {
                "type": "array",
                "items": {"type": "string"},
                "description": "known already (queued or visited): left as they are",
            },
        },
    },
    "Empty": {"type": "object", "additionalProperties": False, "maxProperties": 0},
    "Label": {
        "type": "object",
        "required": ["relevant"],
        "additionalProperties": False,
        "properties": {"relevant": {"type": "boolean"}},
    },
    "Labelled": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "relevant": {"type": "boolean"}},
    },
    "Uncertain": {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "url": {"type": "string"},
            "title": {"type": ["string", "null"]},
            "relevance": {"type": "number"},
            "margin": {
                "type": "number",
                "description": "how far its relevance lies from the relevance threshold",
            },
        },
    },
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
