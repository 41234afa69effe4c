"""A crawl's counts, defined and named once. The end-of-run summary, `crawler status`,
the report and the metrics count with these and print them under these names.

    URLs visited     every URL whose visit ended, whatever came of it
    pages fetched    visits that stored an answer without error (HTML or not, or a 304)
    relevant pages   pages fetched at or above the relevance threshold
    redirects to pages fetched already
                     not errors: the page is counted once, on the row that fetched it
    variants of pages fetched already
                     pages whose canonical URL is stored already (crawler.process.canonical):
                     not errors, and not stored again
    errors           the other visits, by kind
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from crawler.outcomes import Outcome

OUTCOMES = {outcome.value: outcome for outcome in Outcome}
LABELS = {
    "visited": "URLs visited",
    "pages": "pages fetched",
    "relevant": "relevant pages",
    "redirects_to_fetched": "redirects to pages fetched already",
    "canonical_variants": "variants of pages fetched already",
    "errors": "errors",
}
WIDTH = len(LABELS["redirects_to_fetched"]) + 2  # the names' column


def is_page(outcome: Outcome) -> bool:
    """Whether a visit with this outcome counts among the pages fetched."""
    return outcome.error is None


@dataclass(frozen=True, slots=True)
class Counts:
    visited: int = 0
    pages: int = 0
    relevant: int = 0
    redirects_to_fetched: int = 0
    canonical_variants: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # by kind, most first

    @classmethod
    def of(cls, outcomes: Mapping[str, int], *, relevant: int) -> Counts:
        """The counts of visits recorded with these outcomes (an outcome's value, or
        an error kind as the collection stores it; "ok" for any page)."""
        pages = redirects = variants = 0
        errors: dict[str, int] = {}
        for name, count in outcomes.items():
            outcome = OUTCOMES.get(name)
            if outcome is not None and is_page(outcome):
                pages += count
            elif outcome is Outcome.DUPLICATE:
                redirects += count
            elif outcome is Outcome.CANONICAL_VARIANT:
                variants += count
            else:
                errors[name] = errors.get(name, 0) + count
        ordered = dict(sorted(errors.items(), key=lambda item: (-item[1], item[0])))
        return cls(
            visited=pages + redirects + variants + sum(errors.values()),
            pages=pages,
            relevant=relevant,
            redirects_to_fetched=redirects,
            canonical_variants=variants,
            errors=ordered,
        )

    def total_lines(self, *, relevant_at: float | None = None) -> list[str]:
        """The totals as lines of text, each under its name."""
        values = {
            "visited": str(self.visited),
            "pages": str(self.pages),
            "relevant": str(self.relevant),
            "redirects_to_fetched": str(self.redirects_to_fetched),
            "canonical_variants": str(self.canonical_variants),
        }
        if relevant_at is not None:
            values["relevant"] += f" (relevance >= {relevant_at:.3f})"
        return [f"{LABELS[name]:<{WIDTH}}{value}" for name, value in values.items()]

    def error_lines(self) -> list[str]:
        """The errors by kind, most first, as lines of text."""
        if not self.errors:
            return [f"{LABELS['errors']:<{WIDTH}}none"]
        rows = [f"  {kind:<{WIDTH - 2}}{count}" for kind, count in self.errors.items()]
        return [LABELS["errors"], *rows]
