"""The daemon's HTTP server in a process of its own: the API, the web page, /metrics and
/healthz on the daemon's port. A crawl at full speed keeps its process's interpreter
busy (analysis, scoring, batches written), and a server on a thread of that process
waited for it: the status's p95 was 67 ms and a search's 95 ms beside such a crawl,
where a server in another process answers in under a millisecond (`python -m bench
api`). So this process serves the collection itself, from a database engine of its
own, and passes the engine's part (status, pause, resume, seeds) and /metrics and
/healthz on to the crawl's process, which serves them on a Unix socket
(`crawler.web.crawl_link`).

    python -m crawler.web.server_process

reads its settings as one JSON line on standard input, answers one line on standard
output (`{"ready": true}`, or `{"error": ..., "errno": ...}`), and ends when its
standard input closes: when the crawl stops, or its process dies."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from dataclasses import asdict, dataclass

from aiohttp import ClientError, web

from crawler.telemetry.metrics_server import cannot_serve

log = logging.getLogger(__name__)

STARTUP = 60.0  # seconds the process may take to answer on its port
STOP = 10.0  # seconds it may take to end once asked to


@dataclass(frozen=True)
class ServerSettings:
    host: str
    port: int
    socket_path: str  # where the crawl's process serves the engine's part
    db_url: str
    token: str | None
    host_names: tuple[str, ...]


class ServerProcess:
    """The crawl's handle on the server process."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._process: asyncio.subprocess.Process | None = None
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the process and wait until it serves; an OSError naming the address if
        it cannot."""
        self._process = process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        # the settings (the token among them) go through the pipe, not the command line
        process.stdin.write(json.dumps(asdict(self.settings)).encode() + b"\n")
        try:
            await process.stdin.drain()
            line = await asyncio.wait_for(process.stdout.readline(), STARTUP)
        except (TimeoutError, OSError):
            line = b""
        answer = _answer(line)
        if "error" in answer:
            await self.stop()
            where = f"{self.settings.host}:{self.settings.port}"
            raise OSError(answer.get("errno"), cannot_serve(where, str(answer["error"])))
        self._watch = asyncio.create_task(self._say_if_it_ends(process))

    async def _say_if_it_ends(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if self._process is process:  # not stopped by the crawl
            log.error(
                "the daemon's HTTP server process ended (exit code %s): the API, the web "
                "page and /metrics do not answer until the crawl is started again",
                code,
            )

    async def stop(self) -> None:
        process, self._process = self._process, None
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()  # its sign to end
        try:
            await asyncio.wait_for(process.wait(), STOP)
        except TimeoutError:
            process.kill()
            await process.wait()
        except asyncio.CancelledError:
            process.kill()  # the crawl is cancelled while stopping: end it at once
            raise


async def serve(settings: ServerSettings) -> None:
    from crawler.web.app import build_app
    from crawler.web.collection import Collection
    from crawler.web.crawl_link import CrawlLink

    crawl = CrawlLink(settings.socket_path)
    collection = Collection(db_url=settings.db_url, token=settings.token)
    app = build_app(collection, crawl, host_names=settings.host_names)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        try:
            await crawl.open()
            await web.TCPSite(runner, settings.host, settings.port).start()
        except OSError as error:
            _say({"error": error.strerror or str(error), "errno": error.errno})
            return
        except ClientError as error:
            _say({"error": f"the crawl does not answer: {error}"})
            return
        _say({"ready": True})
        # standard input closes when the crawl stops, or its process dies
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)
    finally:
        await runner.cleanup()


def _answer(line: bytes) -> dict[str, object]:
    """The process's first line: ready, or the error it met."""
    try:
        answer = json.loads(line)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return {"error": f"the server process did not start (it said {line[:200]!r})"}
    return answer


def _say(answer: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def main() -> None:
    # the crawl's process takes the terminal's Ctrl-C, and closes this one's input
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    raw = json.loads(sys.stdin.buffer.readline())
    settings = ServerSettings(**raw | {"host_names": tuple(raw["host_names"])})
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
