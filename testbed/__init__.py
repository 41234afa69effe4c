"""A synthetic topical web served on loopback, with its known relevance and link graph:
the crawler's tests, demo and benchmarks crawl it. The crawler itself never imports it;
only its command line does, for `crawler testbed`, `crawler demo` and experiments."""
