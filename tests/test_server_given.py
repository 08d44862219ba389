"""The server's public ways to serve what is not derived from a function: `GivenTool`,
`GivenPrompt`, `GivenResource` and `GivenTemplate` (a definition served as it is, answered by
its subclass) and `set_method` (a method answered by a handler of one's own), as the gateway's
front uses them; over the memory transport."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.server import (
    Context,
    GivenPrompt,
    GivenResource,
    GivenTemplate,
    GivenTool,
    Server,
    ServerRequest,
)
from mcpkit.server.transports.memory import MemoryTransport
from support import meta, record

DEFINITION: dict[str, Any] = {
    "name": "shout",
    "title": "Shout",
    "description": "Say it louder.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "region": {"type": "string", "x-mcp-header": "Region"},
        },
    },
    "annotations": {"readOnlyHint": True},
}


class Shout(GivenTool):
    __slots__ = ("seen",)

    def __init__(self, definition: dict[str, Any], **options: Any) -> None:
        super().__init__(definition, **options)
        self.seen: list[tuple[dict[str, Any], bool]] = []

    async def call(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        self.seen.append((arguments, ctx is not None))
        text = str(arguments.get("text", "")).upper()
        return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


async def request(server: Server, method: str, params: dict[str, Any]) -> Any:
    transport = MemoryTransport(server, trace=record)
    resp = await transport.request(1, method, {**params, "_meta": meta()})
    return resp.result if resp.error is None else resp.error


async def test_a_given_tool_is_served_as_defined_and_answered_by_its_class() -> None:
    server = Server("given")
    tool = Shout(DEFINITION, scopes=["loud"], task="optional", task_start="handler")
    server.add_tool(tool)
    assert tool.header_params and tool.header_params[0].header == "Region"  # TR-XMH-03
    assert (tool.scopes, tool.task, tool.task_start) == (frozenset({"loud"}), "optional", "handler")
    assert server.serves_tasks and server.any_scopes
    assert (await request(server, "tools/list", {}))["tools"] == []  # no `loud` scope here
    server.remove_tool("shout")
    plain = Shout(DEFINITION)
    server.add_tool(plain)
    listed = await request(server, "tools/list", {})
    assert listed["tools"] == [DEFINITION]  # as given: no schema derived, nothing added
    # No validation here (`text` is a number): the subclass answers, with a Context.
    answered = await request(server, "tools/call", {"name": "shout", "arguments": {"text": 7}})
    assert answered["content"] == [{"type": "text", "text": "7"}]
    assert plain.seen == [({"text": 7}, True)]


@pytest.mark.parametrize(
    ("definition", "options", "message"),
    [
        ({"title": "no name"}, {}, "invalid tool name ''"),
        ({"name": "t"}, {"task": "sometimes"}, "task must be 'optional' or 'required'"),
        ({"name": "t"}, {"timeout": 0}, "timeout must be a number of seconds above 0"),
    ],
)
def test_a_given_tool_is_checked_as_a_function_tool_is(
    definition: dict[str, Any], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Shout(definition, **options)


def test_a_given_name_is_the_other_servers_own() -> None:
    # TOOL-13 is a SHOULD: a backend's `get weather` is mirrored as it is, as before.
    assert Shout({**DEFINITION, "name": "get weather"}).name == "get weather"


async def test_set_method_answers_a_method_with_ones_own_handler() -> None:
    server = Server("routed")

    async def read(server: Server, request: ServerRequest) -> Any:
        uri = request.params["uri"]
        contents = [{"uri": uri, "text": f"routed {uri}"}]
        return {"resultType": "complete", "contents": contents, "ttlMs": 0, "cacheScope": "private"}

    assert "code" in await request(server, "resources/read", {"uri": "x://a"})  # not found
    server.set_method("resources/read", read)
    result = await request(server, "resources/read", {"uri": "x://a"})
    assert result["contents"] == [{"uri": "x://a", "text": "routed x://a"}]


class Review(GivenPrompt):
    __slots__ = ()

    async def get(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        text = f"Review {arguments.get('code')}"
        message = {"role": "user", "content": {"type": "text", "text": text}}
        return {"resultType": "complete", "messages": [message]}


async def test_given_prompts_resources_and_templates_are_listed_as_defined() -> None:
    server = Server("given")
    prompt = {"name": "review", "arguments": [{"name": "code", "required": True}]}
    resource = {"uri": "notes://a", "name": "a", "mimeType": "text/plain"}
    # An RFC 6570 form mcpkit does not match (`{?q}`): known by its text, matching nothing.
    template = {"uriTemplate": "search://items{?q}", "name": "search"}
    server.prompts["review"] = Review(prompt)
    server.resources["notes://a"] = GivenResource(resource)
    listed = GivenTemplate(template)
    server.templates.append(listed)
    assert listed.template.template == "search://items{?q}"
    assert listed.match("search://items?q=x") is None
    assert (await request(server, "prompts/list", {}))["prompts"] == [prompt]
    assert (await request(server, "resources/list", {}))["resources"] == [resource]
    templates = await request(server, "resources/templates/list", {})
    assert templates["resourceTemplates"] == [template]
    got = await request(server, "prompts/get", {"name": "review", "arguments": {"code": "x"}})
    assert got["messages"][0]["content"]["text"] == "Review x"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Review({"arguments": []}), "a prompt definition needs a name"),
        (lambda: GivenResource({"name": "a"}), "a resource definition needs a 'uri'"),
        (lambda: GivenTemplate({"uri": "x://a"}), "needs a 'uriTemplate'"),
    ],
)
def test_a_given_entry_without_its_key_is_refused(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


async def test_keeps_tasks_answers_tasks_after_the_task_tools_are_gone() -> None:
    # A proxy's front: its registries mirror a backend's and are edited in place; a task it
    # started outlives the backend's tools, so `tasks/*` stays answered (not -32601).
    server = Server("mirror")
    server.keeps_tasks = True
    heard: list[str] = []
    server.change_listeners.append(lambda method, params: heard.append(method))
    server.tools["shout"] = Shout(DEFINITION, task="optional")
    server.notify_tools_changed()
    assert server.serves_tasks
    server.tools.clear()
    server.notify_tools_changed()
    assert server.serves_tasks and heard == ["notifications/tools/list_changed"] * 2
    caps = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    transport = MemoryTransport(server, trace=record)
    unknown = await transport.request(1, "tasks/get", {"taskId": "t-1", "_meta": meta(caps)})
    assert unknown.error is not None and unknown.error["code"] == -32602  # TASK-18: not -32601
