"""The host's own tools, offered next to the servers' ones when they are useful:

- `search_tools(query, limit)`: deferred loading, when the catalogue is over its budget;
- `read_result(handle, offset, limit)`: pages through output the budget held back;
- `read_resource(uri, server)`: reads a resource a server listed or linked in a result, from
  that server only, under the same consent policy as tool calls;
- `task_status(task)`, `cancel_task(task)`: calls running in the background (`task_tools.py`).

Host tool names carry no `server__` prefix, so no server tool can take their place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from . import task_tools
from .background import BackgroundCalls
from .catalog import ToolCatalog
from .consent import PendingCall
from .conversation import ToolCall, ToolResult, ToolSpec
from .embeddings import EmbeddingUnavailable
from .resources import ResourceIndex
from .results import ResultStore, fit

Consent = Callable[[PendingCall], Awaitable[bool]]

SEARCH_TOOLS = "search_tools"
READ_RESULT = "read_result"
READ_RESOURCE = "read_resource"


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(name, description, {**schema, "additionalProperties": False})


SEARCH_SPEC = _spec(
    SEARCH_TOOLS,
    "Find tools for a task. Only some of the available tools are loaded; describe what you "
    "want to do and the best-matching tools become available to call from your next step.",
    {
        "query": {"type": "string", "description": "What you want to do, in a few words."},
        "limit": {"type": "integer", "minimum": 1, "description": "At most this many tools."},
    },
    ["query"],
)
READ_RESULT_SPEC = _spec(
    READ_RESULT,
    "Read more of a tool result the host truncated, by the handle its note names.",
    {
        "handle": {"type": "string", "description": 'The handle from the note, e.g. "r1".'},
        "offset": {"type": "integer", "minimum": 0, "description": "First character to read."},
        "limit": {"type": "integer", "minimum": 1, "description": "At most this many characters."},
    },
    ["handle"],
)
READ_RESOURCE_SPEC = _spec(
    READ_RESOURCE,
    "Read a resource (file, document, record) by URI: one a tool result linked to, or one a "
    "server listed. Give the server that linked or listed it when several could have.",
    {
        "uri": {"type": "string", "description": "The resource's URI."},
        "server": {"type": "string", "description": "The server that linked or listed it."},
    },
    ["uri"],
)


def _text(call: ToolCall, text: str, *, error: bool = False) -> ToolResult:
    return ToolResult(call.id, [{"type": "text", "text": text}], is_error=error)


@dataclass(eq=False)
class HostTools:
    """One agent's host tools and the state behind them."""

    catalog: ToolCatalog
    store: ResultStore
    resources: ResourceIndex
    consent: Consent
    result_tokens: int
    background: BackgroundCalls | None = None
    _search_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    def specs(self) -> list[ToolSpec]:
        out = []
        if self.catalog.deferred:
            out.append(SEARCH_SPEC)
        if len(self.store):
            out.append(READ_RESULT_SPEC)
        if self.resources.readable():
            out.append(READ_RESOURCE_SPEC)
        if self.background is not None:
            out.extend(task_tools.specs(self.background))
        return out

    def handles(self, name: str) -> bool:
        if self.background is not None and name in task_tools.NAMES:
            return True
        return name in (SEARCH_TOOLS, READ_RESULT, READ_RESOURCE)

    async def run(self, call: ToolCall) -> ToolResult:
        args = call.arguments
        if self.background is not None and call.name in task_tools.NAMES:
            return await task_tools.run(self.background, call)
        if call.name == SEARCH_TOOLS:
            return await self._search(call, args)
        if call.name == READ_RESULT:
            return self._read_result(call, args)
        return await self._read_resource(call, args)

    async def _search(self, call: ToolCall, args: dict[str, Any]) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _text(call, "search_tools needs a query: what you want to do.", error=True)
        limit = args.get("limit")
        # In a thread: embedding a new catalogue takes seconds of CPU (once per process).
        async with self._search_lock:
            try:
                found = await asyncio.to_thread(
                    self.catalog.search, query, limit if isinstance(limit, int) else None
                )
            except EmbeddingUnavailable as exc:  # "ranker": "hybrid" without the search extra
                return _text(call, f"search_tools cannot rank: {exc}", error=True)
        if not found:
            return _text(call, f"No tool matches {query!r}; try other words.")
        lines = [
            f"- {s.name}: {(s.description or '').strip().splitlines()[0][:200]}" for s in found
        ]
        return _text(call, "These tools are now available to call:\n" + "\n".join(lines))

    def _read_result(self, call: ToolCall, args: dict[str, Any]) -> ToolResult:
        handle = args.get("handle")
        offset, limit = args.get("offset", 0), args.get("limit")
        page = int(self.result_tokens * 4)
        if not isinstance(offset, int) or (limit is not None and not isinstance(limit, int)):
            return _text(call, "offset and limit must be whole numbers.", error=True)
        try:
            blocks = self.store.read(str(handle), offset, min(limit or page, page))
        except KeyError as exc:
            return _text(call, str(exc.args[0]), error=True)
        return ToolResult(call.id, blocks)

    async def _read_resource(self, call: ToolCall, args: dict[str, Any]) -> ToolResult:
        uri, server = args.get("uri"), args.get("server")
        if not isinstance(uri, str) or (server is not None and not isinstance(server, str)):
            return _text(call, "read_resource needs a uri (and optionally a server).", error=True)
        try:
            link = self.resources.owner(uri, server)
        except LookupError as exc:
            return _text(call, f"The host refused: {exc.args[0]}", error=True)
        pending = PendingCall(
            f"{link.name}__{READ_RESOURCE}",
            link.name,
            READ_RESOURCE,
            {"uri": uri},
            {"readOnlyHint": True, "openWorldHint": False} if link.config.trusted else {},
            link.config.trusted,
            call.id,
        )
        if not await self.consent(pending):
            return _text(call, "The user did not allow reading this resource.", error=True)
        await link.wake()  # a lazy server starts on first use
        if link.client is None:
            return _text(call, f"The server {link.name!r} is not connected.", error=True)
        try:
            with link.in_use():
                read = await link.client.read_resource(uri)
        except (MCPError, ClientError) as exc:
            return _text(call, f"The server could not read {uri}: {exc}", error=True)
        blocks = [{"type": "resource", "resource": c} for c in read.contents]
        fitted = fit(blocks, self.result_tokens, self.store)
        return ToolResult(call.id, fitted.model, user_only=fitted.user_only)
