"""The lexical parts of tool search, from whatever is installed: a plain install ranks too.

- `bm25_index(corpus)`: Okapi BM25, Lucene's variant, over tokenised documents: `bm25s`
  (numpy) where the `host` extra is installed, else `PlainBM25`, the same formula in pure
  Python (a catalogue is at most thousands of short documents; the scores agree).
- `stemmer()`: Snowball stemming from `PyStemmer` (the `host` extra), else words as written.
  Without it the search matches fewer forms of a word ("issues" misses "issue"), and the log
  says once what better ranking needs.
- `STOPWORDS`: Lucene's English stop words (the list `bm25s` uses too).
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

log = logging.getLogger("mcpkit.host")

#: What the log says, once, when tool search runs without stemming.
NO_STEMMING = (
    "tool search: lexical ranking without stemming; pip install 'mcpkit[host]' for better ranking"
)

STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
     "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
     "these", "they", "this", "to", "was", "will", "with")
)  # fmt: skip

Stem = Callable[[list[str]], list[str]]


class Index(Protocol):
    def get_scores(self, words: list[str]) -> Sequence[float]:
        """Every document's score for the query `words`, in corpus order."""
        ...


class PlainBM25:
    """Okapi BM25 as Lucene scores it (Kamphuis et al., 2020): a term in a document adds
    idf · tf / (tf + k1 · (1 - b + b · |d| / avg|d|)), idf = ln(1 + (N - df + 0.5) / (df + 0.5));
    a query word that occurs twice counts twice."""

    def __init__(
        self, corpus: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75
    ) -> None:
        self._size = len(corpus)
        lengths = [len(doc) for doc in corpus]
        average = (sum(lengths) / len(lengths)) if lengths else 0.0
        counts = [Counter(doc) for doc in corpus]
        frequency = Counter(term for doc in counts for term in doc)
        #: term → (document, score): everything a query needs, computed once.
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, doc in enumerate(counts):
            norm = k1 * (1 - b + b * lengths[i] / average) if average else k1
            for term, tf in doc.items():
                df = frequency[term]
                idf = math.log(1 + (self._size - df + 0.5) / (df + 0.5))
                self._postings.setdefault(term, []).append((i, idf * tf / (tf + norm)))

    def get_scores(self, words: list[str]) -> list[float]:
        total = [0.0] * self._size
        for word in words:
            for i, score in self._postings.get(word, ()):
                total[i] += score
        return total


class _Bm25s:
    """`bm25s`'s index behind `Index` (lists, not numpy arrays; an empty query is no error)."""

    def __init__(self, corpus: Sequence[Sequence[str]], *, k1: float, b: float) -> None:
        import bm25s

        self._index: Any = bm25s.BM25(k1=k1, b=b)
        self._index.index([list(doc) for doc in corpus], show_progress=False)
        self._size = len(corpus)

    def get_scores(self, words: list[str]) -> Any:
        """A numpy array (`BM25Ranker` adds them up as arrays)."""
        if not words:
            return [0.0] * self._size
        return self._index.get_scores(words)


@functools.cache
def _module(name: str) -> Any | None:
    """The optional module `name`, or None when it is not installed (asked once)."""
    try:
        return __import__(name)
    except ImportError:
        return None


def numpy() -> Any | None:
    """numpy where installed (the `host` extra brings it), else None."""
    return _module("numpy")


def bm25_index(corpus: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> Index:
    """A BM25 index of `corpus` (`bm25s` where installed, `PlainBM25` otherwise)."""
    if _module("bm25s") is not None:
        return _Bm25s(corpus, k1=k1, b=b)
    return PlainBM25(corpus, k1=k1, b=b)


@functools.cache
def stemmer(language: str = "english") -> Stem:
    """Snowball stemming of words (PyStemmer), or the words as they are without it; the
    latter is logged once per process, with what better ranking needs."""
    module = _module("Stemmer")
    if module is None:
        log.warning("%s", NO_STEMMING)
        return list
    return module.Stemmer(language).stemWords  # type: ignore[no-any-return]
