"""Choosing a tool-search ranker by name: BM25 alone, embeddings, or both fused (`search`)."""

from __future__ import annotations

import logging

from .search import BM25Ranker, HybridRanker, Ranker

#: The names `make_ranker` (and an agent's `"tools": {"ranker": …}`) accepts.
RANKERS = ("auto", "hybrid", "embeddings", "bm25")
_log = logging.getLogger("mcpkit.host")
_warned = False


def make_ranker(name: str = "auto") -> Ranker:
    """A new ranker by name. "auto": hybrid where the embedding model can run (the
    `search` extra is installed and its model file checks out), BM25 alone otherwise."""
    global _warned
    if name not in RANKERS:
        raise ValueError(f"unknown ranker {name!r}: one of {', '.join(RANKERS)}")
    if name == "bm25":
        return BM25Ranker()
    from . import embeddings  # onnxruntime and the model load only when asked for

    if name == "auto" and not embeddings.available():
        return BM25Ranker()
    try:
        model = embeddings.MiniLM.shared()
    except embeddings.EmbeddingUnavailable as exc:
        if name != "auto":
            raise
        if not _warned:
            _log.warning("tool search falls back to BM25 alone: %s", exc)
            _warned = True
        return BM25Ranker()
    if name == "embeddings":
        return embeddings.EmbeddingRanker(model)
    return HybridRanker([BM25Ranker(), embeddings.EmbeddingRanker(model)])
