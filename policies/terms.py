"""Hashed term counts of texts, with the standard library alone.

The counts are exactly scikit-learn's `HashingVectorizer`'s (lower case, its token
pattern, its English stop words, no sign, MurmurHash3 with seed 0: `mmh3`'s, which is
scikit-learn's), got more cheaply and without loading scikit-learn or SciPy: a worker
process that counts the terms of pages (`crawler.process.analysis_pool`) then holds
some 20 MB instead of 130. The words are split out of the text's UTF-8 with
`bytes.translate` and `bytes.split`; a piece holding bytes beyond ASCII goes through the
vectorizer's token pattern, as the whole text would. Each distinct word of a text is
hashed once.

The rows come out as the parts of a compressed sparse row matrix (`TermCounts`);
`policies.relevance.scorer.Rows.of` reads them with NumPy.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import mmh3

DEFAULT_N_FEATURES = 2**18
COLUMNS_MEMORY = 2**16  # words whose column a TermHasher remembers (a site's words repeat)

# scikit-learn's ENGLISH_STOP_WORDS (from the Glasgow Information Retrieval Group's
# list), which `tests/policies/test_terms.py` keeps equal to it
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every
    everyone everything everywhere except few fifteen fifty fill find fire first five for
    former formerly forty found four from front full further get give go had has hasnt have
    he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter
    latterly least less ltd made many may me meanwhile might mill mine more moreover most
    mostly move much must my myself name namely neither never nevertheless next nine no
    nobody none noone nor not nothing now nowhere of off often on once one only onto or
    other others otherwise our ours ourselves out over own part per perhaps please put
    rather re same see seem seemed seeming seems serious several she should show side since
    sincere six sixty so some somehow someone something sometime sometimes somewhere still
    such system take ten than that the their them themselves then thence there thereafter
    thereby therefore therein thereupon these they thick thin third this those though three
    through throughout thru thus to together too top toward towards twelve twenty two un
    under until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither
    who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
    """.split()  # noqa: SIM905 (318 words read better as text)
)

_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # the vectorizer's token pattern
_URL_WORDS = re.compile(r"[A-Za-z]{2,}")
# the words of an identifier: camelCase ("dateTime", "HTTPServer") or joined by
# underscores and dots ("pandas.read_csv")
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
# ASCII characters outside \w become spaces; the rest (bytes of UTF-8 too) stay
_ASCII_NON_WORD = bytes(
    byte if chr(byte).isalnum() or byte == ord("_") or byte >= 128 else ord(" ")
    for byte in range(256)
)
_SINGLE_CHARACTERS = frozenset(bytes([byte]) for byte in range(128))
_STOP_WORDS = frozenset(word.encode() for word in ENGLISH_STOP_WORDS)


def url_words(url: str) -> str:
    """The words of a URL's path and query, for scoring links."""
    rest = url.split("://", 1)[-1]
    path = rest.split("/", 1)[1] if "/" in rest else ""
    return " ".join(_URL_WORDS.findall(path))


def link_text(anchor: str, url: str) -> str:
    """The text a link is scored by: its anchor and its URL's words, and the words of
    the identifiers among them. An API's index links a class or function by its name
    (Javadoc's "SimpleDateFormat", `read_csv`), one token to the vectorizer, which no
    topic names: split, "simple date format" says what the page is about. The whole
    identifier is kept too, as the relevant pages' words of the expanded topic hold it."""
    text = f"{anchor} {url_words(url)}"
    parts = []
    for word in text.split():
        # an upper-case letter after the first, or an underscore: split it (a loop over
        # the words costs half what a regular expression over the text does)
        if "_" in word or word[1:] != word[1:].lower():
            found = _IDENTIFIER_PART.findall(word)
            if len(found) > 1:
                parts.append(" ".join(found))
    return f"{text} {' '.join(parts)}" if parts else text


@dataclass(frozen=True, slots=True)
class TermCounts:
    """Rows of term counts as the parts of a CSR matrix: row i's columns are
    `indices[indptr[i]:indptr[i + 1]]`, ascending, with counts `data` (float32)."""

    n_features: int
    indptr: array  # of int64
    indices: array  # of int32
    data: array  # of float32

    @property
    def rows(self) -> int:
        return len(self.indptr) - 1

    def take(self, rows: Sequence[int]) -> TermCounts:
        """These rows, in this order."""
        indptr, indices, data = array("q", [0]), array("i"), array("f")
        for row in rows:
            start, stop = self.indptr[row], self.indptr[row + 1]
            indices.extend(self.indices[start:stop])
            data.extend(self.data[start:stop])
            indptr.append(len(indices))
        return TermCounts(self.n_features, indptr, indices, data)


def hashed_column(name: str | bytes, n_features: int) -> int:
    """scikit-learn's column of a hashed name (`HashingVectorizer`'s and
    `FeatureHasher`'s, no sign): MurmurHash3 of its UTF-8 with seed 0, signed, its
    absolute value modulo the columns (for -2**31 too, as scikit-learn computes it)."""
    return abs(mmh3.hash(name)) % n_features


class TermHasher:
    """Hashed term counts of texts. Its memory of the words' columns makes them cheaper,
    not different; it is not pickled."""

    def __init__(self, *, n_features: int = DEFAULT_N_FEATURES) -> None:
        self.n_features = n_features
        self._columns: dict[bytes, int] = {}  # word -> column, cleared when full

    def __getstate__(self) -> dict[str, int]:
        return {"n_features": self.n_features}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.n_features, self._columns = state["n_features"], {}

    def count(self, texts: Sequence[str]) -> TermCounts:
        indptr, indices, data = array("q", [0]), array("i"), array("f")
        read: dict[str, tuple[Sequence[int], Sequence[int]]] = {}  # a text repeated: once
        for text in texts:
            row = read.get(text)
            if row is None:
                row = read[text] = self._row(text)
            indices.extend(row[0])
            data.extend(row[1])
            indptr.append(len(indices))
        return TermCounts(self.n_features, indptr, indices, data)

    def _row(self, text: str) -> tuple[Sequence[int], Sequence[int]]:
        """The columns of the words of `text`, ascending, and their counts (the counts of
        words that hash alike added up)."""
        words = self._words(text)
        known = self._columns
        if len(known) > COLUMNS_MEMORY:
            known.clear()
        for word in set(words).difference(known):
            known[word] = hashed_column(word, self.n_features)
        columns = list(map(known.__getitem__, words))
        counts = dict(zip(columns, words.values(), strict=True))
        if len(counts) < len(columns):  # words that hash alike: their counts added up
            counts = Counter()
            for column, times in zip(columns, words.values(), strict=True):
                counts[column] += times
        ascending = sorted(counts)  # plain integers sort faster than pairs
        return tuple(ascending), tuple(map(counts.__getitem__, ascending))

    @staticmethod
    def _words(text: str) -> Counter[bytes]:
        """The words of `text` the vectorizer's analyzer finds, in UTF-8, with their counts."""
        text = text.lower()
        try:
            data = text.encode()
        except UnicodeError:  # a lone surrogate: the token pattern reads it as it is
            counts = Counter(word.encode() for word in _TOKEN.findall(text))
        else:
            # ASCII characters outside \w end words: each piece is one word, but single
            # characters and pieces holding bytes beyond ASCII (a word with an accent, or
            # words around a non-breaking space), in which the token pattern finds the
            # words it finds there in the whole text
            counts = Counter(data.translate(_ASCII_NON_WORD).split())
            for piece in _SINGLE_CHARACTERS.intersection(counts):
                del counts[piece]
            if not data.isascii():
                for piece in [piece for piece in counts if not piece.isascii()]:
                    times = counts.pop(piece)
                    for word in _TOKEN.findall(piece.decode()):
                        counts[word.encode()] += times
        for word in _STOP_WORDS.intersection(counts):
            del counts[word]
        return counts
