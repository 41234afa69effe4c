"""The schemas of the API's bodies in OpenAPI 3.1 (`components/schemas`), which the
paths of `crawler.web.openapi` refer to by name."""

from __future__ import annotations

from typing import Any

from crawler.web.routes import MAX_SEEDS

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
