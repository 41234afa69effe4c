"""A page's language, from its main text, by py3langid (a naive Bayes model over byte
n-grams that ships inside the package: nothing is downloaded). docs/crawling.md gives
its cost a page and its accuracy against lingua on real pages.

The model is loaded on the first page a process reads (some 90 MB, about 1 s of CPU),
so a process that reads none never pays for it.
"""

from __future__ import annotations

import functools
from typing import Any

from crawler.languages import LANGUAGES

SAMPLE_CHARS = 1_000  # the text's start that is read: the figures differ little beyond
MIN_CHARS = 50  # a shorter text has no language: too little to tell


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


def load_model() -> None:
    """Load the model now, where a first page's wait for it would hold others up."""
    _identifier()


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language the text's start is in; None for a text of
    fewer than `MIN_CHARS` characters, or in a language without such a code."""
    sample = text[:SAMPLE_CHARS]
    if len(sample.strip()) < MIN_CHARS:
        return None
    code, _ = _identifier().classify(sample)
    return code if code in LANGUAGES else None
