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
- Users stay apart: `scoping.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from .._version import __version__
from ..client.http_headers import CALL_HEADERS
from ..host.audit import AuditLog, CallAudit, start_audit
from ..host.config import ConfigError, HostConfig
from ..host.consent import ConsentPolicy, Decision, PendingCall, Ruling
from ..host.naming import ToolNames
from ..host.pins import ToolPins
from ..host.schemas import without
from ..host.settings import HostSettings
from ..protocol.errors import MCPError, MissingRequiredClientCapability
from ..server.auth.access import AccessToken
from ..server.context import Context
from ..server.inputs import InputRequired
from ..server.prefixes import prefix_uri, split_uri, uri_prefix
from ..server.results import error_result
from ..server.server import Server
from .config import BackendRules, GatewaySettings
from .front import Front
from .link import UpstreamLink
from .remote import RemoteTool
from .scoping import HandleScope, TemplateError, render, render_all

#: How often the pin file is checked for approvals made elsewhere (`mcpkit pins approve`).
PIN_CHECK_S = 1.0
_CONSENT_FORM = {
    "type": "object",
    "properties": {
        "remember": {
            "type": "boolean",
            "title": "Allow this tool for the rest of the session",
            "default": False,
        }
    },
}
#: The same question where no grant can be remembered (an anonymous 2026-07-28 caller).
_ONCE_FORM: dict[str, Any] = {"type": "object", "properties": {}}
#: At most this many principals and sessions keep grants (the oldest forgotten first).
MAX_GRANT_HOLDERS = 4096
_REFUSED = {
    "user": "The user did not allow this tool call.",
    "non-interactive": "The gateway denied this call: it needs the user's approval, and this "
    "client cannot ask the user (no form elicitation).",
}


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
        rules = self.settings.consent
        self.policy = ConsentPolicy(
            allow=list(rules.allow),
            ask=list(rules.ask),
            deny=list(rules.deny),
            servers={name: server.consent for name, server in config.servers.items()},
        )
        #: Tools allowed for the rest of the session ("remember"), by `_grant_holder`.
        self.granted: dict[str, set[str]] = {}
        self.audit = audit if audit is not None else _audit(host)
        self.pins = pins if pins is not None else (ToolPins(host.pins) if host.pins else None)
        self.handle_scope = HandleScope(self.settings.handle_ttl)
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
            self.add_backend(server, pins=self.pins, restart=host.restart)

    def rules(self, link: UpstreamLink) -> BackendRules:
        return self.settings.backends.get(link.name) or BackendRules()

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
        if link is None or split is None or not link.up:
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
    async def _call_tool(
        self, tool: RemoteTool, arguments: dict[str, Any], ctx: Context | None
    ) -> dict[str, Any]:
        assert ctx is not None
        link = tool.link
        trusted = link.config.trusted
        pending = PendingCall(
            tool.name,
            link.name,
            tool.remote,
            arguments,
            (tool.definition.get("annotations") or {}) if trusted else {},
            trusted,
            str(ctx.request_id),
        )
        audit = start_audit(
            self.audit,
            "gateway",
            link.name,
            tool.remote,
            str(ctx.request_id),
            arguments,
            principal=ctx.principal,
        )
        owned = sorted(set(link.config.host_owned) & set(arguments))
        if owned:
            # Identity and the like come from the configuration and the caller's token.
            audit.decided("deny", "host-owned")
            audit.finished("denied")
            return error_result(
                f"The gateway refused this call: {', '.join(owned)} can only be set by the gateway."
            )
        ruling = await self._consent(pending, ctx)
        audit.decided(ruling.decision.value, ruling.by)
        if ruling.decision is Decision.DENY:
            audit.finished("denied")
            return error_result(
                _REFUSED.get(ruling.by, "The gateway's consent rules do not allow this tool call.")
            )
        try:
            sent = self._arguments(tool, arguments, ctx.auth)
            headers = render_all(self.rules(link).user_headers, ctx.auth)
        except TemplateError as exc:
            audit.finished("denied", str(exc))
            return error_result(f"The gateway cannot make this call for you: {exc}.")
        return await self._audited(audit, tool, sent, ctx, headers)

    async def _audited(
        self,
        audit: CallAudit,
        tool: RemoteTool,
        sent: dict[str, Any],
        ctx: Context,
        headers: dict[str, str],
    ) -> dict[str, Any]:
        token = CALL_HEADERS.set({**CALL_HEADERS.get(), **headers}) if headers else None
        try:
            result = await super()._call_tool(tool, sent, ctx)
        except InputRequired:
            raise  # a round of input, not the end of the call: recorded when it ends
        except MCPError as exc:
            audit.finished("error", exc.message)
            raise
        except BaseException as exc:
            audit.finished("error", type(exc).__name__)
            raise
        finally:
            if token is not None:
                CALL_HEADERS.reset(token)
        failed = result.get("isError") is True
        audit.finished("tool-error" if failed else "ok", _first_line(result) if failed else None)
        return result

    async def _consent(self, pending: PendingCall, ctx: Context) -> Ruling:
        """The rules decide; "ask" asks the calling client's user through a form."""
        ruling = self.policy.judge(pending)
        if ruling.decision is not Decision.ASK:
            return ruling
        holder = _grant_holder(ctx)
        granted = self.granted.get(holder, set()) if holder is not None else set()
        if pending.alias in granted:
            return Ruling(Decision.ALLOW, "session")
        shown = orjson.dumps(pending.arguments).decode()
        question = ctx.elicit(
            f"Allow {pending.server} > {pending.tool} with {shown[:500]}?",
            _CONSENT_FORM if holder is not None else _ONCE_FORM,
            key="gateway-consent",
        )
        try:
            answer = await question
        except MissingRequiredClientCapability:
            return Ruling(Decision.DENY, "non-interactive")
        if not answer.accepted:
            return Ruling(Decision.DENY, "user")
        if holder is not None and (answer.content or {}).get("remember") is True:
            self.granted.setdefault(holder, set()).add(pending.alias)
            while len(self.granted) > MAX_GRANT_HOLDERS:
                del self.granted[next(iter(self.granted))]  # the oldest holder's grants
        return Ruling(Decision.ALLOW, "user")

    def _arguments(
        self, tool: RemoteTool, arguments: dict[str, Any], access: AccessToken | None
    ) -> dict[str, Any]:
        """What the backend gets: the caller's own handles swapped back, host-owned values
        (from config, or made from the caller's token) for the arguments the tool has."""
        link = tool.link
        sent = dict(arguments)
        if self.rules(link).handles:
            sent = self.handle_scope.unwrap(sent, access.principal if access else None)
        for name, value in link.config.host_owned.items():
            if value is not None and name in tool.accepts:
                sent[name] = render(value, access) if isinstance(value, str) else value
        return sent

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


def _grant_holder(ctx: Context) -> str | None:
    """Whose "for the rest of the session" a grant is: the authenticated principal's, else
    the 2025-11-25 session's. An anonymous caller on the stateless 2026-07-28 wire is nobody
    in particular (every such client looks the same), so it is asked each time."""
    if ctx.principal is not None:
        return f"principal:{ctx.principal}"
    session = ctx.session_id
    return f"session:{session}" if session is not None else None


def _audit(host: HostSettings) -> AuditLog | None:
    return AuditLog(host.audit) if host.audit is not None else None


def _stamp(path: Any) -> tuple[int, int] | None:
    with contextlib.suppress(OSError):
        st = path.stat()
        return (st.st_mtime_ns, st.st_size)
    return None


def _first_line(result: dict[str, Any]) -> str:
    blocks = result.get("content") or []
    text = next((str(b.get("text", "")) for b in blocks if isinstance(b, dict)), "")
    return text.strip().split("\n", 1)[0][:200]
