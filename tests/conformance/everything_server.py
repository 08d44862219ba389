"""The conformance "everything" server (../shared/conformance/FIXTURE.md §2-4), built only from
public mcpkit APIs. Serves Streamable HTTP at http://127.0.0.1:$PORT/mcp.

    python tests/conformance/everything_server.py --port 8000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Annotated, Any

from everything_tasks import register as register_task_tools
from pydantic import Field

from mcpkit import (
    AudioContent,
    BlobResourceContents,
    Context,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    Server,
    TextContent,
    TextResourceContents,
    ToolError,
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = Server("mcpkit-everything-server", version="1.0.0")


# -- tools (test_simple_text first: FIXTURE §3) ------------------------------------------------
@server.tool()
async def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
async def test_image_content() -> ImageContent:
    """Returns a 1x1 PNG image."""
    return ImageContent(PNG, "image/png")


@server.tool()
async def test_audio_content() -> AudioContent:
    """Returns a short WAV clip."""
    return AudioContent(WAV, "audio/wav")


@server.tool()
async def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        TextResourceContents(
            "test://embedded-resource", "This is an embedded resource content.", "text/plain"
        )
    )


@server.tool()
async def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    return [
        TextContent("Multiple content types test:"),
        ImageContent(PNG, "image/png"),
        EmbeddedResource(
            TextResourceContents(
                "test://mixed-content-resource",
                json.dumps({"test": "data", "value": 123}),
                "application/json",
            )
        ),
    ]


@server.tool()
async def test_error_handling() -> str:
    """Always fails with a tool error (isError: true)."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 before answering."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"step {step}")
        if step < 100:
            await asyncio.sleep(0.05)
    return "Progress test completed"


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages before answering."""
    for i, text in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        await ctx.info(text)
        if i < 2:
            await asyncio.sleep(0.05)
    return "Logging test completed"


@server.tool(
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }
)
async def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Accepts arguments described by a JSON Schema 2020-12 document."""
    return f"Received: {json.dumps(arguments, sort_keys=True)}"


@server.tool()
async def test_x_mcp_header(
    region: Annotated[
        str | None, Field(description="Region", json_schema_extra={"x-mcp-header": "Region"})
    ] = None,
) -> str:
    """Echoes a parameter that is mirrored into the Mcp-Param-Region header."""
    return f"region={region}"


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the sampling capability (-32021 without it)."""
    ctx.require_capability("sampling")
    return "The request declared sampling."


@server.tool()
async def test_trigger_tool_change() -> str:
    """Announces notifications/tools/list_changed to listen streams."""
    server.notify_tools_changed()
    return "Tool list change announced"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Announces notifications/prompts/list_changed to listen streams."""
    server.notify_prompts_changed()
    return "Prompt list change announced"


@server.tool()
async def test_streaming_elicitation() -> str:
    """Answers normally; never puts a request on the response stream."""
    return "No server-to-client requests on the 2026-07-28 wire."


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs only when the request asked for a log level."""
    await ctx.info("test_logging_tool ran")
    return "Logging tool completed"


# -- server→client requests on the 2025-11-25 session wire (FIXTURE 3.1) -------------------------
# The same ctx.sample / ctx.elicit calls as the MRTR tools below: on a session they are real
# requests to the client; on the 2026-07-28 wire they become input_required rounds.
@server.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer the prompt."""
    reply = await ctx.sample(
        [{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100
    )
    return f"LLM response: {reply.text}"


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email address."""
    answer = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "Your username"},
                "email": {"type": "string", "description": "Your email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose fields carry defaults (SEP-1034)."""
    answer = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": True},
            },
        },
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with every enum shape of SEP-1330."""
    options = ["option1", "option2", "option3"]
    titled = [{"const": f"value{i}", "title": f"Value {i}"} for i in (1, 2, 3)]
    answer = await ctx.elicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": options},
                "titledSingle": {"type": "string", "oneOf": titled},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
                "titledMulti": {"type": "array", "items": {"anyOf": titled}},
            },
        },
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call (2025-11-25 HTTP, SEP-1699); the result follows on the
    stream the client resumes with Last-Event-ID."""
    ctx.close_sse_stream()
    await asyncio.sleep(0.1)  # the "work" that outlasts the first connection
    return "Reconnection test completed"


# -- multi round-trip input (2026-07-28 MRTR; FIXTURE 3.2) ---------------------------------------
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name through elicitation."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    if not answer.accepted:
        return f"The user chose to {answer.action}."
    return f"Hello, {answer.content['name']}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    reply = await ctx.sample("What is the capital of France?", max_tokens=100)
    return f"The model said: {reply.text}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Lists the client's roots."""
    roots = await ctx.list_roots()
    return "Roots: " + ", ".join(r.uri for r in roots)


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Carries its own data through requestState across the round."""
    resumed = ctx.state.get("phase") == "asked"
    ctx.state["phase"] = "asked"
    await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        key="confirm",
    )
    return "state-ok: confirmed" if resumed else "state-missing"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for elicitation, sampling and roots in one round."""
    name, reply, roots = await ctx.gather(
        ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
        ctx.sample("Say hello", max_tokens=50, key="greeting"),
        ctx.list_roots(key="roots"),
    )
    return f"name={name.action}, model={reply.text!r}, roots={len(roots)}"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds: a name, then a colour."""
    first = await ctx.elicit("What is your name?", NAME_SCHEMA, key="step1")
    colour_schema = {"type": "object", "properties": {"color": {"type": "string"}}}
    second = await ctx.elicit("What is your favourite colour?", colour_schema, key="step2")
    return f"Both rounds done: {first.action}, {second.action}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Its requestState is sealed; any change is rejected."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Untampered state, answer {answer.action}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the request declared."""
    if ctx.has_capability("sampling"):
        reply = await ctx.sample("Pick a number", max_tokens=10)
        return f"sampled: {reply.text}"
    if ctx.has_capability("elicitation"):
        answer = await ctx.elicit(
            "Pick a number", {"type": "object", "properties": {"n": {"type": "integer"}}}
        )
        return f"elicited: {answer.action}"
    if ctx.has_capability("roots"):
        return f"roots: {len(await ctx.list_roots())}"
    return "The request declared no input capabilities."


# -- resources ---------------------------------------------------------------------------------
@server.resource(
    "test://static-text",
    name="static-text",
    description="A static text resource",
    mime_type="text/plain",
)
async def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary", name="static-binary", description="A static PNG", mime_type="image/png"
)
async def static_binary() -> BlobResourceContents:
    return BlobResourceContents("test://static-binary", PNG, "image/png")


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource to subscribe to",
    mime_type="text/plain",
)
async def watched_resource() -> str:
    return "Watched resource content"


@server.resource(
    "test://template/{id}/data",
    name="template-data",
    description="Data by id",
    mime_type="application/json",
)
async def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts -----------------------------------------------------------------------------------
@server.prompt()
async def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
async def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
async def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[PromptMessage]:
    """A prompt that embeds a resource."""
    return [
        PromptMessage(
            "user",
            EmbeddedResource(
                TextResourceContents(
                    resourceUri, "Embedded resource content for testing.", "text/plain"
                )
            ),
        ),
        PromptMessage("user", TextContent("Please process the embedded resource above.")),
    ]


@server.prompt()
async def test_prompt_with_image() -> list[PromptMessage]:
    """A prompt with an image."""
    return [
        PromptMessage("user", ImageContent(PNG, "image/png")),
        PromptMessage("user", TextContent("Please analyze the image above.")),
    ]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> list[PromptMessage]:
    """A prompt that first asks the user for context."""
    answer = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}},
        key="user_context",
    )
    context = (answer.content or {}).get("context", "none")
    return [PromptMessage("user", TextContent(f"Use this context: {context}"))]


@server.completion()
async def complete(
    ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str]
) -> list[str]:
    candidates = {"arg1": ["test1", "test2", "testing"], "arg2": ["value1", "value2"]}
    prefix = argument["value"]
    return [c for c in candidates.get(argument["name"], []) if c.startswith(prefix)]


register_task_tools(server)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--stdio", action="store_true")
    args = parser.parse_args()
    if args.stdio:
        server.run("stdio")
    else:
        server.run("http", port=args.port)


if __name__ == "__main__":
    main()
