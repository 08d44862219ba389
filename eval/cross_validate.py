"""`make eval-tools-cv`: ranking ideas for `search_tools`, cross-validated over the tune split's
servers (the held-out split's requests are never read here; `make eval-tools` reports them).

The tune split's servers (`eval/servers.json`) are dealt into `FOLDS` groups; for each group,
an idea's free choices (a weight, a depth, a combiner's coefficients) are made on the requests
about the other groups' servers and measured on the requests about that group's, so a choice
that only fits a few requests scores what it would on servers it has not seen. Every idea
ranks the host's tool documents of all 41 catalogues (the held-out servers' tools compete as
they do in use) with the default ranker's own signals: BM25 (`search.BM25Ranker`) and the
embeddings (`embeddings.EmbeddingRanker`, server stage included), fused by reciprocal rank.

Ideas: the default (nothing to choose); Rocchio feedback on the request's embedding (q + a ·
mean of the first k tools' vectors); at most m tools of one server in the first five;
each tool's embedding similarity less a share of its server's mean (so a big server's many
look-alikes do not crowd the rest); a pairwise logistic combiner of four signals, fitted by
numpy on the other folds. Prints recall@1/5/10 and MRR per idea and the choices per fold.

    .venv/bin/python eval/cross_validate.py
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rankers import figures  # eval/rankers.py (the script's folder is on sys.path)

from mcpkit.host.embeddings import QUERY_TOKENS, EmbeddingRanker, MiniLM
from mcpkit.host.search import RRF_K, BM25Ranker, ToolDoc

ROOT = Path(__file__).resolve().parent.parent
FOLDS = 8
DEPTH = 10
Array = Any  # numpy arrays (numpy's own types would not add much here)
Scorer = Callable[[int], Array]  # request number → every tool's score
Fit = Callable[[list[int]], tuple[Scorer, str]]  # training requests → scorer, what it chose


def catalogue_docs() -> tuple[list[ToolDoc], list[dict[str, Any]], list[str]]:
    """The tool documents the host indexes (every served catalogue, annotations included, as
    the servers list them), the tune split's requests, and its servers."""
    specs = json.loads((ROOT / "eval/servers.json").read_text())["servers"]
    split = {s["name"]: s["split"] for s in specs if s["split"] != "none"}
    docs = []
    for name in sorted(split):
        data = json.loads((ROOT / f"tests/data/tool_catalogues/{name}.json").read_text())
        for tool in data["tools"]:
            schema = tool.get("inputSchema") or {}
            docs.append(ToolDoc.from_tool(f"{name}__{tool['name']}", name, tool, schema))
    requests = json.loads((ROOT / "tests/data/tool_requests.json").read_text())["requests"]
    tune = [r for r in requests if split[r["tools"][0].split("__")[0]] == "tune"]
    return docs, tune, sorted(s for s, v in split.items() if v == "tune")


class Signals:
    """Every tune request's BM25 and embedding scores over every tool, computed once."""

    def __init__(self, docs: list[ToolDoc], requests: list[dict[str, Any]]) -> None:
        texts = [r["request"] for r in requests]
        bm25 = BM25Ranker()
        bm25.index(docs)
        self.bm25 = np.array([bm25.scores(t) for t in texts])
        embed = EmbeddingRanker(MiniLM.shared())
        embed.index(docs)
        self.server_weight = embed.server_weight
        self.tools, self.servers = embed._matrix, embed._servers
        self.server_of = np.array(embed._server_of)
        self.queries = embed.model.embed(texts, QUERY_TOKENS)
        self.cosine = self.queries @ self.tools.T
        self.embedding = self.embedding_of(self.queries)
        key = {d.key: i for i, d in enumerate(docs)}
        self.labels = [{key[t] for t in r["tools"]} for r in requests]
        self.server_of_request = [r["tools"][0].split("__")[0] for r in requests]

    def embedding_of(self, queries: Array) -> Array:
        """The embedding ranker's scores of query vectors (rows): tool plus server stage."""
        on_servers = (queries @ self.servers.T)[:, self.server_of]
        return queries @ self.tools.T + self.server_weight * on_servers


def reciprocal(scores: Array, k: float = RRF_K) -> Array:
    """Each tool's 1 / (k + rank) under `scores` (0 where it scores nothing)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    rank = np.empty(len(scores))
    rank[order] = np.arange(1, len(scores) + 1)
    return np.where(scores > 0, 1.0 / (k + rank), 0.0)


def rank_of(scores: Array, labels: set[int]) -> int | None:
    order = np.lexsort((np.arange(len(scores)), -scores))[:DEPTH]
    return next((r for r, i in enumerate(order) if scores[i] > 0 and i in labels), None)


def hybrid(s: Signals, i: int, embedding: Array | None = None) -> Array:
    return reciprocal(s.bm25[i]) + reciprocal(s.embedding[i] if embedding is None else embedding)


def by_grid(s: Signals, grid: Sequence[Any], make: Callable[[Any], Scorer]) -> Fit:
    """An idea with one free choice: the grid's best recall@5, then MRR, on the training set."""
    scorers = {p: make(p) for p in grid}

    def fit(train: list[int]) -> tuple[Scorer, str]:
        def score(p: Any) -> tuple[int, float]:
            ranks = [rank_of(scorers[p](i), s.labels[i]) for i in train]
            at5 = sum(r is not None and r < 5 for r in ranks)
            return at5, sum(1 / (r + 1) for r in ranks if r is not None)

        best = max(grid, key=score)
        return scorers[best], str(best)

    return fit


def rocchio(s: Signals) -> Fit:
    def make(p: tuple[float, int]) -> Scorer:
        share, depth = p

        def scorer(i: int) -> Array:
            top = np.argsort(-hybrid(s, i), kind="stable")[:depth]
            q = s.queries[i] + share * s.tools[top].mean(axis=0)
            return hybrid(s, i, s.embedding_of((q / np.linalg.norm(q))[None, :])[0])

        return scorer

    return by_grid(s, [(a, k) for a in (0.25, 0.5, 1.0) for k in (1, 3, 5, 10)], make)


def server_cap(s: Signals) -> Fit:
    def make(cap: int) -> Scorer:
        def scorer(i: int) -> Array:
            fused = hybrid(s, i)
            order = np.lexsort((np.arange(len(fused)), -fused))
            seen: dict[int, int] = {}
            first: list[int] = []
            later: list[int] = []
            for j in order[:20]:  # past `cap` of one server, a tool waits behind the others
                seen[s.server_of[j]] = seen.get(s.server_of[j], 0) + 1
                (first if seen[s.server_of[j]] <= cap else later).append(j)
            out = np.zeros(len(fused))
            for r, j in enumerate([*first, *later, *order[20:]]):
                out[j] = (len(fused) - r) * (fused[j] > 0)
            return out

        return scorer

    return by_grid(s, [2, 3, 4, 5], make)


def server_mean(s: Signals) -> Fit:
    count = np.bincount(s.server_of)

    def make(share: float) -> Scorer:
        def scorer(i: int) -> Array:
            mean = np.bincount(s.server_of, weights=s.cosine[i]) / count
            return hybrid(s, i, s.embedding[i] - share * mean[s.server_of])

        return scorer

    return by_grid(s, [0.0, 0.25, 0.5, 0.75, 1.0], make)


def features(s: Signals, i: int) -> Array:
    """Per tool: both reciprocal ranks, BM25 over the request's best, the plain cosine."""
    top = s.bm25[i].max() or 1.0
    columns = [reciprocal(s.bm25[i]), reciprocal(s.embedding[i]), s.bm25[i] / top, s.cosine[i]]
    return np.stack(columns, axis=1)


def combiner(s: Signals, depth: int = 30, steps: int = 400) -> Fit:
    """Pairwise logistic regression (RankNet's loss, linear): a labelled tool against each
    other tool among the default's first `depth`, four weights, by gradient descent."""
    table = [features(s, i) for i in range(len(s.labels))]

    def fit(train: list[int]) -> tuple[Scorer, str]:
        pairs = []
        for i in train:
            others = [j for j in np.argsort(-hybrid(s, i))[:depth] if j not in s.labels[i]]
            pairs += [table[i][p] - table[i][n] for p in s.labels[i] for n in others]
        d = np.array(pairs)
        scale = np.abs(d).mean(axis=0) + 1e-9
        d = d / scale
        w = np.zeros(d.shape[1])
        for _ in range(steps):
            w += 0.5 * (d * (1 / (1 + np.exp(d @ w)))[:, None]).mean(axis=0) - 1e-3 * w
        w = w / scale
        return (lambda i: table[i] @ w - (table[i] @ w).min() + 1e-6), " ".join(
            f"{x:.2f}" for x in w
        )

    return fit


def cross_validate(s: Signals, servers: list[str], fit: Fit) -> tuple[str, list[str]]:
    """Figures over every tune request, each ranked by a fit on the other folds' servers."""
    folds = [servers[k::FOLDS] for k in range(FOLDS)]  # alphabetical: not by size
    ranks: list[int | None] = []
    chosen = []
    for fold in folds:
        test = [i for i, name in enumerate(s.server_of_request) if name in fold]
        train = [i for i, name in enumerate(s.server_of_request) if name not in fold]
        scorer, choice = fit(train)
        chosen.append(choice)
        ranks += [rank_of(scorer(i), s.labels[i]) for i in test]
    return figures(ranks), chosen


def main() -> None:
    docs, requests, servers = catalogue_docs()
    s = Signals(docs, requests)
    ideas: dict[str, Fit] = {
        "hybrid (default)": lambda train: (lambda i: hybrid(s, i), "-"),
        "Rocchio (share, depth)": rocchio(s),
        "at most m per server": server_cap(s),
        "less server mean (share)": server_mean(s),
        "pairwise combiner": combiner(s),
    }
    print(f"tune split: {len(requests)} requests about {len(servers)} servers, {FOLDS} folds "
          f"of servers; {len(docs)} tools ranked")  # fmt: skip
    print(f"  {'idea':<26}{'recall@1':>8} {'recall@5':>8} {'recall@10':>9} {'MRR':>6}")
    for name, fit in ideas.items():
        text, chosen = cross_validate(s, servers, fit)
        print(f"  {name:<26}{text}")
        if len(set(chosen)) > 1 or chosen[0] != "-":
            print(f"    chosen per fold: {'; '.join(chosen)}")


if __name__ == "__main__":
    main()
