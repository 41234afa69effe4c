"""A URL's visit: each host's turn and politeness, robots.txt, sitemaps, the fetcher
behind the network guard, every redirect hop, and the outcome it decides."""
