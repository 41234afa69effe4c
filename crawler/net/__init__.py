"""URL primitives every stage reads: parsing and canonical URLs, scope and filters,
tracking parameters, Link headers, robots.txt's format, the URLs known."""
