"""Tool results that fit: one output budget across every content type, the rest kept host-side.

Content whose `annotations.audience` leaves out the assistant is shown to the user only and
never sent to the model. Images larger than `IMAGE_MAX_SIDE` pixels or `IMAGE_MAX_BYTES` are
downscaled with Pillow (or replaced by a note when they cannot be). Then, when the result costs
more than the budget (text and embedded resources by their characters, images by their pixels),
the model gets what fits, a visible note naming a handle, and the `read_result` host tool pages
through the rest, which the host keeps in a `ResultStore`.
"""

from __future__ import annotations

import base64
import binascii
import io
import itertools
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .tokens import CHARS_PER_TOKEN

#: Default output budget of one tool result, in tokens (the design guidance's 25,000).
DEFAULT_RESULT_TOKENS = 25_000
#: Longest image side a model gets (larger images are downscaled; Anthropic's guidance).
IMAGE_MAX_SIDE = 1568
#: Largest image a model gets, in bytes after decoding.
IMAGE_MAX_BYTES = 1_000_000
#: An image costs about width * height / 750 tokens (Anthropic's published rule of thumb).
PIXELS_PER_TOKEN = 750
#: Results kept for `read_result` per agent (the oldest is dropped first).
STORE_ENTRIES = 64


def for_assistant(block: dict[str, Any]) -> bool:
    """False when the block's audience (or its embedded resource's) leaves out the assistant."""
    for notes in (block.get("annotations"), (block.get("resource") or {}).get("annotations")):
        audience = notes.get("audience") if isinstance(notes, dict) else None
        if isinstance(audience, list) and "assistant" not in audience:
            return False
    return True


@dataclass(slots=True)
class Fitted:
    model: list[dict[str, Any]]  # what the model reads
    user_only: list[dict[str, Any]] = field(default_factory=list)
    handle: str | None = None  # where the overflow is kept


class ResultStore:
    """Overflow of results, by handle, for `read_result`: text documents and whole blocks."""

    def __init__(self, entries: int = STORE_ENTRIES) -> None:
        self.entries = entries
        self._items: OrderedDict[str, str | dict[str, Any]] = OrderedDict()
        self._ids = itertools.count(1)

    def put(self, item: str | dict[str, Any]) -> str:
        handle = f"r{next(self._ids)}"
        self._items[handle] = item
        while len(self._items) > self.entries:
            self._items.popitem(last=False)
        return handle

    def __contains__(self, handle: object) -> bool:
        return handle in self._items

    def __len__(self) -> int:
        return len(self._items)

    def read(self, handle: str, offset: int, limit: int) -> list[dict[str, Any]]:
        """A slice of a kept document (or the kept block), with a note saying what follows."""
        item = self._items.get(handle)
        if item is None:
            known = ", ".join(self._items) or "none"
            raise KeyError(f"no kept result {handle!r} (kept: {known})")
        if isinstance(item, dict):
            return [item]
        offset = max(0, offset)
        end = min(len(item), offset + max(1, limit))
        if end < len(item):
            note = (
                f"[characters {offset:,}-{end:,} of {len(item):,}; next: read_result "
                f'handle "{handle}" offset {end}]'
            )
        else:
            note = f"[characters {offset:,}-{end:,} of {len(item):,}; end of {handle}]"
        return [{"type": "text", "text": item[offset:end]}, {"type": "text", "text": note}]


def fit(
    blocks: list[dict[str, Any]],
    budget_tokens: int,
    store: ResultStore | None,
    *,
    images: bool = True,
) -> Fitted:
    """The blocks the model gets within `budget_tokens`; overflow kept in `store` (None: left
    out, for a front with no `read_result`: the gateway's)."""
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    shown: list[dict[str, Any]] = []
    user_only: list[dict[str, Any]] = []
    for block in blocks:
        if not for_assistant(block):
            user_only.append(block)
        elif block.get("type") == "image" and images:
            shown.append(shrink_image(block))
        else:
            shown.append(block)
    if sum(cost(b) for b in shown) <= budget:
        return Fitted(shown, user_only)
    texts = [render(b) for b in shown if is_textual(b)]
    others = [b for b in shown if not is_textual(b)]
    room = budget
    kept: list[dict[str, Any]] = []
    for block in others:  # media and links first, while they fit; text gets the rest
        c = cost(block)
        if c <= room // 2:
            kept.append(block)
            room -= c
        elif store is None:
            kept.append(_note(f"[{block.get('type')} left out: over the output budget]"))
        else:
            media = store.put(block)
            kept.append(_note(f"[{block.get('type')} ({block.get('mimeType', '?')}) kept by the "
                              f'host: call read_result with handle "{media}" to see it]'))  # fmt: skip
    document = "\n\n".join(texts)
    out = list(kept)
    handle: str | None = None
    if len(document) <= room:
        if document:
            out.insert(0, {"type": "text", "text": document})
    elif store is None:
        out[:0] = [
            {"type": "text", "text": document[:room]},
            _note(f"[output truncated: characters 0-{room:,} of {len(document):,} shown]"),
        ]
    else:
        handle = store.put(document)
        out[:0] = [
            {"type": "text", "text": document[:room]},
            _note(
                f"[output truncated by the host: characters 0-{room:,} of {len(document):,} "
                f'shown; the rest is kept as "{handle}": call read_result with handle '
                f'"{handle}" and offset {room} to read on]'
            ),
        ]
    return Fitted(out, user_only, handle)


def _note(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def is_textual(block: dict[str, Any]) -> bool:
    return block.get("type") in ("text", "resource")


def render(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        return str(block.get("text", ""))
    res = block.get("resource") or {}
    if isinstance(res.get("text"), str):
        return f"[resource {res.get('uri')}]\n{res['text']}"
    size = len(str(res.get("blob", ""))) * 3 // 4
    return f"[binary resource {res.get('uri')} ({res.get('mimeType', 'unknown type')}, {size:,} bytes)]"


def cost(block: dict[str, Any]) -> int:
    """What a block costs of the budget, in characters."""
    kind = block.get("type")
    if kind == "image":
        size = image_size(block)
        if size is not None:
            return int(math.ceil(size[0] * size[1] / PIXELS_PER_TOKEN) * CHARS_PER_TOKEN)
        return len(str(block.get("data", "")))
    if kind == "audio":
        return len(str(block.get("data", "")))
    if kind in ("text", "resource"):
        return len(render(block))
    return len(str(block))


def image_size(block: dict[str, Any]) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(io.BytesIO(base64.b64decode(str(block.get("data", ""))))) as img:
            return img.size
    except Exception:
        return None


def shrink_image(block: dict[str, Any]) -> dict[str, Any]:
    """The image, downscaled when over the limits; a note when it cannot be made to fit."""
    data = str(block.get("data", ""))
    mime = str(block.get("mimeType", "image/png"))
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return _note(f"[image ({mime}) not shown: its data is not valid base64]")
    try:
        from PIL import Image
    except ImportError:
        if len(raw) <= IMAGE_MAX_BYTES:
            return block
        return _note(f"[image ({mime}, {len(raw):,} bytes) not shown: over the host's "
                     f"{IMAGE_MAX_BYTES:,}-byte limit (pip install 'mcpkit[host]' to downscale)]")  # fmt: skip
    try:
        with Image.open(io.BytesIO(raw)) as img:
            if max(img.size) <= IMAGE_MAX_SIDE and len(raw) <= IMAGE_MAX_BYTES:
                return block
            before = img.size
            img.thumbnail((IMAGE_MAX_SIDE, IMAGE_MAX_SIDE))
            out, out_mime = _encode(img, mime)
    except Exception as exc:  # undecodable, truncated, a decompression bomb, ...
        return _note(f"[image ({mime}) not shown: {type(exc).__name__}]")
    if len(out) > IMAGE_MAX_BYTES:
        return _note(
            f"[image ({mime}, {before[0]}x{before[1]}) not shown: too large even downscaled]"
        )
    return {**block, "data": base64.b64encode(out).decode(), "mimeType": out_mime}


def _encode(img: Any, mime: str) -> tuple[bytes, str]:
    """PNG (JPEG for photographs and JPEG input), halving the size until under the limit."""
    for _ in range(8):
        buf = io.BytesIO()
        if mime != "image/jpeg" and img.mode in ("RGB", "RGBA", "L", "LA", "P"):
            img.save(buf, "PNG", optimize=True)
            if buf.tell() <= IMAGE_MAX_BYTES:
                return buf.getvalue(), "image/png"
            buf = io.BytesIO()
        img.convert("RGB").save(buf, "JPEG", quality=85)
        if buf.tell() <= IMAGE_MAX_BYTES:
            return buf.getvalue(), "image/jpeg"
        img = img.resize((max(1, img.size[0] // 2), max(1, img.size[1] // 2)))
    return buf.getvalue(), "image/jpeg"
