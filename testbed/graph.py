"""The testbed's web as a known graph, for replayed crawls over it."""

from __future__ import annotations

import numpy as np

from policies.offline.link_graph import LinkGraph
from testbed.web import TestbedWeb, WebSpec


def web_graph(spec: WebSpec) -> LinkGraph:
    """The testbed's web as a graph, seeded at its first home page as a crawl of it is."""
    web = TestbedWeb(spec)
    pages = spec.pages
    sources = np.repeat(np.arange(pages), np.diff(web.link_start))
    return LinkGraph.from_arrays(
        web.relevance.astype(np.float64), sources, web.link_target, web.host, np.array([0])
    )
