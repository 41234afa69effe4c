"""The response processor (the papers' indexing engine): parse, score, and hand to storage.

Its time per page is the service rate the fetcher pool models estimate. The analysis of
a page (parse, count) runs here or in a worker process (`crawler.process.analysis_pool`);
relevance weighting and link estimates use the one online TF-IDF model, here.

Most links a page shows are known already (a site's navigation, its indexes): the links
the processor hands to storage are remembered (`KnownUrls`), and a later page's links
to them are left out before they are read, counted, scored or written; the database
would have found them known. The count of links in scope includes them. A relevant
page's known links are not lost on the frontier, though: each still queued with a lower
estimate rises to what the page's relevance alone gives a link of it (the parent's share
of `TopicScorer.estimate_links`), so a URL first found on a poor page and then on a good
one ranks as the good one's link would at least.

A page whose main text is within a few bits of a stored page's
(`crawler.process.near_duplicates`) is stored as its near-duplicate: its relevance is
recorded, but it earns the frontier no reward (`crawler.frontier.feedback`), adds nothing
to the topic's feedback and raises no known link, which the first page did. With
`languages` given, a page in another language is stored, its language recorded, and its
links are not followed; a page whose language is not known (too little text) is.

A sitemap's URLs (`sitemap_links`) meet the scope, the URL filters and the known URLs as
a page's links do, and are estimated as links with no anchor or context: by their URL's
words, with the estimate of the URL whose visit read the sitemap (what the crawl
expected of the host) for their parent's relevance.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from yarl import URL

import storage
from crawler.fetch.deciding import NO_TRIES_LEFT, Facts, decide
from crawler.fetch.sitemaps import SitemapRead
from crawler.fetch.visit import Visit
from crawler.net.known_urls import KnownUrls
from crawler.net.scope import LinkScope, Scope
from crawler.net.urls import BadUrlError, LinkResolver, canonical, host_key
from crawler.outcomes import Outcome
from crawler.process.analysis_worker import AnalysisJob
from crawler.process.canonical import Canonical
from crawler.process.near_duplicates import NearDuplicates
from crawler.process.parse import ContentError, PageAnalysis, analyze
from crawler.process.visit_records import page_captures, reached
from crawler.store.records import PageSignature, PageWrite
from policies import LinkContext, TopicScorer
from policies.relevance import Rows
from policies.terms import link_text

UNREADABLE = (ContentError, ValueError, UnicodeError)  # a body analyze cannot read


@dataclass(frozen=True, slots=True)
class Processed:
    write: PageWrite
    outcome: Outcome  # may differ from the visit's, as what processing found decides
    relevance: float | None


class Processor:
    def __init__(
        self,
        *,
        scorer: TopicScorer,
        scope: Scope,
        store_text: bool,
        relevance_threshold: float,
        link_contexts: bool = False,
        near_duplicates: NearDuplicates | None = None,
        languages: frozenset[str] = frozenset(),
    ) -> None:
        self.scorer = scorer
        self.near_duplicates = near_duplicates  # None: no page is a near-duplicate
        self.languages = languages  # the pages whose links are followed; empty: all
        self.scope = scope
        self.store_text = store_text
        self.relevance_threshold = relevance_threshold
        # each new link's words handed on to the frontier, for a policy that reads them
        self.link_contexts = link_contexts
        self.resolver = LinkResolver()
        self.known = KnownUrls()
        self.link_scope = LinkScope(scope)

    def analysis_job(self, visit: Visit) -> AnalysisJob | None:
        """The page to analyse, if the visit brought one."""
        response = visit.response
        if visit.outcome is not Outcome.OK or response is None or response.body is None:
            return None
        return AnalysisJob(
            response.body,
            url=visit.final_url or visit.candidate.url,
            charset=response.charset,
            x_robots_tag=response.x_robots_tag,
            depth=visit.candidate.depth + 1,
            link=response.link,
        )

    def process(self, visit: Visit) -> Processed:
        """The whole of a page's processing, here: analysed, then scored."""
        job = self.analysis_job(visit)
        return self.score(visit, None if job is None else self.analyse(job))

    def analyse(self, job: AnalysisJob) -> PageAnalysis | None:
        """The page analysed here, links known already left out; None if unreadable."""
        try:
            return analyze(
                job.body,
                url=job.url,
                charset=job.charset,
                x_robots_tag=job.x_robots_tag,
                counter=self.scorer.counter_.hasher,
                link=job.link,
                resolver=self.resolver,
                known=self.known,
                scope=self.link_scope,
                depth=job.depth,
            )
        except UNREADABLE:
            return None

    def finish(
        self, visit: Visit, analysis: PageAnalysis | None, canonical: Canonical | None = None
    ) -> Processed:
        """Score a worker process's analysis. A worker does not know the links made
        known here while it analysed the page: they are left out now."""
        if analysis is not None:
            analysis = self._without_known(analysis)
        return self.score(visit, analysis, canonical)

    def score(
        self, visit: Visit, analysis: PageAnalysis | None, canonical: Canonical | None = None
    ) -> Processed:
        """Score an analysed page and make its write; with no analysis, an OK visit's
        page could not be read (BAD_CONTENT). With its `canonical` URL claimed, the page
        is stored under it, or is a variant of it."""
        facts = Facts(
            met=visit.outcome,
            unreadable=analysis is None,
            variant=canonical is not None and canonical.variant,
        )
        outcome = decide(facts, max_retries=NO_TRIES_LEFT).outcome
        fetched_at = None if visit.fetched_at is None else visit.fetched_at.timestamp()
        if outcome is Outcome.NOT_MODIFIED:
            signature = PageSignature(fetched_at=fetched_at)
            write = PageWrite(
                visit.candidate,
                None,
                signature=signature,
                reached=reached(visit),
                captures=page_captures(visit),
            )
            return Processed(write, outcome, None)
        if outcome is Outcome.CANONICAL_VARIANT and canonical is not None:
            return self._variant(visit, canonical, outcome, fetched_at)
        response = visit.response
        relevance: float | None = None
        links: list[storage.NewUrl] = []
        links_in_scope = 0
        contexts: dict[str, LinkContext] = {}
        raise_known = None
        title = text = None
        near_duplicate_of = None
        if analysis is not None:
            counts = Rows.of(analysis.counts)  # the page's row, then its links' (`_new_links`)
            page_counts = counts.rows(0, 1)
            self.scorer.partial_fit_counts(page_counts)
            relevance = float(self.scorer.score_counts(page_counts)[0])
            near_duplicate_of = self._near_duplicate_of(visit.candidate.url_id, analysis)
            rewarded = relevance >= self.relevance_threshold and near_duplicate_of is None
            if rewarded:
                self.scorer.add_feedback(page_counts)
            followed = self._follows(analysis)
            if followed:
                links = self._new_links(visit, analysis, counts, relevance)
            if rewarded and followed and analysis.known_links:
                raise_known = storage.ScoreRaise(
                    analysis.known_links, self.scorer.parent_share(relevance)
                )
            links_in_scope = len(links)
            if followed and self.scope.allows_depth(visit.candidate.depth + 1):
                links_in_scope += analysis.known  # each passed the rest once
            if self.link_contexts:
                contexts = {
                    link.url: LinkContext(link.anchor, link.around, analysis.headings)
                    for link in analysis.links
                }
            if not analysis.noindex:
                title = analysis.title
                text = analysis.text if self.store_text else None
        elif outcome is Outcome.REDIRECT_QUEUED and visit.final_url is not None:
            target, parent = visit.final_url, visit.candidate  # a link to where it leads
            host = host_key(URL(target, encoded=True))
            links = [storage.NewUrl(target, host, parent.depth, parent.score, parent.url)]

        record = _fetch_record(
            visit,
            outcome,
            canonical_url=None if canonical is None else canonical.url,
            relevance=relevance,
            title=title,
            text=text,
            simhash=None if analysis is None else analysis.simhash,
            near_duplicate_of=near_duplicate_of,
            language=None if analysis is None else analysis.language,
        )
        signature = PageSignature(fetched_at=fetched_at)
        if analysis is not None and response is not None:
            signature = PageSignature(
                response.etag, response.last_modified, analysis.fingerprint, fetched_at
            )
        write = PageWrite(
            visit.candidate,
            record,
            links,
            signature,
            reached(visit, canonical),
            page_captures(visit),
            contexts,
            links_in_scope,
            raise_known,
        )
        for link in links:  # handed to storage with the page, once nothing can fail
            self.known.add(link.url)
        return Processed(write, outcome, relevance)

    def _variant(
        self, visit: Visit, canonical: Canonical, outcome: Outcome, fetched_at: float | None
    ) -> Processed:
        """A variant of a page fetched already: recorded and counted, not stored again
        (no title, text or relevance), its links not followed."""
        record = _fetch_record(visit, outcome, canonical_url=canonical.url)
        write = PageWrite(
            visit.candidate,
            record,
            signature=PageSignature(fetched_at=fetched_at),
            reached=reached(visit),
            captures=page_captures(visit),
        )
        return Processed(write, outcome, None)

    def sitemap_links(
        self, read: SitemapRead, *, depth: int, parent_score: float
    ) -> list[storage.NewUrl]:
        """The URLs of a sitemap in scope and not known yet, at `depth`, estimated. A URL
        of another host than the sitemap's is kept only where the scope names domains
        (the protocol has a sitemap list its own host's URLs)."""
        if not read.entries or not self.scope.allows_depth(depth):
            return []
        hosts: dict[str, str] = {}
        for entry in read.entries:
            try:
                url = canonical(entry.loc)
            except BadUrlError:
                continue
            if url in hosts or url in self.known:
                continue
            host = self.link_scope.host(url, depth)
            if host is None or (host != read.host and not self.scope.domains):
                continue
            hosts[url] = host
        if not hosts:
            return []
        counts = self.scorer.counter_.count([link_text("", url) for url in hosts])
        scores = self.scorer.estimate_links(counts, parent_score).tolist()
        links = [
            storage.NewUrl(url, host, depth, score, read.url)
            for (url, host), score in zip(hosts.items(), scores, strict=True)
        ]
        for link in links:
            self.known.add(link.url)
        return links

    def _near_duplicate_of(self, url_id: int, analysis: PageAnalysis) -> int | None:
        """The id of the stored page this one nearly repeats; a page that repeats none
        joins the index, as the page its near-duplicates will name."""
        if self.near_duplicates is None or analysis.simhash is None:
            return None
        found = self.near_duplicates.find(analysis.simhash, url_id)
        if found is None:
            self.near_duplicates.add(url_id, analysis.simhash)
        return found

    def _follows(self, analysis: PageAnalysis) -> bool:
        """Whether the page's links are followed: it is in one of `languages`, or its
        language is not known."""
        language = analysis.language
        return not self.languages or language is None or language in self.languages

    def _new_links(
        self, visit: Visit, analysis: PageAnalysis, counts: Rows, relevance: float
    ) -> list[storage.NewUrl]:
        """The page's links (all in scope: the analysis left the others out), scored."""
        if not analysis.links and not analysis.known:
            return []
        depth = visit.candidate.depth + 1
        n = len(analysis.links)
        scores = self.scorer.estimate_links(counts.rows(1, 1 + n), relevance, counts.rows(1 + n))
        parent = visit.candidate.url
        return [
            storage.NewUrl(link.url, link.host, depth, score, parent)
            for link, score in zip(analysis.links, scores.tolist(), strict=True)
        ]

    def _without_known(self, analysis: PageAnalysis) -> PageAnalysis:
        known = [link.url in self.known for link in analysis.links]
        if not any(known):
            return analysis
        keep = [index for index, is_known in enumerate(known) if not is_known]
        n = len(analysis.links)
        return dataclasses.replace(
            analysis,
            links=tuple(analysis.links[index] for index in keep),
            counts=analysis.counts.take(
                [0, *(1 + index for index in keep), *(1 + n + index for index in keep)]
            ),
            known_links=(
                *analysis.known_links,
                *(analysis.links[index].url for index, is_known in enumerate(known) if is_known),
            ),
        )


def _fetch_record(
    visit: Visit,
    outcome: Outcome,
    *,
    relevance: float | None = None,
    title: str | None = None,
    **page: Any,
) -> storage.FetchRecord:
    """The record of `visit`'s fetch; a stored page adds its relevance, title and the
    rest of `page` (text, canonical URL, SimHash, language)."""
    response = visit.response
    return storage.FetchRecord(
        url_id=visit.candidate.url_id,
        final_url=visit.final_url,
        status=visit.status,
        content_type=None if response is None else response.content_type,
        content_length=None if response is None else response.size,
        relevance=relevance,
        title=title,
        fetched_at=visit.fetched_at or storage.utc_now(),
        error=outcome.error,
        **page,
    )
