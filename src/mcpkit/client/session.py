"""`ClientSession`: the modern-era (2026-07-28) client over any `Transport`.

Every request carries the per-request `_meta` fields (BASE-45/47); there is no handshake.
Results come back as plain dicts. Server errors raise `MCPError` subclasses; problems the
client detects itself raise `ClientError` subclasses (BASE-22).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from types import EllipsisType
from typing import Any, TypeVar

from .._version import __version__
from ..protocol.errors import HeaderMismatch, error_from_wire
from ..protocol.idempotency import IDEMPOTENCY_KEY
from ..protocol.jsonrpc import JSONObject, Response
from ..protocol.tasks import declares_tasks
from ..protocol.versions import (
    LATEST,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)
from .connect import make_transport
from .deadline import Deadline, no_response
from .errors import ConnectionClosed, InvalidResponse, StreamBroken
from .lifecycle import AsyncResource
from .pages import Page, collect, read_page
from .stdio import StderrMode
from .transport import NotificationHandler, Transport

__all__ = ["DEFAULT_CLIENT_INFO", "ClientSession", "Trace", "refreshing_tools", "sent_ids"]

#: Who, in this context, wants the JSON-RPC id of each request sent (`(method, id)`): the
#: host shows an MCP App the id of the `tools/call` that made it (SEP-1865 `toolInfo.id`).
#: One ContextVar lookup per request; None (the default) costs nothing more.
sent_ids: ContextVar[Callable[[str, int], None] | None] = ContextVar("sent_ids", default=None)

#: Sees each JSON-RPC message a client sends (`"send"`) or receives (`"recv"`), as a dict.
Trace = Callable[[str, JSONObject], None]

T = TypeVar("T")
DEFAULT_CLIENT_INFO: JSONObject = {"name": "mcpkit", "version": __version__}
#: `input_required` is handled by `Client` (MRTR); anything else unknown is invalid (BASE-09),
#: but for `task` when the session declares the tasks extension (BASE-08).
_KNOWN_RESULT_TYPES = frozenset({"complete", "input_required"})
#: Requests a second delivery could act on twice: re-sent after a lost answer only with a key.
_REPEATS_EFFECTS = frozenset({"tools/call", "tasks/update"})


class ClientSession(AsyncResource):
    """Talks to one server. Use as `async with ClientSession(target) as client: ...`.

    `target` is a URL, a command (string or argv list) or a ready `Transport`. `timeout`
    (seconds, None for none) bounds each request; on expiry the request is cancelled on
    the wire and `RequestTimeout` is raised (CANC-06).
    """

    def __init__(
        self,
        target: str | Sequence[str] | Transport,
        *,
        timeout: float | None = 60.0,
        capabilities: JSONObject | None = None,
        client_info: JSONObject | None = None,
        protocol_version: str = LATEST,
        on_notification: NotificationHandler | None = None,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrMode = "inherit",
    ) -> None:
        self.transport: Transport = make_transport(
            target,
            on_notification=on_notification,
            headers=headers,
            env=env,
            cwd=cwd,
            stderr=stderr,
        )
        self.timeout = timeout
        self.capabilities: JSONObject = dict(capabilities or {})
        self.client_info: JSONObject | None = (
            dict(client_info) if client_info is not None else dict(DEFAULT_CLIENT_INFO)
        )
        self.protocol_version = protocol_version
        self.trace: Trace | None = None
        #: The level sent as `io.modelcontextprotocol/logLevel` on each request, so the server
        #: may send its log messages at or above it (LOG-03/04); None: no logs.
        self.log_level: str | None = None
        #: The server advertised the idempotency extension (`Client` sets it once connected):
        #: only then does a key make a second delivery of a `tools/call` harmless.
        self.honours_keys = False
        self._ids = itertools.count(1)

    async def open(self) -> None:
        """What `async with session:` does first: start the transport."""
        await self.transport.start()

    async def close(self) -> None:
        await self.transport.close()

    def request_meta(self) -> JSONObject:
        """The `_meta` fields this client puts on every request."""
        meta: JSONObject = {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: self.capabilities,
        }
        if self.client_info is not None:
            meta[META_CLIENT_INFO] = self.client_info
        return meta

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | EllipsisType | None = ...,
        deadline: Deadline | None = None,
    ) -> JSONObject:
        """Send one request and return its result. The caller's `_meta` keys win over ours.

        `timeout` overrides the session's for this request (None: wait forever); a `deadline`
        replaces both (a timeout that progress may restart, under an overall maximum).
        A stream that broke before its response is re-sent once with a new id (TR-HTTP-22); so
        is a request whose connection closed before any answer, unless a second delivery could
        repeat its effect (`tools/call`, `tasks/update`) and it carries no idempotency key that
        the server honours (`honours_keys`).
        """
        body: JSONObject = dict(params or {})
        extra = body.get("_meta")
        meta = self.request_meta()
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        meta = {**meta, **(extra if isinstance(extra, Mapping) else {})}
        body["_meta"] = meta
        limit = self.timeout if isinstance(timeout, EllipsisType) else timeout
        scope = asyncio.timeout(limit) if deadline is None else deadline.scope()
        try:
            async with scope:
                request_id = next(self._ids)
                heard = sent_ids.get()
                if heard is not None:
                    heard(method, request_id)
                try:
                    response = await (
                        self.transport.request(request_id, method, body)
                        if self.trace is None
                        else self._exchange(request_id, method, body)
                    )
                except ConnectionClosed as exc:
                    if not (isinstance(exc, StreamBroken) or self._resendable(method, meta)):
                        raise  # it may have run: only a key makes a second delivery safe
                    request_id = next(self._ids)  # same body: the same idempotency key
                    response = await self._exchange(request_id, method, body)
        except TimeoutError as exc:
            no_response(method, exc, deadline, limit)
        if response.error is not None:
            raise error_from_wire(response.error)
        if response.id != request_id:
            raise InvalidResponse(f"response id {response.id!r} does not match {request_id!r}")
        return _check_result(response.result, declares_tasks(self.capabilities))

    async def _exchange(self, request_id: int, method: str, body: JSONObject) -> Response:
        if self.trace is None:
            return await self.transport.request(request_id, method, body)
        self.trace("send", {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body})
        response = await self.transport.request(request_id, method, body)
        self.trace("recv", response_message(response))
        return response

    def _resendable(self, method: str, meta: JSONObject) -> bool:
        return method not in _REPEATS_EFFECTS or (self.honours_keys and IDEMPOTENCY_KEY in meta)

    def next_id(self) -> int:
        return next(self._ids)

    async def discover(self) -> JSONObject:
        """`server/discover`: supported versions, capabilities, server info, instructions."""
        return await self.request("server/discover")

    async def list_tools(self) -> list[JSONObject]:
        """All tools, following `nextCursor` across pages. Over HTTP, tools with invalid
        `x-mcp-header` annotations are left out (TR-XMH-07)."""
        return await self._list_all("tools/list", "tools", self.transport.capabilities.accept_tools)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> JSONObject:
        """`tools/call`. A tool failure comes back as a result with `isError: true`."""
        params: JSONObject = {"name": name, "arguments": dict(arguments or {})}
        return await refreshing_tools(lambda: self.request("tools/call", params), self.list_tools)

    async def list_resources(self) -> list[JSONObject]:
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[JSONObject]:
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> JSONObject:
        return await self.request("resources/read", {"uri": uri})

    async def list_prompts(self) -> list[JSONObject]:
        return await self._list_all("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> JSONObject:
        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return await self.request("prompts/get", params)

    async def _list_all(
        self,
        method: str,
        key: str,
        accept: Callable[[list[JSONObject]], list[JSONObject]] | None = None,
    ) -> list[JSONObject]:
        async def fetch(cursor: str | None) -> Page:
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            items, nxt = read_page(method, key, result)
            return (accept(items) if accept is not None else items), nxt

        return await collect(method, fetch)


async def refreshing_tools(
    send: Callable[[], Awaitable[T]], refresh: Callable[[], Awaitable[Any]]
) -> T:
    """`send()` a `tools/call`; on -32020 (header mismatch) `refresh()` the tool list once and
    send it again: the tool's x-mcp-header set may have changed (TR-XMH-12)."""
    try:
        return await send()
    except HeaderMismatch:
        await refresh()
        return await send()


def response_message(response: Response) -> JSONObject:
    """A response as it was on the wire (for traces)."""
    if response.error is not None:
        return {"jsonrpc": "2.0", "id": response.id, "error": response.error}
    return {"jsonrpc": "2.0", "id": response.id, "result": response.result}


def _check_result(result: Any, tasks: bool) -> JSONObject:
    """BASE-09/10: a missing `resultType` means complete; unknown ones are invalid."""
    if not isinstance(result, dict):
        raise InvalidResponse("the result is not a JSON object")
    kind = result.get("resultType", "complete")
    if kind in _KNOWN_RESULT_TYPES or (tasks and kind == "task"):
        return result
    raise InvalidResponse(f"unknown resultType {kind!r}")
