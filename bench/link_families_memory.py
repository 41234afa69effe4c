"""Memory of the link families the Q-learning frontier holds (`policies/link_families.py`):
the Python heap they take, traced by tracemalloc, once more links are revealed than
they hold. Each page reveals `--links` new ones.

    python bench/link_families_memory.py --pages 20000 --links 20
"""

from __future__ import annotations

import argparse
import tracemalloc

from policies.link_families import LinkFamilies


def measure(pages: int, links: int) -> tuple[int, int]:
    """Links held and the bytes traced."""
    tracemalloc.start()
    families = LinkFamilies()
    first_link = 10 * pages
    for page in range(pages):
        start = first_link + links * page
        families.revealed(page, list(range(start, start + links)))
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return len(families), traced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--links", type=int, default=20, help="new links a page reveals")
    args = parser.parse_args()
    held, traced = measure(args.pages, args.links)
    print(
        f"{args.pages * args.links} links revealed, {held} held: {traced} bytes, "
        f"{traced / max(held, 1):.0f} a link"
    )


if __name__ == "__main__":
    main()
