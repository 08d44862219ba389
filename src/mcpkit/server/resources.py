"""Resources and resource templates (RES-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Unpack

from pydantic_core import ValidationError

from ..protocol.errors import InvalidParams
from .context import Context
from .handlers import invoke
from .registered import Registered, ResourceOptions
from .results import resource_contents
from .signature import format_validation_error
from .uri_template import UriTemplate


class _Readable(Registered):
    """A registration read by URI: a resource or a template (`key` names its URI field)."""

    __slots__ = ("mime_type",)
    key = "uri"
    model_name = "resource_arguments"
    #: Template variables are strings on the wire.
    all_strings = False

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        **options: Unpack[ResourceOptions],
    ) -> None:
        super().__init__(fn, options, model_name=self.model_name, all_strings=self.all_strings)
        self.check(uri)
        self.mime_type = options.get("mime_type")
        body: dict[str, Any] = {"mimeType": self.mime_type} if self.mime_type else {}
        annotations = options.get("annotations")
        if annotations is not None:
            body["annotations"] = annotations.to_wire()
        head = {self.key: uri, "name": name or fn.__name__}
        self.definition = self.describe(options, head, body)

    def check(self, uri: str) -> None:
        """Refuse a handler whose parameters do not fit (at registration)."""
        self.refuse_principal(f"{uri}: FromPrincipal is for tools; read ctx.auth in resources")


class Resource(_Readable):
    """A resource at a fixed URI; the handler takes no arguments (or only a Context)."""

    __slots__ = ("uri",)

    def check(self, uri: str) -> None:
        self.uri = uri
        if self.signature.names:
            raise TypeError(
                f"resource {uri!r} takes no arguments; use a URI template for {self.signature.names}"
            )
        super().check(uri)

    async def read(self, uri: str, ctx: Context | None) -> list[dict[str, Any]]:
        value = await invoke(self.fn, self.is_async, {}, self.context_param, ctx)
        return resource_contents(value, uri, self.mime_type)


class ResourceTemplate(_Readable):
    """A family of resources: `test://items/{id}`; variables become handler arguments."""

    __slots__ = ("template",)
    key = "uriTemplate"
    model_name = "template_arguments"
    all_strings = True

    def check(self, uri: str) -> None:
        self.template = UriTemplate(uri)
        super().check(uri)
        if set(self.signature.names) != set(self.template.variables):
            raise TypeError(
                f"template {uri!r} has variables {self.template.variables} but "
                f"{self.fn.__qualname__} takes {self.signature.names}"
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


class GivenResource(Resource):
    """A resource whose definition is given rather than derived from a function (another
    server's behind a proxy): listed as it is; its subclass answers `read(uri, ctx)`."""

    __slots__ = ()

    def __init__(self, definition: dict[str, Any], *, scopes: Iterable[str] = ()) -> None:
        self.uri = _given_text(definition, "uri")
        self.mime_type = definition.get("mimeType")
        self.given(definition, scopes, "ctx")

    async def read(self, uri: str, ctx: Context | None) -> list[dict[str, Any]]:
        raise NotImplementedError(f"{type(self).__name__} answers its reads itself")


class GivenTemplate(ResourceTemplate):
    """A resource template whose definition is given (another server's behind a proxy):
    listed as it is and known by its text (for completion refs), matching no URI: whoever
    serves it routes its reads (`Server.set_method("resources/read", ...)`)."""

    __slots__ = ()

    def __init__(self, definition: dict[str, Any], *, scopes: Iterable[str] = ()) -> None:
        self.template = UriTemplate(_given_text(definition, "uriTemplate"), matching=False)
        self.mime_type = definition.get("mimeType")
        self.given(definition, scopes, "ctx")


def _given_text(definition: dict[str, Any], key: str) -> str:
    value = definition.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"a resource definition needs a {key!r}: {definition!r:.200}")
    return value
