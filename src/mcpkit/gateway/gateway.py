"""`Gateway`: a fleet from an `mcpServers` file served as one MCP server, with the host's rules
enforced for every call from any MCP client.

- Names: tools and prompts `server__name` as the host shows them to its model (`alias`,
  readable shortening to 64 characters: `host/naming.py`); URIs `server+scheme:...`
  (`server/prefixes.py`), in lists, reads, notifications and the links inside results.
- Who sees what: the front's token must hold a server's `scopes` (and a tool's `toolScopes`)
  for its items to be listed or used (403 `insufficient_scope` otherwise).
- Each call: host-owned arguments sent by the client are refused, then filled from config or
  the caller's token; the consent rules decide (`allow`, `deny`, or `ask`: an elicitation
  to the calling client in form mode when it declared it, a deny otherwise); tools whose
  definition changed since pinned are withheld; one audit line records it.
- Users stay apart: `scoping.py`; a `perUser` backend gets each user's own OAuth token
  (`per_user.py`, its callback served by `http_app`: `callback.py`); a `listPerUser` one is
  listed per caller, each seeing only their own tools (`per_caller.py`).
- A `"start": "lazy"` backend is listed from its record and started on first use (`lazy.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .._version import __version__
from ..client import CallResult, ClientError
from ..client.errors import TransportError
from ..client.http_headers import CALL_HEADERS
from ..host.config import ConfigError, HostConfig
from ..host.connections import Target
from ..host.deadlines import DeadlineExceeded
from ..host.naming import ToolNames
from ..host.pipeline import (
    AuditLog,
    Call,
    Consent,
    ConsentPolicy,
    EventBus,
    Outcome,
    Pipeline,
    ToolPins,
    for_gateway,
    refusals,
)
from ..host.records import store_for
from ..host.retry import OutcomeUnknown
from ..host.schemas import without
from ..host.settings import HostSettings
from ..protocol.idempotency import IDEMPOTENCY_KEY
from ..server.context import Context
from ..server.inputs import InputRequired
from ..server.prefixes import prefix_uri, split_uri, uri_prefix
from ..server.results import error_result
from ..server.server import Server
from .calls import FrontCall, ask_caller, caller_values, front_call, grant_holder, target_tool
from .config import BackendRules, GatewaySettings
from .failures import BackendLost, call_failure
from .forward import caller_key, failed, own_result
from .front import Front
from .link import UpstreamLink
from .per_caller import CallerTools, PerCaller
from .per_user import NotAuthorized, UserCredentials
from .remote import RemoteTool
from .scoping import HandleScope

#: How often the pin file is checked for approvals made elsewhere (`mcpkit pins approve`).
PIN_CHECK_S = 1.0
REFUSALS = refusals("gateway", "this client cannot ask the user (no form elicitation)")


class Gateway(Front):
    """The servers of `config` as one MCP server. Serve it with `run()` / `http_app()` like
    any `Server` (`mcpkit gateway` builds the front's auth from the config)."""

    def __init__(
        self,
        config: HostConfig,
        *,
        settings: GatewaySettings | None = None,
        host: HostSettings | None = None,
        audit: AuditLog | None = None,
        pins: ToolPins | None = None,
        **options: Any,
    ) -> None:
        self.config = config
        self.settings = settings or GatewaySettings.from_config(config)
        host = host or HostSettings.from_config(config)
        super().__init__(
            self.settings.name,
            __version__,
            startup_timeout=host.startup_timeout,
            lifespan=self._watching_pins,
            **options,
        )
        self.per_caller = PerCaller(self)
        if any(rules.list_per_user for rules in self.settings.backends.values()):
            self.tools = CallerTools(self.per_caller.current)
            self.set_method("tools/list", self.per_caller.lister())
            self.set_method("tools/call", self.per_caller.caller(self._methods["tools/call"]))
        rules = self.settings.consent
        self.policy = ConsentPolicy(
            allow=list(rules.allow),
            ask=list(rules.ask),
            deny=list(rules.deny),
            servers={name: server.consent for name, server in config.servers.items()},
        )
        self.audit = audit if audit is not None else _audit(host)
        #: What happens to calls (audit records, decisions), for whoever listens.
        self.events = EventBus()
        #: "Yes for this session" is kept per principal or session (`calls.grant_holder`).
        self.consent = Consent(
            self.policy, ask_caller, self.events, texts=REFUSALS, holder=grant_holder
        )
        self.pipeline = self._pipeline()
        self.pins = pins if pins is not None else (ToolPins(host.pins) if host.pins else None)
        self.handle_scope = HandleScope(self.settings.handle_ttl)
        per_user = any(rules.per_user for rules in self.settings.backends.values())
        #: Each user's own tokens for `perUser` backends (None when there is none).
        self.users = UserCredentials(self.settings) if per_user else None
        #: Where lazy backends' records are kept (`host.cache`, `host.records`; None: off).
        self.records = store_for(host)
        self._schemes: dict[str, str] = {}
        self._by_scheme: dict[str, str] = {}
        for name, server in config.servers.items():
            if server.disabled:
                continue
            scheme = uri_prefix(server.alias or name)
            if scheme in self._by_scheme:
                raise ConfigError(
                    f"{config.source or '<config>'}: servers {self._by_scheme[scheme]!r} and "
                    f"{name!r} give their resources the same URI prefix {scheme!r}; set an alias"
                )
            self._schemes[name], self._by_scheme[scheme] = scheme, name
            self.add_backend(server, pins=self.pins, restart=host.restart, records=self.records)

    def rules(self, link: UpstreamLink) -> BackendRules:
        return self.settings.backends.get(link.name) or BackendRules()

    def listed_per_caller(self, link: UpstreamLink) -> bool:
        return self.rules(link).list_per_user

    def rebuild(self) -> None:
        self.per_caller.clear()  # each caller's tools are found again, from the new catalogue
        super().rebuild()

    # -- naming -------------------------------------------------------------------------
    def name_items(self, kind: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        aliases = {n: s.alias for n, s in self.config.servers.items() if s.alias}
        names = ToolNames(pairs, aliases)
        return {pair: names.alias(*pair) for pair in pairs}

    def front_uri(self, link: UpstreamLink, uri: str) -> str:
        return prefix_uri(self._schemes[link.name], uri)

    def route_uri(self, uri: str) -> tuple[UpstreamLink, str] | None:
        split = split_uri(uri)
        name = self._by_scheme.get(split[0]) if split is not None else None
        link = self.links.get(name) if name is not None else None
        if link is None or split is None or not (link.up or link.idle):
            return None
        return link, split[1]

    def scopes_for(self, link: UpstreamLink, kind: str, name: str) -> frozenset[str]:
        rules = self.rules(link)
        scopes = rules.scopes
        if kind == "tool":
            for pattern, more in rules.tool_scopes:
                if fnmatch.fnmatchcase(name, pattern):
                    scopes = scopes | more
        return scopes

    def tool_definition(self, link: UpstreamLink, definition: dict[str, Any]) -> dict[str, Any]:
        owned = set(link.config.host_owned)
        schema = definition.get("inputSchema")
        if owned and isinstance(schema, dict):
            return {**definition, "inputSchema": without(schema, owned)}
        return definition

    def combined_instructions(self, up: list[UpstreamLink]) -> str | None:
        """Only trusted servers' instructions, each under its name (as the host does)."""
        texts = [
            f"{link.name}: {link.instructions}"
            for link in up
            if link.instructions and link.config.trusted
        ]
        return "\n\n".join(texts) if texts else None

    def http_app(self, **options: Any) -> Any:
        """The MCP endpoint, and the OAuth callback when a backend is `perUser`."""
        if self.users is None:
            return super().http_app(**options)
        from .callback import GatewayApp

        return GatewayApp(self, self.users, **options)

    # -- the pins -----------------------------------------------------------------------
    @asynccontextmanager
    async def _watching_pins(self, server: Server) -> AsyncIterator[None]:
        watcher = asyncio.create_task(self._watch_pins()) if self.pins is not None else None
        try:
            yield None
        finally:
            if watcher is not None:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            if self.users is not None:
                await self.users.close()

    async def _watch_pins(self) -> None:
        """An approval (`mcpkit pins approve`) offers the tool again without a restart."""
        assert self.pins is not None and self.pins.path is not None
        stamp = _stamp(self.pins.path)
        while True:
            await asyncio.sleep(PIN_CHECK_S)
            now = _stamp(self.pins.path)
            if now != stamp:
                stamp = now
                await asyncio.gather(*(link.refresh_pins() for link in self.links.values()))

    # -- one call -------------------------------------------------------------------------
    def _pipeline(self) -> Pipeline:
        """The gateway's chain (`for_gateway`), ending in `_forward`; a round of input
        (`InputRequired`) ends a round, not the call."""
        return for_gateway(
            bus=self.events,
            audit=self.audit,
            consent=self.consent,
            values=caller_values,
            forward=self._forward,
            rounds=(InputRequired,),
            retry=self.settings.retry,
            output_budget=self.settings.output_budget,
        )

    async def _call_tool(
        self, tool: RemoteTool, arguments: dict[str, Any], ctx: Context | None
    ) -> dict[str, Any]:
        """Through the pipeline (`for_gateway`), then `_forward` to the backend; what the
        chain raised or answered is worded here, for the front's caller."""
        assert ctx is not None
        client_tool, schema = target_tool(tool)
        key = ctx.meta.raw.get(IDEMPOTENCY_KEY)
        call = Call(
            tool.name,
            str(ctx.request_id),
            arguments,
            caller="gateway",
            principal=ctx.principal,
            target=Target(tool.link, client_tool, schema),
            key=caller_key(ctx.principal, key) if key is not None else None,
            context=FrontCall(tool, ctx, self.rules(tool.link)),
        )
        try:
            outcome = await self.pipeline(call)
        except OutcomeUnknown as exc:
            return self._failed(tool, ctx, exc.cause)
        except (ClientError, DeadlineExceeded) as exc:
            return self._failed(tool, ctx, exc)
        if outcome.raw is None:
            return error_result(outcome.error or "The call failed.")
        if outcome.fitted is not None:
            return {**outcome.raw.raw, "content": outcome.fitted.model}
        return outcome.raw.raw

    @staticmethod
    def _failed(tool: RemoteTool, ctx: Context, exc: BaseException) -> dict[str, Any]:
        """A call that failed for good, as the front's caller hears it."""
        if isinstance(exc, BackendLost):
            raise exc.error from None
        if not isinstance(exc, ClientError | DeadlineExceeded):
            raise exc
        return failed(ctx, call_failure(tool.name, tool.link, exc))

    async def _forward(self, call: Call) -> Outcome:
        """The end of the gateway's chain: the caller's handles swapped back, their headers
        added, the call forwarded to its backend (`Front.forward_call`: rounds of input,
        tasks) under the clock of the chain's `Deadline`, with the call's idempotency key.
        Raises what went wrong."""
        front = front_call(call)
        sent = call.outgoing()
        if front.rules.handles:
            sent = self.handle_scope.unwrap(sent, front.ctx.principal)
        headers = front.headers
        per_user, link = front.rules.per_user, front.tool.link
        if per_user is not None and self.users is not None and link.config.url is not None:
            try:
                mine = await self.users.headers(link.name, link.config.url, per_user, front.ctx)
            except NotAuthorized as exc:
                return Outcome("denied", error=str(exc))
            headers = {**headers, **mine}
        token = CALL_HEADERS.set({**CALL_HEADERS.get(), **headers}) if headers else None
        meta = {IDEMPOTENCY_KEY: call.key} if call.key is not None else None
        try:
            result = await self.forward_call(front.tool, sent, front.ctx, meta, clock=call.clock)
        except TransportError as exc:
            if exc.status != 401 or per_user is None or self.users is None:
                raise
            return Outcome("denied", error=self.users.rejected(link.name, front.ctx.principal))
        finally:
            if token is not None:
                CALL_HEADERS.reset(token)
        shaped = self.shape_result(front.tool.link, own_result("tools/call", result), front.ctx)
        raw = CallResult.from_wire(shaped)
        kind = "tool-error" if raw.is_error else "ok"
        return Outcome(kind, raw, None, call.key, call.attempt)

    def shape_result(
        self, link: UpstreamLink, result: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        """Links and embedded resources point at the front's URIs; handles are the caller's."""
        for key in ("content", "messages"):
            blocks = result.get(key)
            if isinstance(blocks, list):
                result = {**result, key: [self._block(link, b) for b in blocks]}
        if self.rules(link).handles:
            meta = result.get("_meta")
            body = {k: v for k, v in result.items() if k != "_meta"}
            result = self.handle_scope.wrap(body, ctx.principal)
            if meta is not None:
                result["_meta"] = meta
        return result

    def _block(self, link: UpstreamLink, block: Any) -> Any:
        if not isinstance(block, dict):
            return block
        if block.get("type") == "resource_link" and isinstance(block.get("uri"), str):
            return {**block, "uri": self.front_uri(link, block["uri"])}
        inner = block.get("resource")
        if block.get("type") == "resource" and isinstance(inner, dict) and "uri" in inner:
            return {**block, "resource": {**inner, "uri": self.front_uri(link, str(inner["uri"]))}}
        content = block.get("content")  # a prompt message
        if isinstance(content, dict):
            return {**block, "content": self._block(link, content)}
        return block


def _audit(host: HostSettings) -> AuditLog | None:
    return AuditLog(host.audit) if host.audit is not None else None


def _stamp(path: Any) -> tuple[int, int] | None:
    with contextlib.suppress(OSError):
        st = path.stat()
        return (st.st_mtime_ns, st.st_size)
    return None
