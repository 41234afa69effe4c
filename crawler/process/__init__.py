"""From a fetched page to its write: the processor's queue and servers, the analysis
in worker processes (parse, clean, links, term counts), the score, and the
fetcher pool's control fed by the queue's events."""
