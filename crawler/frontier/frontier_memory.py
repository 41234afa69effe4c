"""The frontier's URLs in memory up to a bound, host by host; those left to the database
counted. The state alone, no I/O: `crawler.frontier.frontier_store` reads URLs back.

Every queued URL is a row in the database (state queued) from the moment it is found, so
memory need not hold them all. Memory holds each host's best URLs up to its share of the
capacity (the capacity over the hosts with queued URLs, at least `MIN_HOST_SHARE`), and
at least one URL of every host, whatever the capacity: politeness serves each host in
turn, so memory full of a few hosts' URLs would starve the crawl while the others wait
in the database. A new URL beyond its host's share, or beyond the capacity for a host
already represented, is left to the database ("spilled") and only counted. When a
host's URLs in memory run out and the database holds more of its, that host alone is
read back (its best URLs up to its share), many such hosts in one query. Visits in
flight that come back (throttled, deferred, lost at a full queue) are put back whatever
the count, keeping their tries. A refill may read a new URL between the writer's commit
and its hand-back, and may even dispatch it before the hand-back: the new URL is then
ignored, not taken for a put-back.

A host at its page budget (`crawler.frontier.host_budget`) is closed: its URLs leave
memory, new ones are not held or counted, and refills pass them by; in the database
they stay queued. A URL given back (no page came of its visit) opens its host again,
whose URLs are then read back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from crawler.frontier.host_budget import HostBudget
from policies import Candidate, PriorityFrontier

MIN_HOST_SHARE = 4  # URLs a host may hold in memory however many hosts share it


class FrontierMemory:
    """What memory holds of the frontier, what it has dispatched and what it left to the
    database, by host; `BoundedFrontier` adds the reads that bring URLs back."""

    def __init__(
        self,
        policy: PriorityFrontier,
        *,
        capacity: int,
        owner: str | None = None,
        owns: Callable[[str], bool] | None = None,
        budget: HostBudget | None = None,
    ) -> None:
        if capacity < 2:
            raise ValueError(f"the frontier's capacity must be at least 2, got {capacity}")
        self.policy = policy
        self.capacity = capacity
        self.owner = owner  # a daemon of a shared crawl: only its hosts' URLs are read
        self.owns = owns  # whether a host's URLs belong here (None: every host's)
        self.budget = budget or HostBudget(None)  # pages a host may have
        self.spilled = 0  # queued in the database only (an estimate, corrected by refills)
        self.spilled_hosts: Counter[str] = Counter()  # the same by host
        # hosts whose URLs in memory ran out while the database holds more of theirs
        self._hosts_to_read: dict[str, None] = {}
        # the URLs dispatched and not yet stored (those queued in memory, the policy
        # knows: `holds`); re-visits of stored pages are neither, and are always held
        self._dispatched: dict[int, str] = {}  # url id -> host
        # stored while a refill reads: the rows it read may still say queued
        self._stored_meanwhile: set[int] | None = None
        self._dropped: set[int] = set()  # in memory, but reached by a redirect: skipped

    def push(self, candidate: Candidate) -> None:
        """Hold a new URL or a re-visit, or leave a new URL to the database when memory
        is full."""
        url_id = candidate.url_id
        if self.owns is not None and not self.owns(candidate.host):
            return  # another daemon's host: its holder reads it from the database
        if not candidate.revisit and not self.budget.allows(candidate.host):
            return  # its host's budget is spent: the URL stays queued in the database
        if candidate.revisit:
            self.policy.push(candidate)
        elif self.policy.holds(url_id) or url_id in self._dispatched:
            return  # a refill brought it first
        elif self._has_room(candidate.host):
            self.policy.push(candidate)
        else:
            self.spilled += 1
            self.spilled_hosts[candidate.host] += 1

    def host_share(self, coming: int = 0) -> int:
        """URLs a host may hold in memory: its even share of the capacity among the
        hosts in memory and `coming` more."""
        hosts = self.policy.host_count() + coming
        return max(MIN_HOST_SHARE, self.capacity // max(hosts, 1))

    def _has_room(self, host: str) -> bool:
        """Whether memory takes another URL of `host`: always its first."""
        held = self.policy.host_size(host)
        if held == 0:
            return True
        return held < self.host_share() and len(self.policy) < self.capacity

    def put_back(self, candidate: Candidate, *, ahead: bool = False) -> None:
        """Take back a dispatched candidate not stored (throttled, deferred, or a loss),
        whatever memory holds; `ahead`: before the candidates it ranks equal with (its
        turn went to its host's robots.txt)."""
        if not candidate.revisit:
            if candidate.url_id not in self._dispatched:
                return  # already put back
            self._dispatched.pop(candidate.url_id, None)
            self._give_back(candidate.host)
            if self.owns is not None and not self.owns(candidate.host):
                return  # the host went to another daemon; the URL is queued in the database
        elif self.owns is not None and not self.owns(candidate.host):
            return
        if ahead:
            self.policy.push_ahead(candidate)
        else:
            self.policy.push(candidate)

    def pop(
        self,
        is_ready: Callable[[str], bool],
        turn_comes: Callable[[str], bool] | None = None,
    ) -> Candidate | None:
        while (
            candidate := self.policy.pop(is_ready, turn_comes)
        ) is not None and not candidate.revisit:
            self._read_back_when_out(candidate.host)
            # a refill may have read a host's URLs back as its budget ran out
            if candidate.url_id not in self._dropped and self.budget.allows(candidate.host):
                self._dispatched[candidate.url_id] = candidate.host
                if self.budget.take(candidate.host):
                    self._close(candidate.host)
                break
            self._dropped.discard(candidate.url_id)
            self.policy.forget(candidate)
        return candidate

    def _read_back_when_out(self, host: str) -> None:
        """`host`'s URLs in memory ran out: read it back if the database holds more."""
        if self.policy.host_size(host) == 0 and self.spilled_hosts.get(host, 0) > 0:
            self._hosts_to_read[host] = None

    def unpark(self, host: str) -> None:
        """`host`'s turn has come: its URLs compete again (`PriorityFrontier.pop`)."""
        self.policy.unpark(host)

    def is_parked(self, host: str) -> bool:
        return self.policy.is_parked(host)

    def drain_parked(self) -> list[str]:
        """The hosts a pop found not ready since the last call."""
        return self.policy.drain_parked()

    @property
    def waiting_for(self) -> str | None:
        """The host the last `pop` chose to wait for (the policy's patience)."""
        return self.policy.waiting_for

    def drop(self, url_ids: Iterable[int]) -> None:
        """These queued URLs were fetched as redirect targets: never dispatch them."""
        for url_id in url_ids:
            if self.policy.holds(url_id):
                self._dropped.add(url_id)
            if self._stored_meanwhile is not None:  # a refill may have read them as queued
                self._stored_meanwhile.add(url_id)

    def raise_scores(self, url_ids: Iterable[int], score: float) -> int:
        """These queued URLs' estimates rose to `score` in the database; those in memory
        rank by it now (the others will when read back). How many moved here."""
        return sum(self.policy.raise_score(url_id, score) for url_id in url_ids)

    def stored(self, url_id: int, *, page: bool = True) -> None:
        """The URL's visit is in the database: it is no longer queued. `page`: whether
        its host gave a page, of its budget."""
        host = self._dispatched.pop(url_id, None)
        if host is not None and not page and self._give_back(host):
            self._hosts_to_read[host] = None  # its URLs left memory when it closed
        if self._stored_meanwhile is not None:
            self._stored_meanwhile.add(url_id)

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self.policy.on_fetched(candidate, relevance, children)

    def _close(self, host: str) -> None:
        """`host`'s budget is spent: its URLs leave memory and are no longer counted."""
        for candidate in self.policy.drop_host(host):
            self._dropped.discard(candidate.url_id)
        self.spilled -= self.spilled_hosts.pop(host, 0)
        self._hosts_to_read.pop(host, None)

    def _give_back(self, host: str) -> bool:
        """A dispatched URL of `host` brought no page; whether that opened the host again,
        whose URLs the database holds (read back when memory has none of them)."""
        if not self.budget.give_back(host):
            return False
        self.spilled_hosts[host] += 1  # at least one: a read corrects the count
        self.spilled += 1
        return True

    def hosts(self) -> Iterator[str]:
        return self.policy.hosts()

    def __len__(self) -> int:
        """Candidates in memory."""
        return len(self.policy)

    @property
    def queued(self) -> int:
        """Candidates in memory and in the database only."""
        return len(self.policy) + self.spilled

    def busy_hosts(self) -> set[str]:
        """The hosts with a URL dispatched and not yet stored (fetching, or fetched and
        waiting for the processor or the writer): still queued in the database."""
        return set(self._dispatched.values())

    def forget(self, hosts: Iterable[str]) -> None:
        """These hosts went to another daemon: their URLs leave memory (they stay queued
        in the database)."""
        for host in hosts:
            for candidate in self.policy.drop_host(host):
                self._dropped.discard(candidate.url_id)
            self.spilled -= self.spilled_hosts.pop(host, 0)

    def resync(self, queued: dict[str, int]) -> None:
        """Take `queued` (URLs queued in the database, by host held) as the truth of what
        waits beyond memory: other daemons add URLs to these hosts."""
        in_memory = self.policy.host_sizes()
        self.spilled_hosts = Counter(
            {
                host: n - in_memory.get(host, 0)
                for host, n in queued.items()
                if self.budget.allows(host)
            }
        )
        self.spilled_hosts = +self.spilled_hosts  # the positive counts only
        self.spilled = sum(self.spilled_hosts.values())

    def spill_count(self, by_host: dict[str, int]) -> None:
        """Take these counts as the URLs queued in the database only (on a restart)."""
        by_host = {host: n for host, n in by_host.items() if self.budget.allows(host)}
        self.spilled_hosts = Counter(by_host)
        self.spilled = sum(by_host.values())

    def needs_refill(self) -> bool:
        return bool(self._hosts_to_read) or self._runs_low()

    def _runs_low(self) -> bool:
        return self.spilled > 0 and len(self.policy) < self.capacity // 2

    def _held(self, url_id: int, stored: set[int]) -> bool:
        return self.policy.holds(url_id) or url_id in self._dispatched or url_id in stored

    def _mine(self, host: str) -> bool:
        """Whether `host`'s URLs belong here (a lease given up while a refill reads, a
        budget spent)."""
        return (self.owns is None or self.owns(host)) and self.budget.allows(host)

    def _load(self, candidates: Sequence[Candidate]) -> None:
        """Hold these URLs read back, in this order."""
        for candidate in candidates:
            self._take_back(candidate.host)
        self.policy.push_many(candidates)

    def _take_back(self, host: str) -> None:
        left = self.spilled_hosts.pop(host, 0) - 1
        if left > 0:
            self.spilled_hosts[host] = left
