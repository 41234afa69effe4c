"""The crawl's lifecycle and dispatch: the engine, where the crawl is built, the
hosts ready to ask, the visits in flight, the checkpoints that let a crawl resume
and the leases of a shared crawl."""
