"""Where the API's routes begin."""

PREFIX = "/api/v1"
