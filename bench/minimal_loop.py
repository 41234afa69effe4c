"""The baseline: aiohttp + selectolax, fetch and extract links, nothing else.

No politeness, no robots.txt, no scoring, no storage: close to the limit of the stack.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urldefrag, urljoin

import aiohttp
from selectolax.lexbor import LexborHTMLParser

# read by the benchmark's sampler
fetched = 0  # pages requested so far
known: set[str] = set()  # URLs seen so far


async def crawl(seeds: list[str], *, max_pages: int, concurrency: int, allowed: set[str]) -> int:
    global fetched, known
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen = known = set(seeds)
    for seed in seeds:
        queue.put_nowait(seed)
    fetched = 0
    done = asyncio.Event()

    async def visit(session: aiohttp.ClientSession, url: str) -> None:
        try:
            async with session.get(url) as response:
                if "html" not in response.headers.get("Content-Type", ""):
                    return
                body = await response.read()
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
            if fetched < max_pages:
                fetched += 1
                await visit(session, url)
                if fetched >= max_pages:
                    done.set()
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
    return fetched
