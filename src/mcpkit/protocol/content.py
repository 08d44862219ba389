"""Content blocks and other small wire objects, as frozen dataclasses with `to_wire()`.

Handlers may return these, plain dicts in wire shape, or plain Python values (see
`mcpkit.server.results`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

Role = Literal["user", "assistant"]


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


def _compact(obj: Any, wire: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The fields of `obj` that are set, each under its wire name: `wire` pairs them."""
    d: dict[str, Any] = {}
    for name, key in wire:
        value = getattr(obj, name)
        if value is not None:
            d[key] = value
    return d


_ANNOTATIONS = (
    ("audience", "audience"),
    ("priority", "priority"),
    ("last_modified", "lastModified"),
)
_ICON = (("src", "src"), ("mime_type", "mimeType"), ("sizes", "sizes"), ("theme", "theme"))
_TOOL_ANNOTATIONS = (
    ("title", "title"),
    ("read_only_hint", "readOnlyHint"),
    ("destructive_hint", "destructiveHint"),
    ("idempotent_hint", "idempotentHint"),
    ("open_world_hint", "openWorldHint"),
)


@dataclass(frozen=True, slots=True)
class Annotations:
    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return _compact(self, _ANNOTATIONS)


@dataclass(frozen=True, slots=True)
class Icon:
    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None

    def to_wire(self) -> dict[str, Any]:
        return _compact(self, _ICON)


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Hints only; clients must not trust them from untrusted servers (TOOL-12)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    def to_wire(self) -> dict[str, Any]:
        return _compact(self, _TOOL_ANNOTATIONS)


def _annotated(
    d: dict[str, Any], annotations: Annotations | None, meta: dict[str, Any] | None
) -> dict[str, Any]:
    if annotations is not None:
        d["annotations"] = annotations.to_wire()
    if meta is not None:
        d["_meta"] = meta
    return d


@dataclass(frozen=True, slots=True)
class TextContent:
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        return _annotated({"type": "text", "text": self.text}, self.annotations, self.meta)


@dataclass(frozen=True, slots=True)
class _BinaryContent:
    """Base64 data with its MIME type: what an image and an audio clip share on the wire."""

    kind: ClassVar[str]
    data: str  # base64
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None

    @classmethod
    def from_bytes(cls, raw: bytes, mime_type: str) -> Self:
        return cls(base64.b64encode(raw).decode("ascii"), mime_type)

    def to_wire(self) -> dict[str, Any]:
        d = {"type": self.kind, "data": self.data, "mimeType": self.mime_type}
        return _annotated(d, self.annotations, self.meta)


@dataclass(frozen=True, slots=True)
class ImageContent(_BinaryContent):
    kind: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class AudioContent(_BinaryContent):
    kind: ClassVar[str] = "audio"


@dataclass(frozen=True, slots=True)
class TextResourceContents:
    uri: str
    text: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        return _contents(self.uri, self.mime_type, "text", self.text, self.meta)


@dataclass(frozen=True, slots=True)
class BlobResourceContents:
    uri: str
    blob: str  # base64
    mime_type: str | None = None
    meta: dict[str, Any] | None = None

    @classmethod
    def from_bytes(cls, uri: str, raw: bytes, mime_type: str | None = None) -> BlobResourceContents:
        return cls(uri, base64.b64encode(raw).decode("ascii"), mime_type)

    def to_wire(self) -> dict[str, Any]:
        return _contents(self.uri, self.mime_type, "blob", self.blob, self.meta)


ResourceContents = TextResourceContents | BlobResourceContents


def _contents(
    uri: str, mime_type: str | None, key: str, value: str, meta: dict[str, Any] | None
) -> dict[str, Any]:
    """A resource's contents on the wire: text or blob (`key`) between the MIME type and `_meta`."""
    d: dict[str, Any] = {"uri": uri}
    _put(d, "mimeType", mime_type)
    d[key] = value
    _put(d, "_meta", meta)
    return d


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        d = {"type": "resource", "resource": self.resource.to_wire()}
        return _annotated(d, self.annotations, self.meta)


@dataclass(frozen=True, slots=True)
class ResourceLink:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        _put(d, "title", self.title)
        _put(d, "description", self.description)
        _put(d, "mimeType", self.mime_type)
        _put(d, "size", self.size)
        if self.icons:
            d["icons"] = [i.to_wire() for i in self.icons]
        return _annotated(d, self.annotations, self.meta)


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
CONTENT_TYPE_NAMES = frozenset({"text", "image", "audio", "resource_link", "resource"})


@dataclass(slots=True)
class CallToolResult:
    """Full control over a tools/call result."""

    content: list[ContentBlock | dict[str, Any]] = field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: Role
    content: ContentBlock | dict[str, Any]

    def to_wire(self) -> dict[str, Any]:
        c = self.content
        return {"role": self.role, "content": c if isinstance(c, dict) else c.to_wire()}


@dataclass(frozen=True, slots=True)
class Implementation:
    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None

    def to_wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "version": self.version}
        _put(d, "title", self.title)
        _put(d, "description", self.description)
        _put(d, "websiteUrl", self.website_url)
        if self.icons:
            d["icons"] = [i.to_wire() for i in self.icons]
        return d
