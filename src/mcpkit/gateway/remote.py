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
from ..server.prompts import GivenPrompt
from ..server.registered import TaskSupport
from ..server.resources import GivenResource, GivenTemplate
from ..server.tools import GivenTool

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


class RemotePrompt(GivenPrompt):
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
        super().__init__(definition, scopes=scopes)
        self.link, self.remote, self.run = link, remote, run

    async def get(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        return await self.run(self, arguments, ctx)


class RemoteResource(GivenResource):
    """A backend's resource under its front URI (its reads are routed by the front)."""

    __slots__ = ("link", "remote")

    def __init__(self, link: UpstreamLink, remote: str, definition: dict[str, Any], **kw: Any):
        super().__init__(definition, **kw)
        self.link, self.remote = link, remote


class RemoteTemplate(GivenTemplate):
    """A backend's template under its front URI template, known by its text."""

    __slots__ = ("link", "remote")

    def __init__(self, link: UpstreamLink, remote: str, definition: dict[str, Any], **kw: Any):
        super().__init__(definition, **kw)
        self.link, self.remote = link, remote
