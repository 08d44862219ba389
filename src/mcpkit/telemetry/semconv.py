"""Names from the OpenTelemetry semantic conventions for MCP and GenAI (status: development),
and the attributes of one MCP request. Plain strings: nothing here imports OpenTelemetry.

Spans are named `{mcp.method.name} {target}`, the target being the tool or prompt name
(`tools/call get_weather`); other methods are named by the method alone (a resource URI is
an attribute, never part of the name: it is high-cardinality).
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import MCPError

# -- attributes (MCP) -----------------------------------------------------------------------
MCP_METHOD_NAME = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_SESSION_ID = "mcp.session.id"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"  # the JSON-RPC error code, as a string
ERROR_TYPE = "error.type"
NETWORK_TRANSPORT = "network.transport"  # "pipe" (stdio) or "tcp" (HTTP)
NETWORK_PROTOCOL_NAME = "network.protocol.name"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
# -- attributes (GenAI) ---------------------------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
EXECUTE_TOOL = "execute_tool"
# -- mcpkit's own (no convention covers them yet) -------------------------------------------
MCPKIT_RESULT_TYPE = "mcpkit.result_type"  # "input_required" (an MRTR round) or "task"
MCPKIT_SERVER = "mcpkit.server"  # the host's name for a server (its config key)
MCPKIT_TOOL = "mcpkit.tool"  # the tool's own name on its server
MCPKIT_ROUND = "mcpkit.round"  # the round of an agent turn, from 1
MCPKIT_OUTCOME = "mcpkit.outcome"  # a tool call: ok, tool-error, error, timeout, unknown, denied
MCPKIT_CONSENT_DECISION = "mcpkit.consent.decision"  # allow or deny
MCPKIT_CONSENT_BY = "mcpkit.consent.by"  # who decided: policy, user, host-owned, ...

# -- metrics --------------------------------------------------------------------------------
SERVER_DURATION = "mcp.server.operation.duration"
CLIENT_DURATION = "mcp.client.operation.duration"
SERVER_SESSION_DURATION = "mcp.server.session.duration"
GEN_AI_CLIENT_DURATION = "gen_ai.client.operation.duration"
GEN_AI_TOKEN_USAGE = "gen_ai.client.token.usage"
SERVER_ACTIVE_REQUESTS = "mcpkit.server.active_requests"
SERVER_LISTEN_STREAMS = "mcpkit.server.listen_streams"
SERVER_SESSIONS = "mcpkit.server.sessions"
SERVER_TASKS = "mcpkit.server.tasks"
SERVER_MRTR_ROUNDS = "mcpkit.server.mrtr.rounds"
CLIENT_MRTR_ROUNDS = "mcpkit.client.mrtr.rounds"
HOST_TOOL_CALL_DURATION = "mcpkit.host.tool_call.duration"
HOST_CONSENT_DECISIONS = "mcpkit.host.consent.decisions"
#: Bucket boundaries (seconds) the conventions give for MCP operation durations.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def request_attributes(method: str, request_id: Any, params: Any) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes of one request, on either side."""
    attrs: dict[str, Any] = {MCP_METHOD_NAME: method}
    if request_id is not None:
        attrs[JSONRPC_REQUEST_ID] = str(request_id)
    name = method
    if type(params) is dict:
        if method == "tools/call":
            tool = params.get("name")
            attrs[GEN_AI_OPERATION_NAME] = EXECUTE_TOOL
            if type(tool) is str:
                attrs[GEN_AI_TOOL_NAME] = tool
                name = f"{method} {tool}"
        elif method == "prompts/get":
            prompt = params.get("name")
            if type(prompt) is str:
                attrs[GEN_AI_PROMPT_NAME] = prompt
                name = f"{method} {prompt}"
        elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            uri = params.get("uri")
            if type(uri) is str:
                attrs[MCP_RESOURCE_URI] = uri
    return name, attrs


def metric_attributes(attrs: dict[str, Any]) -> dict[str, Any]:
    """The low-cardinality subset of a span's attributes that metrics carry."""
    return {k: v for k, v in attrs.items() if k in _METRIC_KEYS}


_METRIC_KEYS = frozenset(
    {
        MCP_METHOD_NAME,
        GEN_AI_TOOL_NAME,
        GEN_AI_PROMPT_NAME,
        GEN_AI_OPERATION_NAME,
        MCP_PROTOCOL_VERSION,
        NETWORK_TRANSPORT,
        ERROR_TYPE,
        RPC_RESPONSE_STATUS_CODE,
        MCPKIT_RESULT_TYPE,
        SERVER_ADDRESS,
        SERVER_PORT,
    }
)


def error_attributes(exc: BaseException) -> tuple[dict[str, Any], str]:
    """`error.type` (and the JSON-RPC code) of a failed request, and the status description:
    the JSON-RPC error message when there is one."""
    if isinstance(exc, MCPError):
        code = str(exc.code)
        return {ERROR_TYPE: code, RPC_RESPONSE_STATUS_CODE: code}, exc.message
    if isinstance(exc, TimeoutError):
        return {ERROR_TYPE: "timeout"}, str(exc) or "timeout"
    kind = type(exc)
    return {ERROR_TYPE: f"{kind.__module__}.{kind.__qualname__}"}, str(exc)
