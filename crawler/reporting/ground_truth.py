"""Known graphs for replayed crawls, read from a directory of files in the ground-truth
format (`crawler testbed --ground-truth DIR` writes one):
`pages.tsv` (url, relevance), `links.tsv` (src, dst), `seeds.txt` (one URL a line).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from crawler.errors import GraphFormatError
from policies.offline.link_graph import LinkGraph


def read_graph(directory: Path) -> LinkGraph:
    """Read a ground-truth directory. Links to pages pages.tsv does not list are dropped:
    their relevance is unknown."""
    directory = Path(directory)
    for name in ("pages.tsv", "links.tsv", "seeds.txt"):
        if not (directory / name).is_file():
            raise GraphFormatError(f"{directory / name}: missing (the graph needs it)")
    by_url = read_relevance(directory / "pages.tsv")
    ids = {url: index for index, url in enumerate(by_url)}
    relevance = list(by_url.values())
    sources: list[int] = []
    targets: list[int] = []
    for _where, (src, dst) in _rows(directory / "links.tsv"):
        a, b = ids.get(src), ids.get(dst)
        if a is not None and b is not None:
            sources.append(a)
            targets.append(b)
    seeds = []
    lines = (directory / "seeds.txt").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        url = line.strip()
        if not url:
            continue
        if url not in ids:
            raise GraphFormatError(f"{directory / 'seeds.txt'}:{number}: {url} is not in pages.tsv")
        seeds.append(ids[url])
    if not seeds:
        raise GraphFormatError(f"{directory / 'seeds.txt'}: lists no seeds")
    hosts: dict[str, int] = {}
    host = [hosts.setdefault(urlsplit(url).netloc.lower(), len(hosts)) for url in ids]
    return LinkGraph.from_arrays(
        np.array(relevance),
        np.array(sources, dtype=np.int64),
        np.array(targets, dtype=np.int64),
        np.array(host),
        np.array(seeds),
    )


def read_relevance(pages_tsv: Path) -> dict[str, float]:
    """pages.tsv: each page's relevance by URL, in the file's order."""
    if not Path(pages_tsv).is_file():
        raise GraphFormatError(f"{pages_tsv}: missing")
    relevance: dict[str, float] = {}
    for where, (url, value) in _rows(Path(pages_tsv)):
        try:
            score = float(value)
        except ValueError:
            score = -1.0
        if not 0 <= score < float("inf"):
            raise GraphFormatError(f"{where}: relevance {value!r} is not a finite number >= 0")
        if url in relevance:
            raise GraphFormatError(f"{where}: {url} is listed twice")
        relevance[url] = score
    if not relevance:
        raise GraphFormatError(f"{pages_tsv}: lists no pages")
    return relevance


def _rows(path: Path) -> Iterator[tuple[str, tuple[str, str]]]:
    """(where, fields) of each line of a two-column TSV file after its header."""
    with path.open(encoding="utf-8") as lines:
        next(lines, None)
        for number, line in enumerate(lines, 2):
            line = line.rstrip("\n")
            if not line:
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                raise GraphFormatError(
                    f"{path}:{number}: expected 2 tab-separated fields, found {len(fields)}"
                )
            yield f"{path}:{number}", (fields[0], fields[1])
