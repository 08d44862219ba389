"""Tool-search vectors on disk, by digest: a tool definition is embedded once per model, not
once per run (the model is the slow part of indexing a catalogue).

One file per model (`<model id>.vec` under `paths.cache_path("embeddings")`, or the folder
`MCPKIT_EMBEDDING_CACHE` names; `off` turns the store off): a header with the vector size,
then fixed-size records, each the sha256 of (token limit, text) and the float32 vector. New
records are appended in one write, so processes sharing the file never see half a record
(a torn tail is ignored). A file past `LIMIT` bytes is started afresh. A store that cannot be
read or written is skipped: vectors are computed again, never wrong.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .paths import cache_path

MAGIC = b"MCPKVEC1"
LIMIT = 64 * 2**20  # about 40,000 vectors of 384 floats
_log = logging.getLogger("mcpkit.host")


def default_folder() -> Path | None:
    """Where vectors are kept: `MCPKIT_EMBEDDING_CACHE`, else the user's cache folder;
    None when that variable is `off`."""
    value = os.environ.get("MCPKIT_EMBEDDING_CACHE", "")
    if value.lower() == "off":
        return None
    return Path(value) if value else cache_path("embeddings")


def digest(text: str, max_tokens: int) -> bytes:
    return hashlib.sha256(f"{max_tokens}\0{text}".encode()).digest()


class VectorStore:
    """The vectors one model gave, by `digest`."""

    def __init__(self, folder: Path, model_id: str) -> None:
        self.path = folder / f"{model_id}.vec"
        self._known: dict[bytes, bytes] | None = None
        self._size = 0  # bytes of one vector; 0 until known

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The raw float32 vectors stored for `keys` (those that are)."""
        known = self._load()
        return {k: known[k] for k in keys if k in known}

    def _load(self) -> dict[bytes, bytes]:
        if self._known is None:
            self._known = {}
            try:
                data = self.path.read_bytes()
            except OSError:
                return self._known
            if len(data) < 12 or not data.startswith(MAGIC):
                return self._known
            (dims,) = struct.unpack_from("<I", data, 8)
            self._size = 4 * dims
            step = 32 + self._size
            for start in range(12, len(data) - step + 1, step):
                self._known[data[start : start + 32]] = data[start + 32 : start + step]
        return self._known

    def add(self, vectors: Mapping[bytes, Any]) -> None:
        """Keep `vectors` (float32 arrays of one size), by key."""
        known = self._load()
        new = {k: bytes(memoryview(v).cast("B")) for k, v in vectors.items() if k not in known}
        if not new:
            return
        size = len(next(iter(new.values())))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = size != self._size or self.path.stat().st_size > LIMIT
        except FileNotFoundError:
            fresh = True
        except OSError as exc:
            _log.debug("tool-search vectors not kept: %s", exc)
            return
        records = b"".join(k + v for k, v in new.items())
        if fresh:
            records = MAGIC + struct.pack("<I", size // 4) + records
            known.clear()
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
            fd = os.open(self.path, flags, 0o600)
            try:
                os.write(fd, records)
            finally:
                os.close(fd)
        except OSError as exc:
            _log.debug("tool-search vectors not kept: %s", exc)
            return
        self._size = size
        known.update(new)
