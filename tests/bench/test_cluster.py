"""The cluster benchmark's own arithmetic (`bench/cluster.py`): nginx's log counted, the
hand-overs, medians and ratios. Nothing here is timed."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.bench.scripts import load_script


@pytest.fixture(scope="module")
def cluster() -> ModuleType:
    return load_script("cluster.py")


def line(host: str, path: str, status: int = 200) -> str:
    stamp = "[23/Nov/2026:09:24:36 +0000]"
    return f'127.0.0.1 {stamp} {host} "GET {path} HTTP/1.1" {status} 3927 0.000'


def test_the_log_counts_requests_robots_and_urls_asked_again(cluster: ModuleType) -> None:
    lines = [
        line("127.0.0.11", "/robots.txt"),
        line("127.0.0.12", "/robots.txt"),
        line("127.0.0.11", "/a.html"),
        line("127.0.0.11", "/dir", 301),
        line("127.0.0.11", "/dir/"),
        line("127.0.0.12", "/a.html"),  # another host's page of the same path
        line("127.0.0.11", "/a.html"),  # asked again
        line("127.0.0.11", "/robots.txt"),  # robots.txt again is not a page again
        line("127.0.0.11", "/gone.html", 404),
        "a line nginx did not write",
    ]
    counts = cluster.count_log(lines)
    assert counts.requests == 9
    assert counts.statuses == {"200": 7, "301": 1, "404": 1}
    assert counts.robots == 3
    assert counts.repeated == 1


def test_hand_overs_are_the_claims_beyond_each_hosts_first(cluster: ModuleType) -> None:
    assert cluster.handovers([8], 8) == 0  # one daemon took every host once
    assert cluster.handovers([8, 4, 2], 8) == 6  # six hosts went to a second holder
    assert cluster.handovers([0, 0], 0) == 0


def test_the_busiest_daemons_share(cluster: ModuleType) -> None:
    assert cluster.top_share([300, 100]) == 0.75
    assert cluster.top_share([0, 0, 50, 0]) == 1.0
    assert cluster.top_share([0, 0]) is None


def test_medians_and_ratios_against_the_fewest_daemons(cluster: ModuleType) -> None:
    def run(pages_per_second: float, daemon_ms: float) -> dict[str, float]:
        return {
            "pages_per_second": pages_per_second,
            "late_pages_per_second": pages_per_second / 2,
            "daemon_cpu_ms_per_page": daemon_ms,
            "postgres_cpu_ms_per_page": 1.0,
        }

    one = cluster.summarize([run(10, 3), run(30, 5), run(20, 4)])
    two = cluster.summarize([run(40, 9), run(30, 7)])
    assert one["runs"] == 3
    assert one["pages_per_second"] == 20
    assert two["pages_per_second"] == 35
    assert two["pages"] is None
    rows = cluster.with_ratios({2: two, 1: one})
    assert list(rows) == [1, 2]
    assert rows[1]["speedup"] == 1.0
    assert rows[2]["speedup"] == pytest.approx(35 / 20)
    assert rows[2]["late_speedup"] == pytest.approx(35 / 20)
    assert rows[2]["cpu_ratio"] == pytest.approx((8 + 1) / (4 + 1))
