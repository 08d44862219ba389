"""The 2025-11-25 era from the client side: `initialize`, sessions, server→client requests.

Used when era detection finds a legacy server. The same `InputHandlers` that fulfil MRTR
answer the server's real `elicitation/create`, `sampling/createMessage` and `roots/list`
requests here, and `ping`. The transport opens the session's channel, as its capabilities
declare (`open_session`): over HTTP it adds `Mcp-Session-Id`, the standalone GET stream,
resumption with `Last-Event-ID` after the server's `retry`, and DELETE on close
(`legacy_http.py`); over stdio the process is the session (`legacy_stdio.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import MCPError, MethodNotFound, error_from_wire
from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.versions import LEGACY_LATEST, LEGACY_VERSIONS
from .deadline import Deadline, no_response
from .errors import ClientError, InvalidResponse, RequestTimeout
from .inputs import InputHandlers, NoHandler
from .session import response_message
from .transport import SessionChannel, Transport
from .types import ServerInfo

if TYPE_CHECKING:
    from .session import ClientSession

#: Versions we accept from `initialize` (newest first).
ACCEPTED = LEGACY_VERSIONS


class LegacyClientSession:
    """The client's side of one 2025-11-25 session (the server's is
    `mcpkit.server.legacy.LegacySession`)."""

    def __init__(
        self,
        transport: Transport,
        handlers: InputHandlers,
        session: ClientSession,
        *,
        on_notification: Callable[[Notification], Any],
        extensions: JSONObject | None = None,
    ) -> None:
        """`session`: the connection's modern session, whose id counter this one shares (the
        era probe and every other request draw from it, so a late answer to an abandoned
        request can never be taken for another's), its client info, log level and trace.
        `extensions`: declared in `initialize` besides the handlers' capabilities (VER-07)."""
        self.handlers = handlers
        self.client_info = session.client_info or {"name": "mcpkit", "version": "0"}
        self.log_level = session.log_level
        self.on_notification = on_notification
        self.extensions = extensions or {}
        self.trace = session.trace
        self._next_id = session.next_id
        self._listeners: list[asyncio.Queue[Notification]] = []
        open_session = transport.capabilities.open_session
        if open_session is None:
            kind = transport.capabilities.kind
            raise ClientError(
                f"the server speaks 2025-11-25 only, and this {kind} transport declares no "
                f"sessions (open_session): connect over HTTP or stdio"
            )
        self.channel: SessionChannel = open_session(self.answer, self._notification)
        self.protocol_version = LEGACY_LATEST

    async def initialize(self, timeout: float | None) -> ServerInfo:
        caps = self.handlers.capabilities()
        if "roots" in caps:
            caps["roots"] = {"listChanged": False}
        if self.extensions:
            caps["extensions"] = self.extensions  # VER-07
        params = {
            "protocolVersion": LEGACY_LATEST,
            "capabilities": caps,
            "clientInfo": self.client_info,
        }
        result = await self._send("initialize", params, timeout)
        version = result.get("protocolVersion")
        if version not in ACCEPTED:
            raise ClientError(
                f"the server answered initialize with protocol version {version!r}, "
                f"which this client does not speak"
            )
        self.protocol_version = version
        self.channel.session_ready(version)
        try:
            async with asyncio.timeout(timeout):
                await self.channel.notify("notifications/initialized", None)
        except TimeoutError as exc:
            raise RequestTimeout(
                f"notifications/initialized was not accepted within {timeout} s"
            ) from exc
        await self.channel.open_stream()
        capabilities = result.get("capabilities") or {}
        if self.log_level is not None and "logging" in capabilities:
            await self._send("logging/setLevel", {"level": self.log_level}, timeout)
        info = result.get("serverInfo") or {}
        return ServerInfo(
            era="legacy",
            protocol_version=version,
            capabilities=capabilities,
            name=info.get("name"),
            version=info.get("version"),
            instructions=result.get("instructions"),
            supported_versions=(version,),
            raw=result,
        )

    def detach(self) -> None:
        """`initialize` showed a modern server after all: give the transport back as it was."""
        self.channel.detach()

    async def request(
        self,
        method: str,
        params: JSONObject,
        *,
        timeout: float | None,
        deadline: Deadline | None = None,
    ) -> JSONObject:
        meta = params.get("_meta")
        if isinstance(meta, dict):  # only progressToken means something on this wire
            meta = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
            params = (
                {**params, "_meta": meta}
                if meta
                else {k: v for k, v in params.items() if k != "_meta"}
            )
        return await self._send(method, params, timeout, deadline)

    async def _send(
        self,
        method: str,
        params: JSONObject | None,
        timeout: float | None,
        deadline: Deadline | None = None,
    ) -> JSONObject:
        request_id = self._next_id()
        scope = asyncio.timeout(timeout) if deadline is None else deadline.scope()
        try:
            async with scope:
                if self.trace is not None:
                    sent = {"jsonrpc": "2.0", "id": request_id, "method": method}
                    self.trace("send", {**sent, "params": params or {}})
                response = await self.channel.request(request_id, method, params or {})
                if self.trace is not None:
                    self.trace("recv", response_message(response))
        except TimeoutError as exc:
            no_response(method, exc, deadline, timeout)
        if response.error is not None:
            raise error_from_wire(response.error)
        if not isinstance(response.result, dict):
            raise InvalidResponse(f"{method}: the result is not an object")
        return response.result

    async def answer(self, method: str, params: JSONObject) -> JSONObject:
        """A server→client request, answered by the same handlers as MRTR."""
        if method == "ping":
            return {}
        try:
            return await self.handlers.answer(method, params)
        except NoHandler as exc:
            raise MethodNotFound(str(exc)) from None
        except MCPError:
            raise

    async def _notification(self, note: Notification) -> None:
        for queue in self._listeners:
            queue.put_nowait(note)
        out = self.on_notification(note)
        if asyncio.iscoroutine(out):
            await out

    async def listen(
        self, wanted: JSONObject, timeout: float | None
    ) -> AsyncGenerator[JSONObject, None]:
        """Legacy list_changed notifications arrive on the session; URIs via resources/subscribe.
        Yields wire-shaped messages, starting with a local acknowledgement like a modern stream."""
        kinds = {
            "notifications/tools/list_changed": wanted.get("toolsListChanged"),
            "notifications/prompts/list_changed": wanted.get("promptsListChanged"),
            "notifications/resources/list_changed": wanted.get("resourcesListChanged"),
        }
        uris = list(wanted.get("resourceSubscriptions") or [])
        queue: asyncio.Queue[Notification] = asyncio.Queue()
        self._listeners.append(queue)
        try:
            for uri in uris:
                await self._send("resources/subscribe", {"uri": uri}, timeout)
            yield {
                "method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": wanted},
            }
            while True:
                note = await queue.get()
                if kinds.get(note.method) or (
                    note.method == "notifications/resources/updated"
                    and (note.params or {}).get("uri") in uris
                ):
                    yield {"method": note.method, "params": note.params}
        finally:
            self._listeners.remove(queue)
            for uri in uris:
                with contextlib.suppress(MCPError, ClientError):
                    await self._send("resources/unsubscribe", {"uri": uri}, min(timeout or 5, 5))

    async def close(self, timeout: float | None = 5.0) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.channel.end_session()
