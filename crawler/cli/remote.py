"""`crawler seeds add`, `crawler pause`, `crawler resume`: a running daemon steered
through its HTTP API (docs/api.md), with the token in CRAWLER_API_TOKEN (never a flag:
other local users read a command's flags)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from crawler.config import defaults
from crawler.errors import SettingsError

TOKEN_VARIABLE = "CRAWLER_API_TOKEN"
TIMEOUT = 10.0  # seconds to wait for the daemon's answer
DEFAULT_API = f"http://{defaults.METRICS_HOST}:{defaults.METRICS_PORT}"


class DaemonRefused(Exception):
    """The daemon did not do what was asked; the message says why, in words."""


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    seeds = commands.add_parser("seeds", help="seeds of a running daemon")
    actions = seeds.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="queue URLs as seeds of a running daemon, at once")
    add.add_argument("urls", nargs="+", metavar="URL", help="URLs within the crawl's scope")
    _add_api_option(add)
    add.set_defaults(handler=_seeds_add)
    for name, what in (("pause", "stop dispatching"), ("resume", "dispatch again")):
        command = commands.add_parser(
            name, help=f"a running daemon: {what} (the visits in flight finish)"
        )
        _add_api_option(command)
        command.set_defaults(handler=_change_state, path=f"/api/v1/{name}")


def _add_api_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api",
        default=DEFAULT_API,
        help=f"the daemon's server, its metrics host and port (default {DEFAULT_API}); "
        f"the token is read from {TOKEN_VARIABLE}",
    )


def _seeds_add(args: argparse.Namespace) -> int:
    answer = _ask(args.api, "/api/v1/seeds", {"urls": args.urls})
    if answer is None:
        return 1
    for url in answer["queued"]:
        print(f"queued {url}")
    for url in answer["known"]:
        print(f"known {url} (left as it is)")
    return 0


def _change_state(args: argparse.Namespace) -> int:
    answer = _ask(args.api, args.path, None)
    if answer is None:
        return 1
    print(f"{answer['state']}: {answer['in_flight']} visits in flight")
    return 0


def _ask(api: str, path: str, body: dict[str, Any] | None) -> dict[str, Any] | None:
    """The daemon's answer to a change, or None once what went wrong is said."""
    base = _base(api)
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise SettingsError(f"set {TOKEN_VARIABLE} to the API token the daemon was started with")
    try:
        return post(base + path, body, token=token)
    except DaemonRefused as refusal:
        print(f"crawler: error: {refusal}", file=sys.stderr)
        return None


def _base(api: str) -> str:
    parts = urlsplit(api)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"--api must be http://HOST:PORT, not {api!r}")
    return f"{parts.scheme}://{parts.netloc}"


def post(url: str, body: dict[str, Any] | None, *, token: str) -> dict[str, Any]:
    """POST `body` as JSON with the bearer token; the answer's JSON object."""
    data = b"" if body is None else json.dumps(body).encode()
    request = Request(url, data=data, method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urlopen(request, timeout=TIMEOUT) as response:
            return dict(json.load(response))
    except HTTPError as error:
        with error:
            raise DaemonRefused(_refusal(error.code, error.read(64 * 1024))) from None
    except (URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        base = url[: url.index("/api/")]
        raise DaemonRefused(
            f"no daemon answers at {base} ({reason}): is it running, and is this its "
            "metrics host and port?"
        ) from None
    except ValueError as error:
        raise DaemonRefused(f"{url} answered something else than JSON: {error}") from None


def _refusal(status: int, raw: bytes) -> str:
    """What a refusal means, in words, with what the daemon said."""
    try:
        answer = json.loads(raw)
        said = str(answer.get("error", answer))
    except (ValueError, AttributeError):
        said, answer = raw.decode(errors="replace")[:200], {}
    if status == 401:
        return f"the daemon refused the token in {TOKEN_VARIABLE}: {said}"
    if status == 403:
        return said  # the daemon has no token: it says how to give one
    lines = [f"the daemon answered {status}: {said}"]
    if isinstance(answer, dict):
        lines += [f"  {bad['url']}: {bad['reason']}" for bad in answer.get("invalid", [])]
    return "\n".join(lines)
