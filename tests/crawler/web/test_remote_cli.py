"""`crawler seeds add`, `crawler pause` and `crawler resume`: a running daemon steered
from the command line, and each way it can go wrong said plainly."""

from __future__ import annotations

import asyncio

import pytest

from crawler.cli import main
from testbed.demo import free_port
from tests.crawler.helpers import SEEN, html, serving, site
from tests.crawler.web.daemon import TOKEN, chain, running_daemon, wait_for

ROUTES = {
    "/": html('<html><head><title>Start</title></head><body><a href="/chain/0">go</a></body>'),
    "/chain/{n}": chain(),
}


async def crawler(*argv: str) -> int:
    """`crawler ARGV` in a thread: the daemon answers on this test's loop meanwhile."""
    return await asyncio.to_thread(main, list(argv))


async def test_seeds_add_pause_and_resume(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CRAWLER_API_TOKEN", TOKEN)
    other = site({"/new": html("<html><head><title>New</title></head><body>x</body></html>")})
    async with serving(other) as other_base, running_daemon(db_url, ROUTES) as daemon:
        assert await crawler("pause", "--api", daemon.api) == 0
        assert "paused" in capsys.readouterr().out
        assert (await daemon.status())["state"] == "paused"

        url = other_base + "new"
        assert await crawler("seeds", "add", url, daemon.base, "--api", daemon.api) == 0
        out = capsys.readouterr().out
        assert f"queued {url}" in out
        assert f"known {daemon.base}" in out

        assert await crawler("resume", "--api", daemon.api + "/") == 0
        assert "running" in capsys.readouterr().out

        async def asked() -> bool:
            return "/new" in other[SEEN].paths()

        await wait_for(asked, "fetched the seed added")


async def test_the_ways_it_goes_wrong_are_said(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("CRAWLER_API_TOKEN", TOKEN)
    assert await crawler("pause", "--api", nobody) == 1
    assert f"no daemon answers at {nobody}" in capsys.readouterr().err

    async with running_daemon(db_url, ROUTES) as daemon:
        assert await crawler("seeds", "add", "ftp://x/", "--api", daemon.api) == 1
        err = capsys.readouterr().err
        assert "none was queued" in err
        assert "ftp://x/: not a crawlable URL" in err

        monkeypatch.setenv("CRAWLER_API_TOKEN", "not-the-token-at-all")
        assert await crawler("pause", "--api", daemon.api) == 1
        assert "the daemon refused the token in CRAWLER_API_TOKEN" in capsys.readouterr().err

        monkeypatch.delenv("CRAWLER_API_TOKEN")
        with pytest.raises(SystemExit) as exit_:
            await crawler("resume", "--api", daemon.api)
        assert exit_.value.code == 2
        assert "set CRAWLER_API_TOKEN" in capsys.readouterr().err
        assert (await daemon.status())["state"] == "running"

    monkeypatch.setenv("CRAWLER_API_TOKEN", TOKEN)
    async with running_daemon(db_url, ROUTES, token=None) as daemon:
        assert await crawler("pause", "--api", daemon.api) == 1
        assert "started without an API token" in capsys.readouterr().err

    with pytest.raises(SystemExit):
        await crawler("pause", "--api", "ftp://127.0.0.1:1")
    assert "--api must be http://HOST:PORT" in capsys.readouterr().err
