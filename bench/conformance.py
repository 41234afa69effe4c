"""The crawler's URLs and robots.txt against public conformance suites, one line a suite.

- URLs: the web-platform-tests' `urltestdata.json`, every case whose base and expected
  href are http(s) (an absolute input without a base, too) and every input the standard
  rejects against an http(s) base. An input with a base goes through `canonicalize` and,
  as a link on a page at that base, through a `LinkResolver`; both must give the
  expected href, or its crawler's form (`crawler_form`: by design), or drop a rejected
  input.
- robots.txt: google/robotstxt's `robots_test.cc` cases, each robots.txt decoded as the
  fetcher decodes a body and asked through `RobotsCache` as a visit asks it. Cases whose
  name starts `GoogleOnly_` are Google's own choices: one that fails is by design.
  Its user-agent cases check the product token the crawler names itself by.

The files are read from `../shared/conformance` beside the repository (`--data DIR`).

    python -m bench conformance [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from yarl import URL

from crawler.fetch.fetcher import Response
from crawler.fetch.robots import RobotsCache, Verdict
from crawler.net import urls
from crawler.net.robots_txt import PRODUCT_TOKEN

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "conformance"
URL_FILE, ROBOTS_FILE = "urltestdata.json", "robots_cases.json"

_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass
class Tally:
    """One suite's outcome, case by case."""

    suite: str
    cases: int = 0
    passed: int = 0
    by_design: int = 0
    wrong: int = 0
    raised: int = 0
    rejected_accepted: int = 0
    failures: list[str] = field(default_factory=list)  # what went wrong, case by case
    designs: Counter[str] = field(default_factory=Counter)  # by-design cases by reason

    def line(self) -> str:
        return (
            f"{self.suite}: {self.cases} cases, {self.passed} passed, {self.by_design} by design,"
            f" {self.wrong} wrong, {self.raised} raised,"
            f" {self.rejected_accepted} rejected-accepted"
        )


def _http(url: object) -> bool:
    return isinstance(url, str) and url.lower().startswith(("http:", "https:"))


def url_cases(data: list[Any]) -> list[dict[str, Any]]:
    """The suite's cases the crawler is held to (see the module's docstring)."""
    return [
        case
        for case in data
        if isinstance(case, dict)
        and (
            (_http(case.get("base")) and (case.get("failure") or _http(case.get("href"))))
            or (case.get("base") is None and _http(case.get("href")))
        )
    ]


def crawler_form(href: str) -> tuple[str, list[str]]:
    """A valid http(s) href in the crawler's canonical form, and the differences from
    the standard's that made it: the fragment dropped (one page, however it is linked
    to), an empty query dropped, escapes normalised (`%7E` is `~`, `%2f` is `%2F`)."""
    reasons = []
    if "#" in href:
        href, reasons = href.split("#", 1)[0], ["fragment dropped"]
    path_at = href.index("/", href.index("//") + 2)
    origin, rest = href[:path_at], href[path_at:]
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
        reasons.append("empty query dropped")
    normal = _ESCAPE.sub(_normal_escape, rest)
    if normal != rest:
        reasons.append("escapes normalised")
    return origin + normal, reasons


def _normal_escape(escape: re.Match[str]) -> str:
    char = chr(int(escape.group()[1:], 16))
    return char if char in _UNRESERVED else escape.group().upper()


def run_urls(cases: list[dict[str, Any]], module: ModuleType = urls) -> Tally:
    """The cases through `module`'s `canonicalize` and `LinkResolver` (the crawler's
    `crawler.net.urls`, or that module at another revision)."""
    tally = Tally("URLs (WHATWG urltestdata)")
    resolver = module.LinkResolver()
    for case in cases:
        tally.cases += 1
        raw, base = case["input"], case.get("base")
        try:
            answers = [_canonical_or_none(module, raw, base)]
            if base is not None:
                answers.append(resolver.resolve(raw, resolver.base(URL(base, encoded=True))))
        except Exception as error:  # a raise is what this counts
            tally.raised += 1
            tally.failures.append(f"raised {type(error).__name__}: {raw!r} against {base!r}")
            continue
        if case.get("failure"):
            if any(answer is not None for answer in answers):
                tally.rejected_accepted += 1
                tally.failures.append(f"accepted {raw!r} against {base!r} as {answers}")
            else:
                tally.passed += 1
            continue
        expected = case["href"]
        form, reasons = crawler_form(expected)
        if not raw.strip(_C0_AND_SPACE) and answers == [None, None]:
            tally.by_design += 1  # an empty href: a link to the page itself
            tally.designs["link to the page itself left out"] += 1
        elif all(answer == expected for answer in answers):
            tally.passed += 1
        elif all(answer in (expected, form) for answer in answers):
            tally.by_design += 1
            tally.designs.update(reasons)
        else:
            tally.wrong += 1
            tally.failures.append(f"{raw!r} against {base!r}: {answers}, expected {expected!r}")
    return tally


def _canonical_or_none(module: ModuleType, raw: str, base: str | None) -> str | None:
    try:
        return str(module.canonicalize(raw, None if base is None else URL(base, encoded=True)))
    except module.BadUrlError:
        return None


def run_robots(data: dict[str, Any]) -> Tally:
    tally = Tally("robots.txt (google/robotstxt)")
    for case in data["cases"]:
        tally.cases += 1
        body = case["robotstxt"]
        raw = body["text"].encode() if "text" in body else bytes.fromhex(body["hex"])
        # the crawler's settings refuse a user agent without a product token: such a
        # case cannot be asked, and counts as failed
        named = PRODUCT_TOKEN.match(case["useragent"].strip()) is not None
        try:
            right = named and robots_allows(raw, case["useragent"], case["url"]) == case["allowed"]
        except Exception as error:  # a raise is what this counts
            tally.raised += 1
            tally.failures.append(f"{case['test']}: raised {type(error).__name__}: {error}")
            continue
        if right:
            tally.passed += 1
        elif case["test"].startswith("GoogleOnly_"):
            tally.by_design += 1
            tally.designs[case["test"] if named else f"{case['test']}, no product token"] += 1
        else:
            tally.wrong += 1
            tally.failures.append(f"{case['test']}: {case['useragent']!r} {case['url']!r}")
    return tally


def robots_allows(body: bytes, user_agent: str, url: str) -> bool:
    """Whether the crawler named `user_agent` may fetch `url` under a robots.txt served
    with `body`: decoded as the fetcher decodes it, asked as a visit asks."""
    response = Response(
        url=URL("http://robots.example/robots.txt"),
        status=200,
        content_type="text/plain",
        charset=None,
        location=None,
        retry_after=None,
        x_robots_tag=None,
        etag=None,
        last_modified=None,
        body=body,
        truncated=False,
        size=len(body),
    )
    robots = RobotsCache(user_agent=user_agent, ttl=86_400.0, retry=600.0)
    entry = robots.store("robots.example", response.status, response.text(), 0.0)
    return robots.verdict(entry, url) is Verdict.ALLOW


def run_user_agents(data: dict[str, Any]) -> Tally:
    """The suite's user agents a robots.txt may name: the crawler's product token."""
    tally = Tally("robots.txt user agents")
    for case in data["user_agent_cases"]:
        tally.cases += 1
        valid = PRODUCT_TOKEN.fullmatch(case["useragent"]) is not None
        if valid == case["valid"]:
            tally.passed += 1
        elif case["test"].startswith("GoogleOnly_"):
            tally.by_design += 1
            tally.designs[case["test"]] += 1
        else:
            tally.wrong += 1
            tally.failures.append(f"{case['test']}: {case['useragent']!r}")
    return tally


def urls_at(revision: str) -> ModuleType:
    """`crawler/net/urls.py` as it is at `revision`, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{revision}:crawler/net/urls.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = ModuleType(f"urls_at_{revision}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:crawler/net/urls.py", "exec"), module.__dict__)
    return module


def run_all(data: Path, module: ModuleType = urls) -> list[Tally]:
    """Every suite whose file is in `data`, the URLs through `module`."""
    tallies = []
    if (data / URL_FILE).is_file():
        tallies.append(run_urls(url_cases(json.loads((data / URL_FILE).read_text())), module))
    if (data / ROBOTS_FILE).is_file():
        robots = json.loads((data / ROBOTS_FILE).read_text())
        tallies += [run_robots(robots), run_user_agents(robots)]
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the suites' directory")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each failure")
    parser.add_argument("--urls-at", metavar="REV", help="crawler/net/urls.py at a revision")
    args = parser.parse_args()
    tallies = run_all(args.data, urls_at(args.urls_at) if args.urls_at else urls)
    if not tallies:
        print(f"no conformance data in {args.data} ({URL_FILE}, {ROBOTS_FILE}): skipped")
        return
    for tally in tallies:
        print(tally.line())
        if tally.designs:
            print("  by design: " + ", ".join(f"{n} {why}" for why, n in tally.designs.items()))
        if args.verbose:
            for failure in tally.failures:
                print(f"  {failure}")


if __name__ == "__main__":
    main()
