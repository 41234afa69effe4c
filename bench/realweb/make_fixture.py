"""The tests' real-HTML fixture: one small site of the real web, its ground truth beside it.

    python bench/realweb/make_fixture.py [--package sphinx-doc] [--out tests/data/realhtml]

Walks the installed package's HTML from its start page exactly as `ground_truth.py`
walks a host of the real web (the same code: its `Web`, `score` and `write`), with the
site at the placeholder base http://realhtml.test/, and writes under --out:

- `PACKAGE.tar.xz`: the HTML files those pages are served from, by their paths under
  the package's HTML root, and nothing else (no images, scripts, style sheets or search
  index); written reproducibly (sorted, no dates or owners), so running the script
  again on the same package gives the same bytes;
- `COPYRIGHT-PACKAGE`: the package's copyright file;
- `truth/NAME/` for each topic: the ground truth in the testbed's format (`pages.tsv`,
  `links.tsv`, `seeds.txt`, `topic.txt`), its URLs on the placeholder base, which the
  tests' loader (tests/realhtml.py) replaces with the address it serves the site at.

and prints, for each topic, the relevant pages (cosine >= --threshold) and their depth:
the fewest links from the start page.
"""

from __future__ import annotations

import argparse
import io
import lzma
import shutil
import subprocess
import sys
import tarfile
from collections import Counter, deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ground_truth import Web, score, write
from realweb import PACKAGES, Host

BASE_HOST = "realhtml.test"  # a reserved name (RFC 2606): the loader replaces it
BASE = f"http://{BASE_HOST}"
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "realhtml"
DEFAULT_PACKAGE = "sphinx-doc"
# A model fitted on one site of 133 pages, each carrying the same sidebar, scores pages
# lower than one fitted on the whole real web: at ground_truth.py's 0.15 none of a
# hundred short topics tried had more than 10 relevant pages; at 0.1 these have 17 and 12.
DEFAULT_THRESHOLD = 0.1
TOPICS = {
    # the extension developer's API: extdev/ and development/, one and two links deep
    "extension-api": "sphinx extension api",
    # napoleon and its neighbours under usage/extensions/, two and three links deep
    "docstrings": "google numpy docstrings",
}


def depths(web: Web) -> dict[str, int]:
    """The fewest links from a seed to each page."""
    depth = dict.fromkeys(web.seeds, 0)
    queue = deque(web.seeds)
    while queue:
        url = queue.popleft()
        for target in web.links[url]:
            if target not in depth:
                depth[target] = depth[url] + 1
                queue.append(target)
    return depth


def write_archive(archive: Path, root: Path, files: list[Path]) -> None:
    """The files, by their paths under `root`, in a tar.xz that is the same bytes
    whenever the files are."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
            body = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(root).as_posix())
            info.size, info.mode, info.mtime = len(body), 0o644, 0
            tar.addfile(info, io.BytesIO(body))
    archive.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--package", default=DEFAULT_PACKAGE, help="one of realweb.py's")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    args = parser.parse_args()
    package = {p.name: p for p in PACKAGES}[args.package]
    root = Path(package.root)
    version = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package.name],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    web = Web([Host(BASE_HOST, 80, package.name, root, package.seeds)])
    web.walk()
    files = list(web.documents)
    args.out.mkdir(parents=True, exist_ok=True)
    archive = args.out / f"{package.name}.tar.xz"
    write_archive(archive, root, files)
    copyright_file = Path("/usr/share/doc") / package.name / "copyright"
    shutil.copyfile(copyright_file, args.out / f"COPYRIGHT-{package.name}")
    links = sum(len(targets) for targets in web.links.values())
    print(
        f"{package.name} {version}: {len(web.file_of)} pages ({len(files)} files) reachable "
        f"from {len(web.seeds)} seeds, {links} links -> {archive} "
        f"({archive.stat().st_size / 1e6:.2f} MB)"
    )
    depth = depths(web)
    print(f"pages by depth: {dict(sorted(Counter(depth.values()).items()))}")
    first: Path | None = None
    for name, by_url in score(web, TOPICS).items():
        directory = args.out / "truth" / name
        write(directory, web, by_url, TOPICS[name], first, args.threshold)
        first = first or directory / "links.tsv"
        relevant = {u: v for u, v in by_url.items() if round(v, 4) >= args.threshold}  # as written
        by_depth = Counter(depth[url] for url in relevant)
        print(
            f"{name} ({TOPICS[name]!r}): {len(relevant)} relevant (cosine >= {args.threshold})"
            f", by depth {dict(sorted(by_depth.items()))} -> {directory}"
        )
        for url, value in sorted(relevant.items(), key=lambda item: -item[1]):
            print(f"    {value:.4f}  depth {depth[url]}  {url.removeprefix(BASE)}")


if __name__ == "__main__":
    main()
