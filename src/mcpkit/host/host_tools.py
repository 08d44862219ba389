"""The host's own tools, offered next to the servers' ones from the first round they could be
useful in (and then all conversation long, so that the tool list never changes):

- `search_tools(query, limit)`: deferred loading, when the catalogue is over its budget;
- `call_found_tool(name, arguments)`: calls a tool a search found and described (`foundTools`
  `"described"`, the default), so that the tool list stays the same all conversation long. The
  arguments are checked against the tool's input schema here, and the call then goes through
  the agent's pipeline as the tool's own call (consent, pins, host-owned arguments, budget,
  audit), under the tool's name;
- `read_result(handle, offset, limit)`: pages through output the budget held back (always:
  every host has an output budget);
- `read_resource(uri, server)`: reads a resource a server listed or linked in a result, from
  that server only, under the same consent policy as tool calls (when a server declares
  resources, or a result linked one);
- `task_status(task)`, `cancel_task(task)`: calls running in the background (`task_tools.py`;
  when background calls are on and a server runs tasks, or tasks of an earlier run are kept).

Host tool names carry no `server__` prefix, so no server tool can take their place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..client import ClientError
from ..protocol.errors import MCPError
from ..protocol.jsonschema import SchemaError, compile_schema, first_errors
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
CALL_FOUND_TOOL = "call_found_tool"


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
CALL_FOUND_SPEC = _spec(
    CALL_FOUND_TOOL,
    "Call a tool search_tools found: its name, and arguments that match its input_schema.",
    {
        key: {"type": kind, "description": text}
        for key, kind, text in (
            ("name", "string", "The found tool's name."),
            ("arguments", "object", "The tool's arguments."),
        )
    },
    ["name", "arguments"],
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
#: Every host tool, in the order they are offered.
ALL_SPECS = (
    SEARCH_SPEC,
    CALL_FOUND_SPEC,
    READ_RESULT_SPEC,
    READ_RESOURCE_SPEC,
    task_tools.TASK_STATUS_SPEC,
    task_tools.CANCEL_TASK_SPEC,
)


def _described(found: list[ToolSpec]) -> str:
    """A search's result when found tools are described: a line per tool, its name and then its
    whole definition (description, input schema) as JSON."""
    lines = [
        f"- {s.name}: "
        + orjson.dumps({"description": s.description, "input_schema": s.input_schema}).decode()
        for s in found
    ]
    return (
        "Call these tools with call_found_tool(name, arguments), the arguments matching the "
        "tool's input_schema:\n" + "\n".join(lines)
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
    #: The host tools offered so far: never withdrawn within a conversation.
    _offered: set[str] = field(default_factory=set, init=False, repr=False)

    def specs(self) -> list[ToolSpec]:
        """The host tools, each from the first round it could become useful in and from then
        on, always in the same order: the tool list stays the same all conversation long (a
        changed list would cost the prompt cache all that follows it)."""
        useful = {
            SEARCH_TOOLS: self.catalog.deferred,
            CALL_FOUND_TOOL: self.catalog.describes_found,
            READ_RESULT: True,  # every host has an output budget, which can cut any result
            READ_RESOURCE: self.resources.could_read(),
        }
        for name in task_tools.NAMES:
            useful[name] = self.background is not None and self.background.could_run()
        self._offered.update(name for name, yes in useful.items() if yes)
        return [spec for spec in ALL_SPECS if spec.name in self._offered]

    def handles(self, name: str) -> bool:
        if self.background is not None and name in task_tools.NAMES:
            return True
        return name in (SEARCH_TOOLS, READ_RESULT, READ_RESOURCE, CALL_FOUND_TOOL)

    def found_call(self, call: ToolCall) -> ToolCall | None:
        """The call of a found tool that `call_found_tool` stands for, its arguments checked
        against the tool's schema; None when they do not match (`run` then says why)."""
        checked = self._check_found(call)
        return checked if isinstance(checked, ToolCall) else None

    def _check_found(self, call: ToolCall) -> ToolCall | str:
        name, arguments = call.arguments.get("name"), call.arguments.get("arguments", {})
        spec = self.catalog.selected.get(name) if isinstance(name, str) else None
        if spec is None:
            return f"There is no tool named {name!r}: call search_tools to find one."
        if not isinstance(arguments, dict):
            return f"The arguments of {name} must be an object."
        try:
            errors = first_errors(compile_schema(spec.input_schema), arguments)
        except SchemaError:
            errors = []  # a schema no validator takes: the server checks the arguments
        if errors:
            found = "; ".join(errors)
            return f"The arguments do not match {name}'s input schema ({found}): fix and retry."
        return ToolCall(call.id, spec.name, arguments)

    async def run(self, call: ToolCall) -> ToolResult:
        args = call.arguments
        if self.background is not None and call.name in task_tools.NAMES:
            return await task_tools.run(self.background, call)
        if call.name == CALL_FOUND_TOOL:
            checked = self._check_found(call)
            reason = checked if isinstance(checked, str) else "The call was not made."
            return _text(call, reason, error=True)
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
        if self.catalog.describes_found:
            return _text(call, _described(found))
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
