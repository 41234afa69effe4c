"""Sizing the fetcher pool while crawling: estimates in, a target number of fetchers out.

The engine reports the events of the processor's queue (a page arriving, a page done,
the processor waiting) with their durations; this keeps the rate estimates, asks the
pool policy for a target, and re-solves the policy off the event loop when the
estimates have moved, but not more often than keeps the solver within a small share of
the time (`SOLVER_SHARE`): a solve of the MDP takes a core for a tenth of a second or
more, and rates that wander across the grid's cells would otherwise keep it busy.
Politeness still decides when each host may be asked: the target
bounds the visits fetching, not those waiting for their host's turn
(`policies.pool.fetcher_pool` says how that follows from the paper).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from crawler.fetch.admission import Admission
from crawler.telemetry.metrics import CrawlerMetrics
from policies.pool.fetcher_pool import FixedPool
from policies.pool.rates import KeyedRates

log = logging.getLogger(__name__)

MIN_OBSERVATIONS = 30  # of each rate before a model is solved with it
SOLVER_SHARE = 0.02  # of the time at most spent solving: a solve of d s, none for 49 d s


class PoolControl:
    def __init__(
        self,
        policy: FixedPool,
        metrics: CrawlerMetrics,
        admission: Admission,
        *,
        buffer: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy
        self.metrics = metrics
        self.admission = admission  # where the dispatcher reads the target
        self.buffer = buffer
        self.arrivals = KeyedRates()  # per host and overall: 1 / (dispatch to arrival)
        self.services = KeyedRates()  # per host and overall: 1 / (processing time)
        self._solving: asyncio.Task[None] | None = None
        self.clock = clock
        self.next_solve_at = -math.inf  # the solver's share of the time is spent until then
        self._fell_back = False  # the MDP did not settle once: said so
        self._set_target(policy.target, queue=1)

    def arrival(self, host: str, fetch_seconds: float, *, queue: int, active: int) -> None:
        """A visit delivered its page to a queue holding `queue` pages, with `active` visits
        in flight (it included)."""
        self.arrivals.observe(host, fetch_seconds)
        self._set_target(self.policy.on_arrival(queue, active), queue)

    def departure(self, host: str, service_seconds: float, *, queue: int, active: int) -> None:
        """The processor finished a page; `queue` counted it."""
        self.services.observe(host, service_seconds)
        self._set_target(self.policy.on_departure(queue, active), queue - 1)

    def loss(self) -> None:
        """A page dropped at a full queue (the paper's loss, `full_queue = drop`)."""
        self.metrics.fetch_losses.inc()

    def blocked(self, seconds: float) -> None:
        """A page met a full queue and its fetcher waited `seconds` for room: the loss
        of the models, paid in a fetcher's time instead of a request."""
        self.metrics.fetches_blocked.inc()
        self.metrics.fetchers_blocked.inc(seconds)

    def idle(self, seconds: float) -> None:
        self.metrics.processor_idle.inc(seconds)

    def refresh(self) -> None:
        """Publish the estimates, and start a new solution if they moved enough."""
        if not (self.arrivals.fitted and self.services.fitted):
            return
        arrival, service = self.arrivals.overall, self.services.overall
        self.metrics.arrival_rate.set(arrival.rate_)
        self.metrics.arrival_rate_stddev.set(arrival.rate_std_)
        self.metrics.service_rate.set(service.rate_)
        self.metrics.service_rate_stddev.set(service.rate_std_)
        enough = min(arrival.n_observations_, service.n_observations_) >= MIN_OBSERVATIONS
        usable = all(math.isfinite(rate) and rate > 0 for rate in (arrival.rate_, service.rate_))
        if (
            enough
            and usable
            and self._solving is None
            and self.clock() >= self.next_solve_at
            and self.policy.needs_solve(arrival.rate_, service.rate_)
        ):
            self._solving = asyncio.create_task(self._solve(arrival.rate_, service.rate_))

    async def close(self) -> None:
        if self._solving is not None:
            self._solving.cancel()
            await asyncio.gather(self._solving, return_exceptions=True)

    async def _solve(self, arrival_rate: float, service_rate: float) -> None:
        started = self.clock()
        try:
            solution = await asyncio.to_thread(self.policy.solve, arrival_rate, service_rate)
        except Exception:  # keep the pool as it is; the crawl goes on
            log.exception(
                "could not size the fetcher pool for lambda %r, mu %r", arrival_rate, service_rate
            )
            return
        finally:
            self._solving = None
            ended = self.clock()
            self.next_solve_at = ended + (ended - started) * (1 / SOLVER_SHARE - 1)
        self.policy.adopt(solution)
        if solution.fallback and not self._fell_back:
            self._fell_back = True  # said once: the rates that cause it tend to stay
            log.warning(
                "the fetcher pool's MDP did not settle for lambda %.3g/s, mu %.3g/s: "
                "the static optimum stands in (target %d) while the rates stay so apart",
                arrival_rate,
                service_rate,
                self.policy.target,
            )
        self.metrics.pool_expected_cost.set(solution.cost)
        self.metrics.pool_gamma.set(solution.gamma)
        self._set_target(self.policy.target, queue=1)
        log.debug(
            "fetcher pool solved for lambda %.3g/s, mu %.3g/s: target %d",
            arrival_rate,
            service_rate,
            self.target,
        )

    def _set_target(self, target: int, queue: int) -> None:
        # never leave the processor with nothing coming: the MDP's forced activation
        self.target = max(target, 1 if queue <= 0 else 0)
        self.admission.target = self.target
        self.metrics.fetchers_target.set(self.target)
