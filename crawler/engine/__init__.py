"""The crawl's lifecycle and dispatch: the engine, the fetcher pool's control, the
re-visits, and the checkpoints that let a crawl resume."""
