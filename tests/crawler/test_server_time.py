"""The processor's busy and idle time, as the pool models count them, from the arrivals
and departures of an M/M/c/K queue simulated with known rates."""

from __future__ import annotations

import random

import pytest

from crawler.process.server_time import ServerTime
from policies.pool.mm1k import idle_share, stationary_probabilities


def simulate(
    *, arrival_rate: float, service_rate: float, servers: int, buffer: int, departures: int
) -> tuple[float, float]:
    """Run the queue until `departures` pages left: (mu estimated, idle share measured)."""
    rng = random.Random(7)
    now = [0.0]
    server_time = ServerTime(servers, lambda: now[0])
    pages = 0
    busy = 0.0
    left = 0
    while left < departures:
        in_service = min(pages, servers)
        total = arrival_rate + in_service * service_rate
        now[0] += rng.expovariate(total)
        if rng.random() < arrival_rate / total:
            if pages < buffer:  # at a full queue, lost
                server_time.arrival()
                pages += 1
        else:
            busy += server_time.departure()
            pages -= 1
            left += 1
    return left / busy, server_time.take_idle() / now[0]


@pytest.mark.parametrize(("servers", "load"), [(1, 0.8), (2, 0.7), (2, 1.5), (4, 1.0)])
def test_departures_over_busy_server_time_estimate_mu_and_the_idle_share_is_the_models(
    servers: int, load: float
) -> None:
    service_rate, buffer = 10.0, 8
    arrival_rate = load * servers * service_rate
    mu, idle = simulate(
        arrival_rate=arrival_rate,
        service_rate=service_rate,
        servers=servers,
        buffer=buffer,
        departures=20_000,
    )
    assert mu == pytest.approx(service_rate, rel=0.03)
    expected_idle = idle_share(stationary_probabilities(load, buffer, servers), servers)
    assert idle == pytest.approx(expected_idle, abs=0.015)


def test_time_accrues_only_while_pages_are_there_and_is_taken_once() -> None:
    now = [0.0]
    server_time = ServerTime(2, lambda: now[0])
    now[0] = 1.0  # nothing there: all idle
    server_time.arrival()
    now[0] = 3.0  # one page on two servers: 2 server-seconds busy, 1 s of idle share
    server_time.arrival()
    now[0] = 4.0  # two pages: both busy
    assert server_time.departure() == pytest.approx(2.0 + 2.0)
    now[0] = 5.5
    assert server_time.departure() == pytest.approx(1.5)
    assert server_time.take_idle() == pytest.approx(1.0 + 1.0 + 0.75)
    assert server_time.take_idle() == 0.0
    with pytest.raises(ValueError, match="at least 1 server"):
        ServerTime(0, lambda: 0.0)
