"""The real web's tools on a tiny web of two hosts written here: `bench/realweb/realweb.py
configure` and `bench/realweb/ground_truth.py` run as scripts on real files; the ground
truth is read by the crawler's readers; and, where nginx is installed, the crawler's
crawl of what nginx serves finds the pages the ground truth lists, and only those, and
the focus benchmark (`python -m bench focus`) runs its crawls on it; the page cost
benchmark ranks a tiny web's pages by their whole and main text against both truths."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from crawler.cli import main
from crawler.config import CrawlConfig
from crawler.reporting.ground_truth import read_graph
from crawler.reporting.history import read_history
from crawler.service import run_crawl

ROOT = Path(__file__).resolve().parents[2]
REALWEB = ROOT / "bench" / "realweb"
FIRST_ADDRESS = 61  # hosts 127.0.0.61 and .62, away from the testbed's first addresses

A_INDEX = """<html><head><title>Gardening</title></head><body>
<p>Roses and tulips in the garden.</p>
<a href="guide/">the guide</a> <a href="guide">the guide without its slash</a>
<a href="page.html#top">a page</a> <a href="%70age.html">the page again</a>
<a href="page.html?print=1">printable</a> <a href="missing.html">gone</a>
<a href="picture.png">a picture</a> <a href="empty/">an empty directory</a>
<a href=".html">a name that is all extension</a>
<a href="hidden.html" rel="nofollow">hidden</a> <a href="https://example.org/">away</a>
<a href="mailto:someone@example.org">mail</a> <a href="http://{b}/">the other host</a>
</body></html>"""
A_GUIDE = """<html><head><title>Compost</title>
<script>var compost = "compost compost compost";</script></head><body>
<p>Compost heaps: compost turns kitchen waste into soil.</p>
<a href="../page.html">back</a> <a href="deeper/more.html">more</a></body></html>"""
A_MORE = """<html><head><base href="/guide/"></head><body><p>Worms.</p>
<a href="index.html">the guide's index</a></body></html>"""
A_PAGE = """<html><head><style>.compost {}</style></head><body><p>Watering in summer.</p>
<script>var compost = "compost heap";</script>
<a href="/">home</a></body></html>"""
A_HIDDEN = """<html><head><meta name="robots" content="nofollow"></head><body>
<a href="orphan.html">orphan</a></body></html>"""
B_INDEX = """<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head><body>
<p>Coffee from its beans.</p><a href="/a.html">a</a></body></html>"""
B_A = """<html><body><p>Espresso.</p><a href="http://{a}/guide/">compost guide</a></body></html>"""


def free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


def write_sites(root: Path, port: int) -> tuple[Path, Path]:
    a_host, b_host = (f"127.0.0.{FIRST_ADDRESS + i}:{port}" for i in range(2))
    a, b = root / "a", root / "b"
    files = {
        a / "index.html": A_INDEX.format(b=b_host),
        a / "guide" / "index.html": A_GUIDE,
        a / "guide" / "deeper" / "more.html": A_MORE,
        a / "page.html": A_PAGE,
        a / "hidden.html": A_HIDDEN,
        a / "orphan.html": "<html><body>never linked</body></html>",
        a / "picture.png": "not HTML",
        a / ".html": "<html><body>served as application/octet-stream</body></html>",
        b / "index.html": B_INDEX,
        b / "a.html": B_A.format(a=a_host),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("iso-8859-1" if path.parent == b else "utf-8"))
    (a / "empty").mkdir()
    return a, b


def run_script(name: str, *arguments: str) -> str:
    return subprocess.run(
        [sys.executable, str(REALWEB / name), *arguments],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The state directory `configure` wrote, the ground truth's directory, the port:
    written once, as the scripts take seconds to start."""
    tmp_path = tmp_path_factory.mktemp("realweb")
    port = free_port(f"127.0.0.{FIRST_ADDRESS}")
    a, b = write_sites(tmp_path / "sites", port)
    state, truth = tmp_path / "state", tmp_path / "truth"
    run_script(
        "realweb.py",
        "configure",
        *("--dir", str(state), "--port", str(port), "--first-address", str(FIRST_ADDRESS)),
        *("--site", f"garden={a}", "--site", f"coffee={b}", "--user", "root"),
    )
    run_script(
        "ground_truth.py",
        *("--dir", str(state), "--out", str(truth), "--threshold", "0.1"),
        *("--topic", "compost=compost heap", "--topic", "coffee=caf\xe9 espresso"),
    )
    return state, truth, port


def rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()[1:]]


def relevant_pages(truth: Path) -> int:
    """How many of a ground truth's pages are relevant, by its threshold."""
    threshold = float((truth / "threshold.txt").read_text())
    return sum(float(relevance) >= threshold for _, relevance in rows(truth / "pages.tsv"))


def test_the_ground_truth_lists_the_pages_a_server_would_serve_from_the_seeds(
    web: tuple[Path, Path, int],
) -> None:
    state, truth, port = web
    a, b = (f"http://127.0.0.{FIRST_ADDRESS + i}:{port}" for i in range(2))
    assert (state / "seeds.txt").read_text().split() == [f"{a}/", f"{b}/"]
    compost = truth / "compost"
    relevance = {url: float(value) for url, value in rows(compost / "pages.tsv")}
    # "guide" redirects to "guide/"; "%70age.html" is "page.html"; fragments go; the
    # query makes another URL; a missing file, a PNG, ".html" (which nginx does not
    # serve as HTML: its extension starts after a name), an empty directory, a nofollow
    # link and what only that page links to are no pages
    assert set(relevance) == {
        f"{a}/",
        f"{a}/guide/",
        f"{a}/guide/deeper/more.html",
        f"{a}/guide/index.html",  # the base href makes "index.html" /guide/index.html
        f"{a}/page.html",
        f"{a}/page.html?print=1",
        f"{b}/",
        f"{b}/a.html",
    }
    links = {tuple(row) for row in rows(compost / "links.tsv")}
    assert (f"{a}/", f"{a}/guide/") in links
    assert (f"{a}/", f"{b}/") in links  # between hosts
    assert (f"{b}/a.html", f"{a}/guide/") in links
    assert (f"{a}/guide/", f"{a}/page.html") in links  # ".." resolved
    assert len(links) == 13
    assert (compost / "seeds.txt").read_text().split() == [f"{a}/", f"{b}/"]
    assert (compost / "topic.txt").read_text() == "compost heap\n"
    # text is the title and body without scripts and styles (page.html's are compost),
    # anchors included (b/a.html's "compost guide")
    on_topic = {url for url, value in relevance.items() if value > 0}
    assert on_topic == {f"{a}/guide/", f"{a}/guide/index.html", f"{b}/a.html"}
    assert relevance[f"{a}/guide/"] == relevance[f"{a}/guide/index.html"] > 0.1  # one file
    coffee = {url: float(value) for url, value in rows(truth / "coffee" / "pages.tsv")}
    # b/'s title "Caf\xe9" counts only if read in its meta charset, ISO-8859-1
    assert {url for url, value in coffee.items() if value > 0} == {f"{b}/", f"{b}/a.html"}
    assert (truth / "coffee" / "links.tsv").read_text() == (compost / "links.tsv").read_text()


def test_the_crawlers_readers_take_the_ground_truth(
    web: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, truth, _ = web
    graph = read_graph(truth / "compost")
    assert (graph.pages, graph.links, len(graph.seeds)) == (8, 13, 2)
    assert graph.reachable().all()
    arguments = ["experiment", "traversals", "--graph", str(truth / "compost")]
    assert main([*arguments, "--traversals", "2", "--policy", "best-first", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reachable_pages"] == 8
    assert len(report["p_over_upper"]) == 2  # one a traversal
    assert all(0 < ratio <= 1 for ratio in report["p_over_upper"])


@pytest.mark.skipif(
    shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
    reason="nginx is not installed",
)
def test_a_crawl_of_what_nginx_serves_finds_the_ground_truths_pages(
    web: tuple[Path, Path, int], tmp_path: Path, db_url: str
) -> None:
    state, truth, _ = web
    run_script("realweb.py", "start", "--dir", str(state))
    try:
        seeds = (truth / "compost" / "seeds.txt").read_text().split()
        config = CrawlConfig(
            seeds=tuple(seeds),
            topic="compost heap",
            db=db_url,
            delay=0.0,
            metrics_port=0,
            allow_private_networks=True,
            allowed_domains=tuple(f"127.0.0.{FIRST_ADDRESS + i}" for i in range(2)),
        )
        asyncio.run(run_crawl(config, registry=CollectorRegistry(), handle_signals=False))
        crawled = asyncio.run(read_history(db_url))
    finally:
        run_script("realweb.py", "stop", "--dir", str(state))
    served = (state / "logs" / "access.log").read_text()  # flushed as nginx stops
    pages = {url for url, _ in rows(truth / "compost" / "pages.tsv")}
    # every HTML page fetched (by its URL after redirects) is a page of the ground truth,
    # and every page of the ground truth was fetched
    html = {url for url, value in zip(crawled.urls, crawled.relevance, strict=True) if value >= 0}
    assert html == pages
    assert crawled.outcomes["http_error"] == 2  # missing.html (404) and empty/ (403)
    assert '/missing.html HTTP/1.1" 404' in served
    assert '/robots.txt HTTP/1.1" 200' in served
    assert '/.html HTTP/1.1" 200' in served  # fetched, and not taken for HTML
    report = ["report", "--db", db_url, "--out", str(tmp_path / "report.html")]
    truth_arguments = ["--ground-truth", str(truth / "compost"), "--truth-threshold", "0.1"]
    assert main([*report, *truth_arguments]) == 0
    assert (tmp_path / "report.html").stat().st_size > 0


@pytest.mark.skipif(
    shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
    reason="nginx is not installed",
)
def test_the_focus_benchmark_crawls_what_nginx_serves(web: tuple[Path, Path, int]) -> None:
    state, truth, _ = web
    compost = ["--ground-truth", str(truth / "compost"), "--truth-threshold", "0.1"]
    focus = [sys.executable, "-m", "bench", "focus", *compost, "--budget", "100", "--json"]
    focus += ["--policies", "bfs", "best-first", "qlearning"]
    run_script("realweb.py", "start", "--dir", str(state))
    try:
        printed = subprocess.run(focus, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    finally:
        run_script("realweb.py", "stop", "--dir", str(state))
    report = json.loads(printed)
    assert report["relevant"] == relevant_pages(truth / "compost")
    assert set(report["medians"]) == {"bfs", "best-first", "qlearning"}
    # each crawl, to the end of the tiny web, found 90% of its relevant pages
    assert all(math.isfinite(m["pages_to_90"]) for m in report["medians"].values())


def test_the_main_text_ground_truth_scores_each_page_without_its_navigation(
    tmp_path: Path,
) -> None:
    site, state = tmp_path / "site", tmp_path / "state"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><head><title>Recipes</title></head><body>"
        '<nav><a href="compost.html">Compost heap</a> <a href="soup.html">Soup</a></nav>'
        '<div class="body"><p>Bread and soup for the winter.</p></div></body></html>'
    )
    (site / "compost.html").write_text("<html><body><p>A compost heap in winter.</p></body></html>")
    (site / "soup.html").write_text("<html><body><p>Soup.</p></body></html>")
    address = FIRST_ADDRESS + 2
    port = free_port(f"127.0.0.{address}")
    run_script(
        "realweb.py",
        "configure",
        *("--dir", str(state), "--port", str(port), "--first-address", str(address)),
        *("--site", f"recipes={site}", "--user", "root"),
    )
    topic = ("--topic", "compost=compost heap")
    run_script("ground_truth.py", "--dir", str(state), *topic)
    run_script("ground_truth.py", "--dir", str(state), "--main-text", *topic)
    whole, main_only = (
        {url.rsplit("/", 1)[1]: float(value) for url, value in rows(path / "compost" / "pages.tsv")}
        for path in (state / "truth", state / "truth-main")
    )
    # the index names the topic only in its navigation
    assert whole["compost.html"] > whole[""] > 0
    assert main_only == {"": 0.0, "compost.html": main_only["compost.html"], "soup.html": 0.0}
    assert main_only["compost.html"] > 0
    # the benchmark scores each page on both texts and ranks them against both truths
    page_cost = [sys.executable, str(ROOT / "bench" / "page_cost.py"), "--dir", str(state)]
    printed = subprocess.run(
        [*page_cost, "--rank", "compost", "--json"], capture_output=True, text=True, check=True
    ).stdout
    by_truth = {row["truth"]: row for row in json.loads(printed)}
    assert set(by_truth) == {"truth", "truth-main"}
    assert by_truth["truth-main"]["pages"] == 3
    assert by_truth["truth-main"]["relevant"] == 1  # compost.html
    assert by_truth["truth-main"]["auc_main"] == by_truth["truth-main"]["r_precision_main"] == 1.0


def test_a_package_whose_html_lies_in_a_shared_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("realweb", REALWEB / "realweb.py")
    assert spec is not None
    assert spec.loader is not None
    realweb = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "realweb", realweb)  # its dataclasses look it up
    spec.loader.exec_module(realweb)
    shared = tmp_path / "doc"
    own = [shared / "pkg-doc" / "docs" / f"{name}.html" for name in ("index", *"abcdefg")]
    elsewhere = [shared / "python3-pkg" / f"{n}.html" for n in range(2)]
    others = [shared / f"other{n}" / "index.html" for n in range(30)]
    for page in own + elsewhere + others:
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<html></html>")
    # 90% of its ten files are under the directory every package's documentation shares
    with pytest.raises(SystemExit, match=r"holds 90% of the package's 10 HTML files but 40"):
        realweb.html_root([str(page) for page in own + elsewhere])
    # all under its own directory: that is its root, served from its index page
    assert realweb.html_root([str(page) for page in own]) == (str(own[0].parent), ("/",))
