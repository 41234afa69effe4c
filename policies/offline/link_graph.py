"""A known web graph with known relevance, for replaying crawls over it.

Pages are numbered; each page's links are a slice of one array (compressed sparse rows),
so a graph of millions of links costs a few arrays. `crawler.reporting.ground_truth` builds one
from the testbed or reads one from files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinkGraph:
    relevance: np.ndarray  # float64 per page, >= 0
    link_start: np.ndarray  # int64, pages + 1: page p links to link_target[start[p]:start[p+1]]
    link_target: np.ndarray  # int32
    host: np.ndarray  # int32 per page: the index of its host
    seeds: np.ndarray  # int32 pages where every crawl starts

    @property
    def pages(self) -> int:
        return len(self.relevance)

    @property
    def links(self) -> int:
        return len(self.link_target)

    def links_of(self, page: int) -> np.ndarray:
        return self.link_target[self.link_start[page] : self.link_start[page + 1]]

    def reachable(self) -> np.ndarray:
        """The pages a crawl from the seeds can reach, as a boolean mask."""
        seen = np.zeros(self.pages, dtype=bool)
        seen[self.seeds] = True
        layer = np.unique(self.seeds)
        while len(layer):
            starts, ends = self.link_start[layer], self.link_start[layer + 1]
            lengths = ends - starts
            if lengths.sum() == 0:
                break
            # every link of the layer's pages, gathered without a Python loop
            offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
            targets = self.link_target[offsets + np.arange(lengths.sum())]
            layer = np.unique(targets[~seen[targets]])
            seen[layer] = True
        return seen

    @classmethod
    def from_arrays(
        cls,
        relevance: np.ndarray,
        sources: np.ndarray,
        targets: np.ndarray,
        host: np.ndarray,
        seeds: np.ndarray,
    ) -> LinkGraph:
        """A graph from its edges in any order (duplicates and self-links dropped)."""
        n = len(relevance)
        keep = sources != targets
        edges = np.unique(np.stack([sources[keep], targets[keep]]).astype(np.int64), axis=1)
        counts = np.bincount(edges[0], minlength=n)
        return cls(
            relevance=np.asarray(relevance, dtype=np.float64),
            link_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            link_target=edges[1].astype(np.int32),
            host=np.asarray(host, dtype=np.int32),
            seeds=np.unique(np.asarray(seeds, dtype=np.int32)),
        )
