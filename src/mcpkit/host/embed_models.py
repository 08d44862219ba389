"""Sentence-embedding models for tool search, beyond the shipped default (`embeddings.MiniLM`).

`MCPKIT_EMBEDDING_MODEL` chooses one:

- unset or empty: the shipped all-MiniLM-L6-v2 (offline, checked by its sha256);
- a path: any sentence-embedding model exported to ONNX, as a folder holding `model.onnx`
  (or `onnx/model.onnx`) and its `tokenizer.json` (or a WordPiece `vocab.txt`), or the
  `.onnx` file itself with those beside it. The model's token embeddings are mean-pooled,
  or its CLS token taken where the folder's `1_Pooling/config.json` says so (as
  sentence-transformers exports do); a model whose output is already one vector per text
  is used as it is. Vectors are normalised;
- `fastembed:NAME`: a model by name from the `fastembed` package, which downloads it on first
  use (network needed; `pip install fastembed`, not one of mcpkit's extras).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from .embedder import Embedder, EmbeddingUnavailable

ENV = "MCPKIT_EMBEDDING_MODEL"


def _needs(exc: ImportError) -> EmbeddingUnavailable:
    return EmbeddingUnavailable(f"embedding search needs {exc.name}: pip install 'mcpkit[search]'")


class OnnxEmbedder(Embedder):
    """Any ONNX sentence-embedding model on onnxruntime, with a `tokenizers` tokenizer."""

    def __init__(
        self, model: Path, tokenizer: Path, *, pooling: str = "mean", sha256: str = "",
        threads: int = 0,
    ) -> None:  # fmt: skip
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise _needs(exc) from None
        super().__init__()
        self.pooling = pooling
        token_digest = hashlib.sha256(tokenizer.read_bytes()).hexdigest()
        model_digest = sha256 or hashlib.sha256(model.read_bytes()).hexdigest()
        self.model_id = f"{model_digest[:20]}-{token_digest[:12]}-{pooling}"
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        try:
            self._session = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's own errors: a file that is not a model
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EmbeddingUnavailable(
                f"{model}: onnxruntime cannot load it ({first}); give an ONNX model file"
            ) from None
        self._inputs = {i.name for i in self._session.get_inputs()}
        if tokenizer.suffix == ".json":
            self._tokenizer = Tokenizer.from_file(str(tokenizer))
        else:
            from tokenizers import BertWordPieceTokenizer

            self._tokenizer = BertWordPieceTokenizer(str(tokenizer), lowercase=True)
        self._tokenizer.no_truncation()
        pad = self._tokenizer.padding or {}
        token = pad.get("pad_token") or "[PAD]"
        pad_id = self._tokenizer.token_to_id(token)
        self._tokenizer.enable_padding(pad_id=pad_id or 0, pad_token=token)
        shape = self._session.get_outputs()[0].shape
        if isinstance(shape[-1], int):
            self.dimensions = shape[-1]

    def _run(self, texts: list[str], max_tokens: int) -> Any:
        np = self._np
        self._tokenizer.enable_truncation(max_tokens)  # under Embedder's lock
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        output = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        if output.ndim == 2:  # the model pools by itself
            return self.normalise(output)
        if self.pooling == "cls":
            return self.normalise(output[:, 0])
        pooled = (output * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return self.normalise(pooled)


class FastEmbedder(Embedder):
    """A model from `fastembed` by name (downloaded on first use; needs the network)."""

    def __init__(self, name: str) -> None:
        try:
            from fastembed import TextEmbedding  # type: ignore[import-not-found]
        except ImportError:
            raise EmbeddingUnavailable(
                f"{ENV}=fastembed:{name} needs fastembed, which mcpkit does not install: "
                "pip install fastembed (it downloads the model, so it needs the network), "
                "or give the path of a local ONNX model"
            ) from None
        super().__init__()
        try:
            self._model = TextEmbedding(name)
        except Exception as exc:  # fastembed raises what its downloader raised
            raise EmbeddingUnavailable(
                f"fastembed could not load {name} ({type(exc).__name__}: {exc}); "
                "it downloads on first use: check the network, or give a local ONNX model"
            ) from None
        self.model_id = "fastembed-" + re.sub(r"[^\w.-]+", "_", name)

    def _run(self, texts: list[str], max_tokens: int) -> Any:
        return self.normalise(self._np.array(list(self._model.embed(texts))))


def find_files(path: Path) -> tuple[Path, Path, str]:
    """The model, its tokenizer and its pooling, from a folder or an `.onnx` file."""
    folder = path.parent if path.suffix == ".onnx" else path
    model = path if path.suffix == ".onnx" else folder / "model.onnx"
    if not model.is_file() and (folder / "onnx/model.onnx").is_file():
        model = folder / "onnx/model.onnx"
    if not model.is_file():
        raise EmbeddingUnavailable(
            f"{ENV}={path}: no model.onnx there; give a folder with model.onnx and "
            "tokenizer.json (or vocab.txt), or the .onnx file"
        )
    places = (model.parent, folder, folder.parent) if model.parent != folder else (folder,)
    tokenizer = next(
        (p / n for p in places for n in ("tokenizer.json", "vocab.txt") if (p / n).is_file()),
        None,
    )
    if tokenizer is None:
        raise EmbeddingUnavailable(
            f"{ENV}={path}: no tokenizer.json or vocab.txt beside {model.name}; "
            "copy the model's tokenizer files there"
        )
    pooling = "mean"
    pool_config = tokenizer.parent / "1_Pooling/config.json"
    if pool_config.is_file():
        settings = json.loads(pool_config.read_text(encoding="utf-8"))
        pooling = "cls" if settings.get("pooling_mode_cls_token") else "mean"
    return model, tokenizer, pooling


def load_model(spec: str) -> Embedder:
    """The model `spec` names (a path or `fastembed:NAME`; see the module's docstring)."""
    if spec.startswith("fastembed:"):
        return FastEmbedder(spec.removeprefix("fastembed:"))
    path = Path(spec).expanduser()
    if not path.exists():
        raise EmbeddingUnavailable(f"{ENV}={spec}: no such file or folder")
    model, tokenizer, pooling = find_files(path)
    return OnnxEmbedder(model, tokenizer, pooling=pooling)
