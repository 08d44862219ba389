"""Resources, prompts and completion: the typed requests of `Client` besides tools."""

from __future__ import annotations

from collections.abc import Mapping
from types import EllipsisType
from typing import TYPE_CHECKING, Any

from ..protocol.jsonrpc import JSONObject
from .types import Completion, Prompt, PromptResult, ReadResult, Resource, ResourceTemplate

__all__ = ["CatalogRequests"]


class CatalogRequests:
    """Mixed into `Client`, whose `request` and `_list_all` these are built on."""

    if TYPE_CHECKING:

        async def request(
            self,
            method: str,
            params: Mapping[str, Any] | None = None,
            *,
            timeout: float | EllipsisType | None = ...,
            use_cache: bool = True,
        ) -> JSONObject: ...

        async def _list_all(self, method: str, key: str) -> list[JSONObject]: ...

    async def list_resources(self) -> list[Resource]:
        return [Resource.from_wire(r) for r in await self._list_all("resources/list", "resources")]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        items = await self._list_all("resources/templates/list", "resourceTemplates")
        return [ResourceTemplate.from_wire(t) for t in items]

    async def read_resource(
        self, uri: str, *, timeout: float | EllipsisType | None = ...
    ) -> ReadResult:
        raw = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        contents = raw.get("contents")
        return ReadResult(
            [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else [], raw
        )

    async def list_prompts(self) -> list[Prompt]:
        return [Prompt.from_wire(p) for p in await self._list_all("prompts/list", "prompts")]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> PromptResult:
        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        raw = await self.request("prompts/get", params, use_cache=False)
        messages = raw.get("messages")
        return PromptResult(
            raw.get("description"), messages if isinstance(messages, list) else [], raw
        )

    async def complete(
        self, ref: JSONObject, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> Completion:
        params: JSONObject = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        raw = await self.request("completion/complete", params, use_cache=False)
        c = raw.get("completion") or {}
        return Completion(
            [str(v) for v in c.get("values") or []], c.get("total"), bool(c.get("hasMore")), raw
        )
