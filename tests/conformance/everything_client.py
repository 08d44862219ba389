"""The conformance client fixture (../shared/conformance/FIXTURE.md §5-6), built only from public
mcpkit APIs: `everything_client.py <server URL>`, the scenario in MCP_CONFORMANCE_SCENARIO.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcpkit.auth import (
    AuthorizationCode,
    ClientCredentials,
    EnterpriseManaged,
    HeadlessAuthorizer,
    JwtBearer,
    OAuth,
)
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation

#: FIXTURE 7.1 step 5: the Client ID Metadata Document URL basic-cimd expects.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


async def accept_defaults(request: Elicitation) -> dict[str, Any]:
    """Fill the form from the schema's defaults (ELIC-13); confirm anything boolean."""
    content = request.defaults()
    for name, prop in ((request.requested_schema or {}).get("properties") or {}).items():
        if name not in content and isinstance(prop, dict) and prop.get("type") == "boolean":
            content[name] = True
    return {"action": "accept", "content": content}


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "ok"},
        "model": "mcpkit-fixture",
        "stopReason": "endTurn",
    }


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth | None:
    """FIXTURE 7 and 8.4: which grant the scenario's context calls for; None outside auth/."""
    if not scenario.startswith("auth/"):
        return None
    if "idp_id_token" in context:  # SEP-990
        return OAuth(
            EnterpriseManaged(
                client_id=context["client_id"],
                client_secret=context.get("client_secret"),
                idp_token_endpoint=context["idp_token_endpoint"],
                id_token=context["idp_id_token"],
                idp_client_id=context.get("idp_client_id"),
            )
        )
    if "valid_jwt" in context:  # SEP-1933 workload identity
        return OAuth(JwtBearer(context["valid_jwt"], client_id=context.get("client_id")))
    if "private_key_pem" in context:  # SEP-1046, private_key_jwt
        return OAuth(
            ClientCredentials(
                context["client_id"],
                private_key_pem=context["private_key_pem"],
                signing_alg=context.get("signing_algorithm", "ES256"),
            )
        )
    if scenario.startswith("auth/client-credentials"):
        return OAuth(ClientCredentials(context["client_id"], context.get("client_secret")))
    return OAuth(
        AuthorizationCode(
            HeadlessAuthorizer(),
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            issuer=context.get("issuer"),
            client_metadata_url=CIMD_URL,
        )
    )


async def run(url: str, scenario: str, version: str, context: dict[str, Any]) -> None:
    era = "legacy" if version < "2026" else "modern"
    async with Client(
        url,
        era=era,
        elicitation=accept_defaults,
        sampling=sample,
        roots=["file:///tmp"],
        timeout=30,
        auth=oauth_for(scenario, context),
    ) as client:
        tools = await client.list_tools()
        names = [t.name for t in tools]
        if scenario == "tools_call":
            await client.call_tool("add_numbers", {"a": 5, "b": 3})
        elif scenario == "elicitation-sep1034-client-defaults":
            await client.call_tool("test_client_elicitation_defaults", {})
        elif scenario == "sse-retry":
            await client.call_tool("test_reconnection", {})
        elif scenario == "http-standard-headers":
            for tool in tools[:2]:
                await client.call_tool(tool.name, {})
            for resource in (await client.list_resources())[:1]:
                await client.read_resource(resource.uri)
            for prompt in (await client.list_prompts())[:1]:
                await client.get_prompt(
                    prompt.name, {a["name"]: "x" for a in prompt.arguments if a.get("required")}
                )
        elif scenario == "http-custom-headers":
            for call in context.get("toolCalls") or []:
                await client.call_tool(call["name"], call.get("arguments") or {})
        elif scenario == "http-invalid-tool-headers":
            if "valid_tool" in names:
                await client.call_tool("valid_tool", {"region": "us-west1"})
        elif scenario == "json-schema-2020-12-preservation":
            tool = next(t for t in tools if t.name == "json_schema_2020_12_tool")
            await client.call_tool("json_schema_echo", {"schema": tool.input_schema})
        elif scenario == "sep-2322-client-request-state":
            for name in (
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ):
                await client.call_tool(name, {})
        elif scenario == "request-metadata" and tools:
            await client.call_tool(tools[0].name, {})
        elif scenario.startswith("auth/") and "test-tool" in names:
            await client.call_tool("test-tool", {})
        # initialize, json-schema-ref-no-deref and unknown scenarios: listing tools is the work.


def main() -> None:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        asyncio.run(run(url, scenario, version, context))
    except Exception as exc:  # report, exit non-zero; the harness scores the wire, not the code
        print(f"everything_client: {scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
