"""Each ranker of `search_tools` on the same tool documents, in-process (see tool_search.py).

Prints one line per ranker that can run here, BM25 without its synonym groups, BM25 and the
hybrid without the nouns of identifier shapes, and the hybrid's fusion constant under
cross-validation with servers held out.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcpkit.host import search, vocabulary
from mcpkit.host.embeddings import EmbeddingUnavailable
from mcpkit.host.rankers import make_ranker
from mcpkit.host.search import BM25Ranker, HybridRanker, Scorer, ToolDoc

#: Fusion constants the cross-validation chooses among (search.RRF_K is the default).
RRF_CHOICES = (1, 2, 3, 5, 10, 20, 30, 60)
FOLDS, SHUFFLES = 5, 3

Requests = list[dict[str, Any]]


def rank_of(keys: Sequence[str], labels: Sequence[str]) -> int | None:
    return next((i for i, k in enumerate(keys) if k in labels), None)


def measure(ranks: Sequence[int | None], limit: int) -> tuple[float, float, float]:
    """recall@1, recall@`limit`, MRR."""
    n = len(ranks) or 1
    return (
        sum(r == 0 for r in ranks) / n,
        sum(r is not None and r < limit for r in ranks) / n,
        sum(1 / (r + 1) for r in ranks if r is not None) / n,
    )


def run(ranker: search.Ranker, docs: Sequence[ToolDoc], requests: Requests, limit: int) -> str:
    start = time.perf_counter()
    ranker.index(docs)
    built = time.perf_counter() - start
    ranks, elapsed = [], 0.0
    for item in requests:
        start = time.perf_counter()
        hits = ranker.search(item["request"], limit)
        elapsed += time.perf_counter() - start
        ranks.append(rank_of([h.key for h in hits], item["tools"]))
    r1, r5, mrr = measure(ranks, limit)
    per_query = elapsed / max(1, len(requests)) * 1000
    return f"{r1:8.3f} {r5:8.3f} {mrr:6.3f}   index {built:5.1f} s, query {per_query:5.1f} ms"


def without_synonyms(docs: Sequence[ToolDoc], requests: Requests, limit: int) -> str:
    saved = vocabulary.SYNONYMS, vocabulary.ABBREVIATIONS
    vocabulary.SYNONYMS, vocabulary.ABBREVIATIONS = (), {}
    try:
        return run(BM25Ranker(), docs, requests, limit)
    finally:
        vocabulary.SYNONYMS, vocabulary.ABBREVIATIONS = saved


def without_shapes(
    make: Callable[[], search.Ranker], docs: Sequence[ToolDoc], requests: Requests, limit: int
) -> str:
    """`make()`'s ranker with no nouns inferred from identifier shapes (the analyzer reads
    `vocabulary.IDENTIFIER_SHAPES` when it is made)."""
    saved = vocabulary.IDENTIFIER_SHAPES
    vocabulary.IDENTIFIER_SHAPES = ()
    try:
        ranker = make()
    finally:
        vocabulary.IDENTIFIER_SHAPES = saved
    return run(ranker, docs, requests, limit)


def cross_validate(
    parts: Sequence[Scorer], docs: Sequence[ToolDoc], requests: Requests, limit: int
) -> tuple[float, list[int]]:
    """recall@`limit` of the hybrid when each fold's `k` is the best on the other folds'
    servers (a request belongs to the server of its first labelled tool)."""
    fused: dict[float, list[int | None]] = {}
    for k in RRF_CHOICES:
        hybrid = HybridRanker(parts, k)
        hybrid.index(docs)  # the embeddings come from the model's cache
        fused[k] = [
            rank_of([h.key for h in hybrid.search(item["request"], limit)], item["tools"])
            for item in requests
        ]

    def hit(k: float, i: int) -> bool:
        rank = fused[k][i]
        return rank is not None and rank < limit

    server_of = [item["tools"][0].split("__")[0] for item in requests]
    servers = sorted(set(server_of))
    found: list[bool] = []
    chosen: list[int] = []
    for shuffle in range(SHUFFLES):
        order = servers[:]
        random.Random(shuffle).shuffle(order)
        for fold in range(FOLDS):
            held = set(order[fold::FOLDS])
            train = [i for i, s in enumerate(server_of) if s not in held]
            test = [i for i, s in enumerate(server_of) if s in held]
            # ties go to the larger k, the conventional side
            best = max(RRF_CHOICES, key=lambda k: (sum(hit(k, i) for i in train), k))
            chosen.append(best)
            found.extend(hit(best, i) for i in test)
    return sum(found) / len(found), chosen


def compare_rankers(docs: Sequence[ToolDoc], requests: Requests, limit: int) -> None:
    print(f"rankers over the host's {len(docs)} tool documents ({len(requests)} requests):")
    print(f"  {'ranker':<22}{'recall@1':>8} {'recall@' + str(limit):>8} {'MRR':>6}")
    print(f"  {'bm25':<22}" + run(BM25Ranker(), docs, requests, limit))
    print(f"  {'bm25, no synonyms':<22}" + without_synonyms(docs, requests, limit))
    print(f"  {'bm25, no id shapes':<22}" + without_shapes(BM25Ranker, docs, requests, limit))
    try:
        embedding = make_ranker("embeddings")
    except EmbeddingUnavailable as exc:
        print(f"  embeddings and hybrid: not run ({exc})")
        return
    print(f"  {'embeddings':<22}" + run(embedding, docs, requests, limit))
    hybrid = make_ranker("hybrid")
    label = f"hybrid (RRF k={search.RRF_K})"
    print(f"  {label:<22}" + run(hybrid, docs, requests, limit))
    plain = without_shapes(lambda: make_ranker("hybrid"), docs, requests, limit)
    print(f"  {'hybrid, no id shapes':<22}" + plain)
    assert isinstance(hybrid, HybridRanker)
    score, chosen = cross_validate(hybrid.rankers, docs, requests, limit)
    print(
        f"  hybrid, k chosen on held-out servers ({FOLDS} folds x {SHUFFLES}): recall@{limit} "
        f"{score:.3f} (k chosen: {', '.join(str(k) for k in sorted(set(chosen)))})"
    )
