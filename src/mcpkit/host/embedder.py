"""What every tool-search embedding model shares: texts → unit vectors, remembered.

A subclass says how to run its model (`_run`) and names it (`model_id`: vectors of one model
never meet another's). `Embedder.embed` keeps the vectors of tool texts in memory for the life
of the process and on disk by digest (`vector_store`), so an unchanged catalogue is indexed
without running the model at all, and a changed one runs it for the changed tools only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .vector_store import VectorStore, default_folder, digest

_BATCH = 32
_CACHE_LIMIT = 50_000  # tool texts kept in memory (about 1.5 kB each)


class EmbeddingUnavailable(RuntimeError):
    """The embedding model cannot run here (a package is missing, or its file is wrong)."""


class Embedder:
    """Texts → unit vectors (float32 rows). Thread-safe."""

    model_id = "model"
    dimensions = 0  # known once a text is embedded, or from the model

    def __init__(self) -> None:
        import numpy

        self._np = numpy
        self._lock = threading.Lock()
        self._cache: dict[bytes, Any] = {}
        self._store: VectorStore | bool | None = True  # True: not opened yet

    def _run(self, texts: list[str], max_tokens: int) -> Any:
        """Unit vectors of `texts` (a 2-D float32 array), computed by the model."""
        raise NotImplementedError

    def _disk(self) -> VectorStore | None:
        if self._store is True:
            folder = default_folder()
            self._store = VectorStore(folder, self.model_id) if folder else None
        return self._store if isinstance(self._store, VectorStore) else None

    def embed(self, texts: Sequence[str], max_tokens: int = 128, *, keep: bool = False) -> Any:
        """A (len(texts), `dimensions`) float32 array of unit vectors. `keep`: remember them,
        in memory and on disk (tool texts; not requests, which rarely come twice)."""
        np = self._np
        keys = {t: digest(t, max_tokens) for t in dict.fromkeys(texts)}
        with self._lock:
            known = {t: self._cache[k] for t, k in keys.items() if k in self._cache}
            store = self._disk() if keep else None
            if store is not None:
                stored = store.get(keys[t] for t in keys if t not in known)
                known.update(
                    (t, np.frombuffer(stored[k], dtype=np.float32))
                    for t, k in keys.items()
                    if k in stored
                )
            todo = sorted((t for t in keys if t not in known), key=len)
            computed: dict[str, Any] = {}
            for start in range(0, len(todo), _BATCH):  # like lengths together: less padding
                batch = todo[start : start + _BATCH]
                computed.update(zip(batch, self._run(batch, max_tokens), strict=True))
            known.update(computed)
            if keep:
                if len(self._cache) + len(known) > _CACHE_LIMIT:
                    self._cache.clear()
                self._cache.update((keys[t], v) for t, v in known.items())
                if store is not None and computed:
                    store.add({keys[t]: v for t, v in computed.items()})
        if known:
            self.dimensions = len(next(iter(known.values())))
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def normalise(self, vectors: Any) -> Any:
        np = self._np
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
