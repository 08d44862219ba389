"""Typed views of server results. Each keeps the wire object as `raw`, untouched (schemas are
kept exactly as received: no `$ref` dereferencing, unknown keywords preserved)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol.idempotency import IDEMPOTENT_REPLAY

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What `server/discover` (or legacy `initialize`) said about the server."""

    era: str  # "modern" (2026-07-28 wire) or "legacy" (initialize/session wire)
    protocol_version: str
    capabilities: JSON
    name: str | None = None
    version: str | None = None
    instructions: str | None = None
    supported_versions: tuple[str, ...] = ()
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str | None
    input_schema: JSON
    output_schema: JSON | None
    title: str | None
    annotations: JSON
    raw: JSON = field(repr=False)

    @classmethod
    def from_wire(cls, d: JSON) -> Tool:
        return cls(
            name=d["name"],
            description=d.get("description"),
            input_schema=d.get("inputSchema") or {"type": "object"},
            output_schema=d.get("outputSchema"),
            title=d.get("title") or (d.get("annotations") or {}).get("title"),  # TOOL-15
            annotations=d.get("annotations") or {},
            raw=d,
        )


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    description: str | None
    mime_type: str | None
    raw: JSON = field(repr=False)

    @classmethod
    def from_wire(cls, d: JSON) -> Resource:
        return cls(
            d["uri"], str(d.get("name") or d["uri"]), d.get("description"), d.get("mimeType"), d
        )


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    description: str | None
    mime_type: str | None
    raw: JSON = field(repr=False)

    @classmethod
    def from_wire(cls, d: JSON) -> ResourceTemplate:
        return cls(
            d["uriTemplate"],
            str(d.get("name") or d["uriTemplate"]),
            d.get("description"),
            d.get("mimeType"),
            d,
        )


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    description: str | None
    arguments: list[JSON]
    raw: JSON = field(repr=False)

    @classmethod
    def from_wire(cls, d: JSON) -> Prompt:
        return cls(d["name"], d.get("description"), list(d.get("arguments") or []), d)


@dataclass(frozen=True, slots=True)
class CallResult:
    """A `tools/call` result. A missing `isError` means success (TOOL-23).

    `idempotency_key`: the key the call carried (given or generated), for retrying it later."""

    content: list[JSON]
    structured_content: Any
    is_error: bool
    raw: JSON = field(repr=False)
    idempotency_key: str | None = None

    @property
    def replayed(self) -> bool:
        """The server answered with the result of an earlier call under the same key."""
        meta = self.raw.get("_meta")
        return isinstance(meta, dict) and meta.get(IDEMPOTENT_REPLAY) is True

    @property
    def text(self) -> str:
        """The text blocks joined: what most callers want to show."""
        return "\n".join(c.get("text", "") for c in self.content if c.get("type") == "text")

    @classmethod
    def from_wire(cls, d: JSON, idempotency_key: str | None = None) -> CallResult:
        content = d.get("content")
        return cls(
            content=[c for c in content if isinstance(c, dict)]
            if isinstance(content, list)
            else [],
            structured_content=d.get("structuredContent"),
            is_error=d.get("isError") is True,
            raw=d,
            idempotency_key=idempotency_key,
        )


@dataclass(frozen=True, slots=True)
class ReadResult:
    contents: list[JSON]
    raw: JSON = field(repr=False)

    @property
    def text(self) -> str:
        return "\n".join(c["text"] for c in self.contents if isinstance(c.get("text"), str))


@dataclass(frozen=True, slots=True)
class PromptResult:
    description: str | None
    messages: list[JSON]
    raw: JSON = field(repr=False)


@dataclass(frozen=True, slots=True)
class Completion:
    values: list[str]
    total: int | None
    has_more: bool
    raw: JSON = field(repr=False)
