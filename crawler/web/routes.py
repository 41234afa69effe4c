"""Where the API's routes begin, and the limits its requests are held to (named here,
apart from the handlers, so the OpenAPI document reads them without importing the
engine)."""

PREFIX = "/api/v1"
MAX_SEEDS = 1_000  # URLs one request may add
MAX_HITS = 100  # a search's or a list of pages' limit, at most
