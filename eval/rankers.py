"""Each ranker of `search_tools` on the same tool documents, in-process (see tool_search.py).

Requests are split by the server of their first labelled tool (`eval/servers.json`): ranking
choices (the weight of the embeddings' server stage) are made on the `tune` split only, and
the `held-out` and `blind` splits are only reported. Prints, per ranker and split, recall@1/5/10 and MRR
(within the first 10); the embedding index cold (no stored vectors) and warm (vectors on
disk, a fresh process's memory); and query latency p50/p95 of the default ranker.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcpkit.host import search, vocabulary
from mcpkit.host.embeddings import (
    SERVER_WEIGHT,
    Embedder,
    EmbeddingRanker,
    EmbeddingUnavailable,
    MiniLM,
)
from mcpkit.host.rankers import make_ranker
from mcpkit.host.search import BM25Ranker, HybridRanker, ToolDoc

DEPTH = 10
#: The server-stage weights the tune split chooses among (embeddings.SERVER_WEIGHT).
CHOICES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)

Requests = list[dict[str, Any]]
Splits = dict[str, Requests]


def rank_of(keys: Sequence[str], labels: Sequence[str]) -> int | None:
    return next((i for i, k in enumerate(keys) if k in labels), None)


def figures(ranks: Sequence[int | None]) -> str:
    n = len(ranks) or 1

    def within(k: int) -> float:
        return sum(r is not None and r < k for r in ranks) / n

    mrr = sum(1 / (r + 1) for r in ranks if r is not None) / n
    return f"{within(1):8.3f} {within(5):8.3f} {within(10):9.3f} {mrr:6.3f}"


def ranks(ranker: search.Ranker, requests: Requests) -> list[int | None]:
    return [
        rank_of([h.key for h in ranker.search(r["request"], DEPTH)], r["tools"]) for r in requests
    ]


def line(name: str, ranker: search.Ranker, docs: Sequence[ToolDoc], splits: Splits) -> None:
    ranker.index(docs)
    for split, requests in splits.items():
        print(f"  {name:<30}{split:<9}" + figures(ranks(ranker, requests)))


def header(docs: Sequence[ToolDoc], splits: Splits) -> None:
    sizes = ", ".join(f"{k} {len(v)}" for k, v in splits.items())
    print(f"rankers over the host's {len(docs)} tool documents (requests: {sizes}):")
    print(
        f"  {'ranker':<30}{'split':<9}{'recall@1':>8} {'recall@5':>8} {'recall@10':>9} {'MRR':>6}"
    )


def without_shapes(make: Callable[[], search.Ranker]) -> search.Ranker:
    """`make()`'s ranker with no nouns inferred from identifier shapes."""
    saved = vocabulary.IDENTIFIER_SHAPES
    vocabulary.IDENTIFIER_SHAPES = ()
    try:
        return make()
    finally:
        vocabulary.IDENTIFIER_SHAPES = saved


def choose(model: Embedder, docs: Sequence[ToolDoc], tune: Requests) -> float:
    """The server-stage weight with the best recall@5, then MRR, on the tune split."""

    def score(weight: float) -> tuple[int, float]:
        hybrid = HybridRanker([BM25Ranker(), EmbeddingRanker(model, weight)])
        hybrid.index(docs)
        found = ranks(hybrid, tune)
        at5 = sum(r is not None and r < 5 for r in found)
        mrr = sum(1 / (r + 1) for r in found if r is not None)
        print(f"    tune, server weight {weight}: recall@5 {at5 / len(tune):.3f} "
              f"MRR {mrr / len(tune):.3f}")  # fmt: skip
        return at5, mrr

    scored = {weight: score(weight) for weight in CHOICES}
    return max(CHOICES, key=lambda w: scored[w])


def timings(docs: Sequence[ToolDoc], requests: Requests) -> None:
    """Index cold and warm (a fresh model object each time, so only the disk remembers) and
    the default ranker's query latency."""
    with tempfile.TemporaryDirectory() as folder:
        saved = os.environ.get("MCPKIT_EMBEDDING_CACHE")
        os.environ["MCPKIT_EMBEDDING_CACHE"] = folder
        try:
            start = time.perf_counter()
            model = MiniLM()
            loaded = time.perf_counter() - start
            built = []
            for _ in range(2):
                ranker = EmbeddingRanker(model if not built else MiniLM())
                start = time.perf_counter()
                ranker.index(docs)
                built.append(time.perf_counter() - start)
        finally:
            if saved is None:
                os.environ.pop("MCPKIT_EMBEDDING_CACHE")
            else:
                os.environ["MCPKIT_EMBEDDING_CACHE"] = saved
    hybrid = make_ranker("auto")
    start, started = time.perf_counter(), time.process_time()
    hybrid.index(docs)
    whole, whole_cpu = time.perf_counter() - start, time.process_time() - started
    latencies, cpu = [], []
    for item in requests:
        start, started = time.perf_counter(), time.process_time()
        hybrid.search(item["request"], DEPTH)
        latencies.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - started) * 1000)
    p50, p95 = statistics.median(latencies), statistics.quantiles(latencies, n=20)[-1]
    c50, c95 = statistics.median(cpu), statistics.quantiles(cpu, n=20)[-1]
    print(
        f"index of {len(docs)} tools: embeddings cold {built[0]:.2f} s, warm {built[1]:.2f} s "
        f"(model load {loaded:.2f} s); hybrid warm, BM25 included {whole:.2f} s "
        f"({whole_cpu:.2f} s of CPU)"
    )
    print(
        f"query latency (default ranker): p50 {p50:.1f} ms, p95 {p95:.1f} ms; CPU time "
        f"p50 {c50:.1f} ms, p95 {c95:.1f} ms (load average {os.getloadavg()[0]:.1f})"
    )


def compare_rankers(docs: Sequence[ToolDoc], splits: Splits) -> None:
    header(docs, splits)
    line("bm25", BM25Ranker(), docs, splits)
    line("bm25, no id shapes", without_shapes(BM25Ranker), docs, splits)
    try:
        model = MiniLM.shared()
    except EmbeddingUnavailable as exc:
        print(f"  embeddings and hybrid: not run ({exc})")
        return
    line("embeddings", EmbeddingRanker(model), docs, splits)
    before = HybridRanker([BM25Ranker(), EmbeddingRanker(model, 0.0)])
    line("hybrid, no server stage (old)", before, docs, splits)
    line("hybrid (default)", make_ranker("hybrid"), docs, splits)
    print("  the embeddings' server-stage weight, chosen on the tune split:")
    weight = choose(model, docs, splits["tune"])
    print(f"  chosen: {weight} (default embeddings.SERVER_WEIGHT: {SERVER_WEIGHT})")
    timings(docs, [r for v in splits.values() for r in v])
