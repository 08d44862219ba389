"""The gateway's own parts of its tool calls; the rest is the host's call pipeline
(`mcpkit.host.pipeline.for_gateway`: audit, host-owned arguments, pins, consent).

What is the gateway's: the front call (`FrontCall`: its backend tool, request context and the
caller's headers), how the calling client's user is asked (a form elicitation, when the
client declared it), whose session a "yes for this session" belongs to, and the values made
from the caller's token (host-owned arguments and `userHeaders`, `scoping.render`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ..client import Tool
from ..host.pipeline import Call, PendingCall, Refused
from ..host.schemas import AdaptedSchema
from ..host.ui import Answer
from ..protocol.errors import MissingRequiredClientCapability
from ..server.context import Context
from .config import BackendRules
from .remote import RemoteTool
from .scoping import TemplateError, render, render_all

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


@dataclass(slots=True)
class FrontCall:
    """The gateway's handle on one call (`Call.context`)."""

    tool: RemoteTool
    ctx: Context
    rules: BackendRules
    #: The caller's `userHeaders`, rendered from their token (by `caller_values`).
    headers: dict[str, str] = field(default_factory=dict)


def front_call(call: Call) -> FrontCall:
    front = call.context
    if not isinstance(front, FrontCall):
        raise TypeError(f"the call {call.call_id} did not come through the gateway's front")
    return front


def target_tool(tool: RemoteTool) -> tuple[Tool, AdaptedSchema]:
    """The backend's tool as the pipeline sees it: its own name, the front's definition."""
    definition = tool.definition
    schema = definition.get("inputSchema") or {"type": "object"}
    annotations = definition.get("annotations") or {}
    raw = {**definition, "name": tool.remote}
    client_tool = Tool(tool.remote, None, schema, None, None, annotations, raw)
    return client_tool, AdaptedSchema(schema, False)


def grant_holder(call: Call) -> str | None:
    """Whose "for the rest of the session" a grant is: the authenticated principal's, else
    the 2025-11-25 session's. An anonymous caller on the stateless 2026-07-28 wire is nobody
    in particular (every such client looks the same), so it is asked each time."""
    ctx = front_call(call).ctx
    if ctx.principal is not None:
        return f"principal:{ctx.principal}"
    session = ctx.session_id
    return f"session:{session}" if session is not None else None


async def ask_caller(pending: PendingCall, call: Call | None) -> Answer:
    """Consent's question, as a form to the calling client's user (`Refused`: it cannot ask)."""
    if call is None:
        raise Refused("no calling client to ask")
    holder = grant_holder(call)
    shown = orjson.dumps(pending.arguments).decode()
    try:
        answer = await front_call(call).ctx.elicit(
            f"Allow {pending.server} > {pending.tool} with {shown[:500]}?",
            _CONSENT_FORM if holder is not None else _ONCE_FORM,
            key="gateway-consent",
        )
    except MissingRequiredClientCapability:
        raise Refused("this client cannot ask the user (no form elicitation)") from None
    if not answer.accepted:
        return False
    if holder is not None and (answer.content or {}).get("remember") is True:
        return "session"
    return True


def caller_values(call: Call) -> dict[str, Any]:
    """The host-owned values the backend tool gets, from config or made from the caller's
    token; renders the caller's `userHeaders` on the way (`Refused` when a template needs
    what the token does not hold)."""
    front = front_call(call)
    access = front.ctx.auth
    try:
        front.headers = render_all(front.rules.user_headers, access)
        return {
            name: render(value, access) if isinstance(value, str) else value
            for name, value in call.resolved.link.config.host_owned.items()
            if value is not None and name in front.tool.accepts
        }
    except TemplateError as exc:
        raise Refused(f"The gateway cannot make this call for you: {exc}.") from None
