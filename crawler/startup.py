"""A crawl's start: its seeds checked, its settings and seeds recorded, its WARC files
opened after closing what a killed run left."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import socket
import uuid
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from aiohttp.abc import AbstractResolver
from sqlalchemy.ext.asyncio import AsyncEngine
from yarl import URL

import storage
from crawler import __version__
from crawler.config import ConfigError, CrawlConfig
from crawler.fetch.netguard import NetworkGuard
from crawler.net.url_filters import UrlFilters
from crawler.net.urls import BadUrlError, canonicalize, host_key
from crawler.store.warc_files import WarcArchive
from crawler.store.warc_records import WARC_VERSION

log = logging.getLogger(__name__)

SEED_SCORE = 1.0


def parse_seeds(raw_seeds: Iterable[str]) -> list[URL]:
    seeds = []
    for raw in raw_seeds:
        try:
            seeds.append(canonicalize(raw))
        except BadUrlError as error:
            raise ConfigError(f"setting 'seeds': {raw!r} is not a crawlable URL: {error}") from None
    return seeds


def check_seeds_admitted(seeds: list[URL], filters: UrlFilters) -> None:
    """A seed the URL filters refuse is an error at start: the user asked for both."""
    for seed in seeds:
        why = filters.refusal(str(seed))
        if why is not None:
            raise ConfigError(f"setting 'seeds': {seed} is refused by the URL filters: {why}")


async def check_seeds_reachable(
    seeds: list[URL], guard: NetworkGuard, resolver: AbstractResolver
) -> None:
    """A seed the network guard would refuse is an error at start, not a silent skip; so
    is a crawl none of whose seeds resolves. A seed whose name alone does not resolve is
    its URL's outcome (dns_error), said here once."""

    async def addresses(seed: URL) -> set[str] | None:
        host = (seed.raw_host or "").strip("[]")
        try:
            answers = await resolver.resolve(host, seed.port or 0, socket.AF_UNSPEC)
        except OSError as error:
            log.warning("seed %s does not resolve: %s", seed, error)
            return None
        return {answer["host"] for answer in answers}

    found = await asyncio.gather(*map(addresses, seeds))
    if seeds and all(answer is None for answer in found):
        raise ConfigError("setting 'seeds': none of the seeds' host names resolves")
    for seed, answer in zip(seeds, found, strict=True):
        if answer is not None and not any(guard.permits(address) for address in answer):
            raise ConfigError(
                f"setting 'seeds': {seed} resolves to a private or local address "
                f"({', '.join(sorted(answer))}); pass --allow-private-networks "
                "to crawl such networks"
            )


async def record_start(db: AsyncEngine, config: CrawlConfig, seeds: list[URL]) -> str:
    """Record the crawl's settings and seeds; the crawl's id, made on its first run. A
    database holds one crawl, whoever resumes or shares it: another topic is an error."""
    async with db.begin() as connection:
        meta = await storage.get_meta(connection)
        if meta.get("topic") not in (None, config.topic):
            raise ConfigError(
                "setting 'topic': this database holds a crawl of another topic "
                f"({_shorten(meta['topic'])!r}); give the same topic, or another database"
            )
        crawl_id = meta.get("crawl_id") or uuid.uuid4().hex
        await storage.set_meta(
            connection,
            {
                "topic": config.topic,
                "relevance_threshold": str(config.relevance_threshold),
                "crawl_id": crawl_id,
            },
        )
        await storage.add_urls(
            connection,
            [storage.NewUrl(str(seed), host_key(seed), 0, SEED_SCORE) for seed in seeds],
        )
    return crawl_id


def _shorten(text: str, limit: int = 60) -> str:
    words = " ".join(text.split())
    return words if len(words) <= limit else words[: limit - 3] + "..."


async def open_archive(db: AsyncEngine, config: CrawlConfig, crawl_id: str) -> WarcArchive:
    """The crawl's WARC files, after closing what a killed run of it left open."""
    assert config.warc is not None
    directory = Path(config.warc)
    try:
        await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"setting 'warc': cannot make {config.warc!r}: {error.strerror}"
        ) from None
    archive = WarcArchive(
        directory,
        prefix=config.warc_prefix,
        max_size=config.warc_max_size,
        info=warcinfo(config),
        crawl_id=crawl_id,
    )
    async with db.connect() as connection:
        committed = await storage.load_warc_files(connection)
    for name in await asyncio.to_thread(archive.recover, committed):
        log.info("closed WARC file %s, left open by a killed run", name)
    return archive


def warcinfo(config: CrawlConfig) -> dict[str, str]:
    """The warcinfo record's fields: the crawler, and the crawl's settings."""
    warcio = importlib.metadata.version("warcio")
    fields = {
        "software": f"topical-crawler/{__version__} (warcio/{warcio})",
        "format": f"WARC File Format {WARC_VERSION.removeprefix('WARC/')}",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
        "warc-format/warc-1.1/",
        "isPartOf": config.warc_prefix,
        "robots": "obey",
        "http-header-user-agent": config.user_agent,
    }
    for name, value in asdict(config).items():
        if name in ("db", "api_token"):  # a password, a token
            continue
        if name == "topic":
            value = " ".join(config.topic.split())  # one line, however long
        elif isinstance(value, tuple):
            value = " ".join(value)
        if value is not None and value != "":
            fields[f"crawler-{name.replace('_', '-')}"] = str(value)
    return fields
