"""What a Python user would write instead: a Scrapy CrawlSpider that follows every link.

robots.txt obeyed, delays and throttling off, as for the other two; Scrapy's own
in-memory scheduler and duplicate filter. It stops after `max_pages` responses
(CLOSESPIDER_PAGECOUNT; 0: none). What it counts is the other two's unit: distinct HTML pages
answered with 200 (after redirects), those in flight when it stops included.
"""

from __future__ import annotations

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class FollowEverything(CrawlSpider):
    name = "follow_everything"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)
    pages: set[str] = set()  # read by the benchmark's sampler

    def parse_start_url(self, response, **kwargs):  # the seed is a page too
        return self.parse_page(response)

    def parse_page(self, response):
        content_type = response.headers.get("Content-Type", b"").decode("latin-1")
        if response.status == 200 and "html" in content_type:
            FollowEverything.pages.add(response.url)
        return []


def crawl(seeds: list[str], *, max_pages: int, concurrency: int, allowed: set[str]) -> int:
    process = CrawlerProcess(
        settings={
            "LOG_LEVEL": "WARNING",
            "ROBOTSTXT_OBEY": True,
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "DOWNLOAD_DELAY": 0,
            "AUTOTHROTTLE_ENABLED": False,
            "COOKIES_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "CLOSESPIDER_PAGECOUNT": max_pages,
            # breadth first, as the other two crawl in discovery order
            "DEPTH_PRIORITY": 1,
            "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        }
    )
    FollowEverything.pages = set()
    process.crawl(FollowEverything, start_urls=seeds, allowed_domains=sorted(allowed))
    process.start()
    return len(FollowEverything.pages)
