"""The baseline: aiohttp + selectolax, fetch and extract links, nothing else.

robots.txt obeyed (each host's read once, through protego, as Scrapy does); no
delay, no scoring, no storage: close to the limit of the stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from urllib.parse import urldefrag, urljoin, urlsplit

import aiohttp
from protego import Protego
from selectolax.lexbor import LexborHTMLParser

# read by the benchmark's sampler
fetched = 0  # URLs requested so far, robots.txt aside
pages: set[str] = set()  # distinct HTML pages answered with 200 (after redirects)
known: set[str] = set()  # URLs seen so far


async def crawl(seeds: list[str], *, max_pages: int, concurrency: int, allowed: set[str]) -> int:
    """Crawl until `max_pages` URLs were requested (0: no limit) or none is left; returns
    the pages."""
    global fetched, known, pages
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen = known = set(seeds)
    pages = set()
    robots: dict[str, asyncio.Task[Protego]] = {}
    for seed in seeds:
        queue.put_nowait(seed)
    fetched = 0
    limit = max_pages or math.inf
    done = asyncio.Event()

    async def read_robots(session: aiohttp.ClientSession, origin: str) -> Protego:
        try:
            async with session.get(f"{origin}/robots.txt") as response:
                body = await response.text() if response.status == 200 else ""
        except aiohttp.ClientError:
            body = ""
        return Protego.parse(body)

    async def allowed_by_robots(session: aiohttp.ClientSession, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in robots:
            robots[origin] = asyncio.create_task(read_robots(session, origin))
        return (await robots[origin]).can_fetch(url, "*")

    async def visit(session: aiohttp.ClientSession, url: str) -> None:
        try:
            async with session.get(url) as response:
                if response.status != 200 or "html" not in response.headers.get("Content-Type", ""):
                    return
                body = await response.read()
                pages.add(str(response.url))
        except aiohttp.ClientError:
            return
        for anchor in LexborHTMLParser(body).css("a[href]"):
            link = urldefrag(urljoin(url, anchor.attributes.get("href") or ""))[0]
            host = link.split("/")[2].split(":")[0] if "://" in link else ""
            if host in allowed and link not in seen:
                seen.add(link)
                queue.put_nowait(link)

    async def worker(session: aiohttp.ClientSession) -> None:
        global fetched
        while True:
            url = await queue.get()
            try:
                if fetched < limit and await allowed_by_robots(session, url):
                    fetched += 1
                    await visit(session, url)
                    if fetched >= limit:
                        done.set()
            finally:
                queue.task_done()

    async def drained() -> None:
        await queue.join()  # nothing queued and nothing being fetched: the web is done
        done.set()

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        tasks = [asyncio.create_task(worker(session)) for _ in range(concurrency)]
        tasks.append(asyncio.create_task(drained()))
        await done.wait()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return len(pages)
