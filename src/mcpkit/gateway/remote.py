"""A backend's tools, prompts, resources and templates as entries of the front `Server`'s
registries: lists, pagination, scopes, caching, both eras and tasks then work as they do for
local ones. Each entry knows its backend link and its name there; calls go to the front's
`call_tool` / `get_prompt` (reads have their own method handler: `front.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..protocol.headers import HeaderParam, InvalidHeaderAnnotation, find_header_params
from ..server.context import Context
from ..server.prompts import Prompt
from ..server.registered import TaskSupport
from ..server.resources import Resource, ResourceTemplate
from ..server.tools import GivenTool
from ..server.uri_template import UriTemplate

if TYPE_CHECKING:
    from .link import UpstreamLink

ToolRun = Callable[["RemoteTool", dict[str, Any], Context | None], Awaitable[dict[str, Any]]]
PromptRun = Callable[["RemotePrompt", dict[str, Any], Context | None], Awaitable[dict[str, Any]]]


def header_params(definition: dict[str, Any]) -> list[HeaderParam] | None:
    """The `x-mcp-header` parameters of a backend's tool; None when they are invalid (such a
    tool is not offered: TR-XMH-07)."""
    schema = definition.get("inputSchema")
    try:
        return find_header_params(schema) if isinstance(schema, dict) else []
    except InvalidHeaderAnnotation:
        return None


class RemoteTool(GivenTool):
    """A backend's tool under its front name: the backend's definition (validation, schema
    and result shaping are the backend's). On a backend that serves the tasks extension it
    may become a task: when the front declared the extension and the backend answers with one
    (`task_start="handler"`)."""

    __slots__ = ("accepts", "link", "remote", "run")

    def __init__(
        self,
        link: UpstreamLink,
        remote: str,
        definition: dict[str, Any],
        run: ToolRun,
        *,
        headers: list[HeaderParam],
        scopes: Iterable[str] = (),
        accepts: frozenset[str] = frozenset(),
        tasks: bool = False,
    ) -> None:
        task: TaskSupport | None = "optional" if tasks else None
        super().__init__(
            definition, header_params=headers, scopes=scopes, task=task, task_start="handler"
        )
        self.link = link
        self.remote = remote
        self.run = run
        #: The argument names the backend's schema has (the front's may show fewer).
        self.accepts = accepts

    async def call(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        return await self.run(self, arguments, ctx)


class RemotePrompt(Prompt):
    __slots__ = ("link", "remote", "run")

    def __init__(
        self,
        link: UpstreamLink,
        remote: str,
        definition: dict[str, Any],
        run: PromptRun,
        *,
        scopes: Iterable[str] = (),
    ) -> None:
        self.link = link
        self.remote = remote
        self.run = run
        self.name = str(definition["name"])
        self.definition = definition
        self.description = definition.get("description")
        self.scopes = frozenset(scopes)
        self.context_param = "ctx"

    async def get(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        return await self.run(self, arguments, ctx)


class RemoteResource(Resource):
    __slots__ = ("link", "remote")
    link: UpstreamLink
    remote: str

    def __init__(
        self,
        link: UpstreamLink,
        remote: str,
        definition: dict[str, Any],
        *,
        scopes: Iterable[str] = (),
    ) -> None:
        self.uri = str(definition["uri"])
        _listed(self, link, remote, definition, scopes)


class RemoteTemplate(ResourceTemplate):
    __slots__ = ("link", "remote")
    link: UpstreamLink
    remote: str

    def __init__(
        self,
        link: UpstreamLink,
        remote: str,
        definition: dict[str, Any],
        *,
        scopes: Iterable[str] = (),
    ) -> None:
        self.template = ListedTemplate(str(definition["uriTemplate"]))
        _listed(self, link, remote, definition, scopes)

    def match(self, uri: str) -> dict[str, str] | None:
        return None  # reads are routed by the front, never matched here


def _listed(
    entry: RemoteResource | RemoteTemplate,
    link: UpstreamLink,
    remote: str,
    definition: dict[str, Any],
    scopes: Iterable[str],
) -> None:
    """What a listed resource or template entry holds (its reads go to the front)."""
    entry.link = link
    entry.remote = remote
    entry.definition = definition
    entry.mime_type = definition.get("mimeType")
    entry.scopes = frozenset(scopes)
    entry.context_param = None


class ListedTemplate(UriTemplate):
    """A template string as a backend listed it (RFC 6570 operators mcpkit does not match
    included): known by its text, for completion refs."""

    __slots__ = ()

    def __init__(self, template: str) -> None:
        self._template = template
        self._variables: tuple[str, ...] = ()
