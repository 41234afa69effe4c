"""Hosts by name, as on the web: a crawl resolves them through a DNS server on loopback
(dnsmasq), each name once, a name that does not resolve is its URLs' outcome, and the
network guard judges the address a name leads to."""

from __future__ import annotations

import contextlib

from aiohttp import web
from yarl import URL

from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site
from tests.dns import dns_server


async def test_hosts_by_name_are_resolved_once_each_and_judged_by_their_address(
    db_url: str,
) -> None:
    others: list[str] = []  # the first host's links to the others, once their ports are known

    async def more(_request: web.Request) -> web.Response:
        return web.Response(text=links(*others), content_type="text/html")

    first = site({"/": html(links("/page", "/more")), "/page": html(links()), "/more": more})
    apps = [first] + [site({"/": html(links("/page")), "/page": html(links())}) for _ in "ab"]
    async with contextlib.AsyncExitStack() as stack:
        bases = [await stack.enter_async_context(serving(app)) for app in apps]
        ports = [URL(base).port for base in bases]
        names = [f"h{i}.crawl.test" for i in range(3)]
        roots = [f"http://{name}:{port}/" for name, port in zip(names, ports, strict=True)]
        gone = f"http://gone.crawl.test:{ports[0]}/"  # no such name
        metadata = f"http://meta.crawl.test:{ports[0]}/"  # a name for a refused address
        others.extend([*roots[1:], gone, metadata])
        hosts = dict.fromkeys(names, "127.0.0.1") | {"meta.crawl.test": "169.254.169.254"}
        with dns_server(hosts) as dns:
            summary = await crawl(
                db_url,
                [roots[0]],
                dns_servers=(dns.address,),
                allowed_domains=("crawl.test",),
                allow_private_networks=False,
                allowed_networks=("127.0.0.0/8",),
            )
            # one lookup a name (its A and AAAA queries), however many requests
            assert all(0 < dns.queries(name) <= 2 for name in names)
            assert dns.queries("gone.crawl.test") <= 2
    assert summary.stop_reason == "frontier exhausted"
    pages = await collection(db_url)
    for root in roots:
        assert pages[root].error is None
        assert pages[root + "page"].error is None
    assert pages[gone].error == "dns_error"
    assert pages[metadata].error == "private_network"
    for app in apps:  # robots.txt and two or three pages a host, each asked once
        paths = app[SEEN].paths()
        assert len(paths) == len(set(paths))
