"""The baseline: aiohttp + selectolax, fetch and extract links, nothing else.

No politeness, no robots.txt, no scoring, no storage: close to the limit of the stack.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urldefrag, urljoin

import aiohttp
from selectolax.lexbor import LexborHTMLParser


async def crawl(seeds: list[str], *, max_pages: int, concurrency: int, allowed: set[str]) -> int:
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen = set(seeds)
    for seed in seeds:
        queue.put_nowait(seed)
    fetched = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal fetched
        while fetched < max_pages:
            try:
                url = await asyncio.wait_for(queue.get(), 2.0)
            except TimeoutError:
                return
            fetched += 1
            try:
                async with session.get(url) as response:
                    if "html" not in response.headers.get("Content-Type", ""):
                        continue
                    body = await response.read()
            except aiohttp.ClientError:
                continue
            for anchor in LexborHTMLParser(body).css("a[href]"):
                link = urldefrag(urljoin(url, anchor.attributes.get("href") or ""))[0]
                host = link.split("/")[2].split(":")[0] if "://" in link else ""
                if host in allowed and link not in seen:
                    seen.add(link)
                    queue.put_nowait(link)

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return fetched
