"""The real web's ground truth, from the HTML on disk: no crawler and no server involved.

    python bench/realweb/ground_truth.py [--dir /tmp/realweb] [--out /tmp/realweb/truth]
        [--topic NAME=TEXT ...] [--threshold 0.15] [--main-text]

Reads the hosts `realweb.py install` (or `configure`) wrote to DIR/hosts.tsv and walks
each host's HTML from its seeds as nginx would serve it: a path is percent-decoded and
looked up under the host's root; a directory's path ending in "/" serves its
index.html, one without the slash redirects to it (the link leads to the "/" URL).
Links are read as a crawler reads them (selectolax: `a[href]`, `<base href>`, no
`rel=nofollow` or meta robots nofollow, the first 5,000 distinct targets) and named with
the crawler's own `crawler.net.urls.canonicalize`, so URLs match what a crawl stores; paths
the crawler's scope refuses as traps are left out. Only HTML pages reachable from the
seeds are kept.

Each page's text (title and body, without scripts and styles) goes into one TF-IDF
model fitted on every page (scikit-learn, English stop words, sublinear term
frequency); a page's relevance to a topic is the cosine of its vector with the topic's.
A page is relevant at --threshold or above. With --main-text a page's text is its title
and main text (`crawler.process.main_text`, the text the crawler stores: without its
navigation) instead of its whole body, written to DIR/truth-main unless --out says.

Writes OUT/NAME/ for each topic in the testbed's ground-truth format: `pages.tsv` (url,
relevance), `links.tsv` (src, dst), `seeds.txt`, `topic.txt` and `threshold.txt`, which
`python -m bench focus --ground-truth`, `crawler experiment traversals --graph`,
`crawler report --ground-truth` and `crawler run
--seeds-file --topic-file` read.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import re
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from selectolax.lexbor import LexborHTMLParser
from sklearn.feature_extraction.text import TfidfVectorizer
from yarl import URL

from crawler.net.scope import looks_like_a_trap
from crawler.net.urls import BadUrlError, canonicalize
from crawler.process.main_text import main_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realweb import DEFAULT_DIR, Host, is_html, read_hosts

MAX_LINKS = 5_000  # distinct link targets a crawler keeps from one page
DEFAULT_THRESHOLD = 0.15
# Short phrases, as a crawl's topic usually is; of different reach: the first is a large
# cluster on one host (scipy.sparse) with a few pages on another (Octave), the second a
# few dozen pages spread over Java, Boost and Erlang, the third the git manual's pages.
TOPICS = {
    "sparse": "sparse matrix",
    "memory": "memory management garbage collection heap allocation",
    "git": "git branch merge rebase commit",
}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


@dataclass(slots=True)
class Document:
    """One HTML file, read once however many URLs serve it."""

    text: str
    hrefs: list[str]
    base_href: str | None


def read_document(path: Path, *, main: bool = False) -> Document:
    body = path.read_bytes()
    match = _META_CHARSET.search(body[:4096])
    charset = match.group(1).decode("ascii", "ignore") if match else "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    tree = LexborHTMLParser(body.decode(charset, errors="replace"))
    directives: set[str] = set()
    for meta in tree.css("meta[name]"):
        if (meta.attributes.get("name") or "").strip().lower() == "robots":
            content = meta.attributes.get("content") or ""
            directives |= {part.strip().lower() for part in content.split(",")}
    hrefs = []
    if not directives & {"nofollow", "none"}:
        for anchor in tree.css("a[href]"):
            if "nofollow" not in (anchor.attributes.get("rel") or "").lower().split():
                hrefs.append(anchor.attributes.get("href") or "")
    base = tree.css_first("base[href]")
    title = tree.css_first("title")
    text = ""
    if not directives & {"noindex", "none"}:
        tree.strip_tags(["script", "style", "noscript", "template"])
        body_text = tree.body.text(separator=" ") if tree.body is not None else ""
        if main:  # as the crawler keeps it: a page that is all navigation keeps it all
            body_text = main_text(tree) or body_text
        text = f"{title.text() if title is not None else ''} {body_text}"
    return Document(text, hrefs, base.attributes.get("href") if base is not None else None)


class Web:
    """The hosts' pages as nginx serves them, walked from the seeds."""

    def __init__(self, hosts: list[Host], *, main: bool = False) -> None:
        self.main = main  # each page's text is its main text
        self.hosts = {(host.address, host.port): host for host in hosts}
        self.seeds: list[str] = []
        self.file_of: dict[str, Path] = {}  # page URL -> the HTML file it serves
        self.links: dict[str, list[str]] = {}  # page URL -> page URLs it links to
        self.documents: dict[Path, Document] = {}

    def page(self, url: URL) -> tuple[str, Path] | None:
        """The URL a link to `url` ends at and the HTML file served there, or None when
        nginx would answer with no HTML page (a missing file, another type, a 403)."""
        host = self.hosts.get((url.host or "", url.port or 80))
        if host is None or looks_like_a_trap(url):
            return None
        path = url.path  # percent-decoded, as nginx looks it up
        if "\x00" in path:
            return None
        local = host.root / path.lstrip("/")
        try:
            if path.endswith("/"):
                index = local / "index.html"
                return (str(url), index) if index.is_file() else None
            if local.is_file():
                return (str(url), local) if is_html(local.name) else None
            if local.is_dir():  # nginx redirects to the path with a slash
                slashed = URL.build(
                    scheme=url.scheme,
                    authority=url.raw_authority,
                    path=url.raw_path + "/",
                    query_string=url.raw_query_string,
                    encoded=True,
                )
                return self.page(canonicalize(str(slashed)))
        except (OSError, ValueError):  # a name too long, say
            return None
        return None

    def walk(self) -> None:
        queue: deque[str] = deque()
        for host in self.hosts.values():
            for seed in host.seed_urls():
                found = self.page(canonicalize(seed))
                if found is None:
                    raise SystemExit(f"{seed}: no HTML page there ({host.root})")
                if found[0] not in self.file_of:
                    self.seeds.append(found[0])
                    self.file_of[found[0]] = found[1]
                    queue.append(found[0])
        while queue:
            url = queue.popleft()
            path = self.file_of[url]
            document = self.documents.get(path)
            if document is None:
                document = self.documents[path] = read_document(path, main=self.main)
            targets = self.links[url] = []
            for target in self.targets(URL(url, encoded=True), document):
                found = self.page(target)
                if found is None:
                    continue
                target_url, target_path = found
                if target_url not in self.file_of:
                    self.file_of[target_url] = target_path
                    queue.append(target_url)
                if target_url not in targets:
                    targets.append(target_url)

    @staticmethod
    def targets(url: URL, document: Document) -> list[URL]:
        base = url
        if document.base_href is not None:
            with contextlib.suppress(BadUrlError):
                base = canonicalize(document.base_href, base=url)
        targets: dict[str, URL] = {}
        for href in document.hrefs:
            try:
                target = canonicalize(href, base=base)
            except BadUrlError:
                continue
            targets.setdefault(str(target), target)
            if len(targets) >= MAX_LINKS:
                break
        return list(targets.values())


def score(web: Web, topics: dict[str, str]) -> dict[str, dict[str, float]]:
    """Each topic's cosine with every page, by URL, from one TF-IDF model of all pages."""
    paths = list(web.documents)
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, dtype=np.float32)
    pages = vectorizer.fit_transform(web.documents[path].text for path in paths)
    row = {path: number for number, path in enumerate(paths)}
    relevance = {}
    for name, text in topics.items():
        cosine = (pages @ vectorizer.transform([text]).T).toarray().ravel()
        relevance[name] = {url: float(cosine[row[path]]) for url, path in web.file_of.items()}
    return relevance


def write(
    directory: Path,
    web: Web,
    relevance: dict[str, float],
    topic: str,
    same_links: Path | None,
    threshold: float,
) -> None:
    """The testbed's ground-truth format (testbed.server.Testbed.write_ground_truth).
    The link graph is the same for every topic: `same_links`, if given, is a links.tsv
    written already, hard-linked rather than written again (it is some 70 MB)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "pages.tsv").open("w") as pages:
        pages.write("url\trelevance\n")
        for url in web.file_of:
            pages.write(f"{url}\t{relevance[url]:.4f}\n")
    links_tsv = directory / "links.tsv"
    links_tsv.unlink(missing_ok=True)
    if same_links is not None:
        with contextlib.suppress(OSError):  # on another file system: written again
            os.link(same_links, links_tsv)
    if not links_tsv.exists():
        with links_tsv.open("w") as links:
            links.write("src\tdst\n")
            for source, targets in web.links.items():
                for target in targets:
                    links.write(f"{source}\t{target}\n")
    (directory / "seeds.txt").write_text("\n".join(web.seeds) + "\n")
    (directory / "topic.txt").write_text(topic + "\n")
    (directory / "threshold.txt").write_text(f"{threshold}\n")  # relevant from here


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where hosts.tsv is")
    parser.add_argument("--out", type=Path, help="default: DIR/truth, or DIR/truth-main")
    parser.add_argument(
        "--topic", action="append", help="NAME=TEXT, repeatable (default: the three below)"
    )
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument(
        "--main-text", action="store_true", help="score each page's main text, not its body"
    )
    args = parser.parse_args()
    topics = dict(t.split("=", 1) for t in args.topic) if args.topic else TOPICS
    out = args.out or args.dir / ("truth-main" if args.main_text else "truth")

    web = Web(read_hosts(args.dir), main=args.main_text)
    web.walk()
    links = sum(len(targets) for targets in web.links.values())
    print(
        f"{len(web.file_of)} pages ({len(web.documents)} files) reachable from "
        f"{len(web.seeds)} seeds, {links} links"
    )
    first: Path | None = None
    for name, by_url in score(web, topics).items():
        write(out / name, web, by_url, topics[name], first, args.threshold)
        first = first or out / name / "links.tsv"
        values = np.round(np.fromiter(by_url.values(), dtype=np.float64), 4)  # as written
        relevant = int((values >= args.threshold).sum())
        hosts = sorted({URL(u).host or "" for u, v in by_url.items() if v >= args.threshold})
        print(
            f"{name}: {relevant} relevant (cosine >= {args.threshold}), max "
            f"{values.max():.3f}, on {', '.join(hosts) or 'no host'} -> {out / name}"
        )


if __name__ == "__main__":
    main()
