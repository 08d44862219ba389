"""The fake Anthropic API's prompt cache (`FakeAPI(..., cache=PromptCache())`), computed as
Anthropic's prompt-caching documentation describes it:

- A request is a sequence of blocks in the order the API caches them: each tool definition,
  then each system block (a string system prompt is one block), then each message's content
  blocks (a string content is one block). Prefixes are hashed block by block (the model, the
  section, the message's role and the block's JSON without its `cache_control`), so two prefixes
  match only when every block before the boundary is the same.
- A block marked `cache_control` is a breakpoint; more than 4 in one request is a 400 error.
- Reads: at each breakpoint the cache is looked up at that block boundary and at the boundaries
  of up to 20 blocks before it; the longest prefix found is read (`cache_read_input_tokens`).
- Writes: the prefix up to each breakpoint is stored when it holds at least `minimum` tokens
  (1024 by default, the documented minimum of the Sonnet and Opus 4 models; shorter prefixes
  are never cached, without an error); `cache_creation_input_tokens` counts the tokens from the
  end of what was read to the last breakpoint written.
- `input_tokens` counts the rest: the tokens after the last breakpoint (and before it when the
  prefix was too short to cache).
- An entry lives `ttl` seconds (300, the default "5m"), renewed by every read.

Token counts are estimates, deterministic: a block costs ceil(characters of its compact JSON
/ 4), the API's own rule of thumb of about 4 characters a token.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_BREAKPOINTS = 4
LOOKBACK = 20


@dataclass(frozen=True, slots=True)
class Block:
    section: str  # "tools", "system" or "messages"
    tokens: int
    marked: bool
    digest: bytes  # of the prefix up to and including this block


def blocks(body: dict[str, Any]) -> list[Block]:
    """The request's blocks in cache order, with their prefix digests."""
    out: list[Block] = []
    digest = hashlib.sha256(str(body.get("model")).encode()).digest()
    for section, role, block in _parts(body):
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        text = json.dumps([section, role, plain], sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(digest + text.encode()).digest()
        tokens = math.ceil(len(json.dumps(plain, separators=(",", ":"))) / 4)
        out.append(Block(section, tokens, "cache_control" in block, digest))
    return out


def _parts(body: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for tool in body.get("tools") or []:
        yield "tools", "", tool
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        yield "system", "", block
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content:
            yield "messages", message["role"], block


@dataclass
class PromptCache:
    """One API's cache, shared by every request made to it (see the module docstring)."""

    minimum: int = 1024
    ttl: float = 300.0
    clock: Callable[[], float] = time.monotonic
    entries: dict[bytes, float] = field(default_factory=dict)  # prefix digest → expiry
    #: Each request's usage as computed, with the tokens of its tools and system prompt.
    reports: list[dict[str, int]] = field(default_factory=list)

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """The usage fields of the answer to `body`; raises ValueError over 4 breakpoints."""
        found = blocks(body)
        marks = [i for i, b in enumerate(found) if b.marked]
        if len(marks) > MAX_BREAKPOINTS:
            raise ValueError(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(marks)}."
            )
        upto = [0]
        for b in found:
            upto.append(upto[-1] + b.tokens)  # upto[i + 1]: tokens of blocks 0..i
        now = self.clock()
        self.entries = {k: t for k, t in self.entries.items() if t > now}
        hit = max((self._lookup(found, m, now) for m in marks), default=-1)
        read = upto[hit + 1]
        written_to = hit
        for m in marks:
            if upto[m + 1] >= self.minimum:
                self.entries[found[m].digest] = now + self.ttl
                written_to = max(written_to, m)
        created = upto[written_to + 1] - read
        fixed = sum(b.tokens for b in found if b.section != "messages")
        usage = {
            "input_tokens": upto[-1] - read - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }
        self.reports.append({**usage, "tools_and_system": fixed})
        return usage

    def _lookup(self, found: list[Block], mark: int, now: float) -> int:
        """The last block of the longest cached prefix within the lookback of `mark`; -1."""
        for i in range(mark, max(mark - LOOKBACK, 0) - 1, -1):
            if found[i].digest in self.entries:
                self.entries[found[i].digest] = now + self.ttl  # a read renews the entry
                return i
        return -1
