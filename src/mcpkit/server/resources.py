"""Resources and resource templates (RES-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic_core import ValidationError

from ..protocol.content import Annotations, Icon
from ..protocol.errors import InvalidParams
from .context import Context
from .docstrings import parse_doc
from .handlers import invoke, is_async_callable
from .results import resource_contents
from .signature import Signature, format_validation_error
from .uri_template import UriTemplate


def _definition(
    key: str,
    value: str,
    name: str,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: Annotations | None,
    icons: list[Icon] | None,
    meta: dict[str, Any] | None,
) -> dict[str, Any]:
    d: dict[str, Any] = {key: value, "name": name}
    if title:
        d["title"] = title
    if description:
        d["description"] = description
    if mime_type:
        d["mimeType"] = mime_type
    if annotations is not None:
        d["annotations"] = annotations.to_wire()
    if icons:
        d["icons"] = [i.to_wire() for i in icons]
    if meta:
        d["_meta"] = meta
    return d


def _no_principal(sig: Signature, what: str) -> None:
    if sig.principal_params:
        raise TypeError(f"{what}: FromPrincipal is for tools; read ctx.auth in resources")


class Resource:
    """A resource at a fixed URI; the handler takes no arguments (or only a Context)."""

    __slots__ = ("context_param", "definition", "fn", "is_async", "mime_type", "scopes", "uri")

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        self.uri = uri
        self.scopes = frozenset(scopes)
        self.fn = fn
        self.is_async = is_async_callable(fn)
        sig = Signature(fn, model_name="resource_arguments")
        if sig.names:
            raise TypeError(
                f"resource {uri!r} takes no arguments; use a URI template for {sig.names}"
            )
        self.context_param = sig.context_param
        _no_principal(sig, uri)
        self.mime_type = mime_type
        desc = description if description is not None else parse_doc(fn).description
        self.definition: dict[str, Any] = _definition(
            "uri", uri, name or fn.__name__, title, desc, mime_type, annotations, icons, meta
        )

    async def read(self, uri: str, ctx: Context | None) -> list[dict[str, Any]]:
        value = await invoke(self.fn, self.is_async, {}, self.context_param, ctx)
        return resource_contents(value, uri, self.mime_type)


class ResourceTemplate:
    """A family of resources: `test://items/{id}`; variables become handler arguments."""

    __slots__ = (
        "context_param",
        "definition",
        "fn",
        "is_async",
        "mime_type",
        "scopes",
        "signature",
        "template",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        self.template = UriTemplate(uri_template)
        self.scopes = frozenset(scopes)
        self.fn = fn
        self.is_async = is_async_callable(fn)
        self.signature = Signature(fn, model_name="template_arguments", all_strings=True)
        self.context_param = self.signature.context_param
        _no_principal(self.signature, uri_template)
        if set(self.signature.names) != set(self.template.variables):
            raise TypeError(
                f"template {uri_template!r} has variables {self.template.variables} but "
                f"{fn.__qualname__} takes {self.signature.names}"
            )
        self.mime_type = mime_type
        desc = description if description is not None else parse_doc(fn).description
        self.definition: dict[str, Any] = _definition(
            "uriTemplate",
            uri_template,
            name or fn.__name__,
            title,
            desc,
            mime_type,
            annotations,
            icons,
            meta,
        )

    def match(self, uri: str) -> dict[str, str] | None:
        return self.template.match(uri)

    async def read(
        self, uri: str, variables: dict[str, str], ctx: Context | None
    ) -> list[dict[str, Any]]:
        try:
            kwargs = self.signature.validate(variables)
        except ValidationError as exc:
            raise InvalidParams(
                f"Invalid resource URI {uri!r}: {format_validation_error(exc)}", {"uri": uri}
            ) from exc
        value = await invoke(self.fn, self.is_async, kwargs, self.context_param, ctx)
        return resource_contents(value, uri, self.mime_type)
