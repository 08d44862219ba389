"""What the chat understands beyond plain text:

    @server:uri                  attach that server's resource to the message
    /server:prompt key=value     run the server's prompt (quote values with spaces: k="a b")
    /tasks                       list the calls running in the background
    /cancel TASK                 cancel one (`tasks/cancel`)

Both are the user's own doing, so they need no consent; what they bring in is fitted to the
agent's output budget like a tool result (overflow readable with `read_result`)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from .agent import Agent
from .content import describe_block
from .conversation import AssistantMessage, Message, UserMessage
from .results import fit, render
from .task_tools import listing

ATTACHMENT = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):(\S+)")
PROMPT = re.compile(r"^/([A-Za-z0-9_.-]+):([A-Za-z0-9_.\-/]+)(?:\s+(.*))?$", re.DOTALL)


async def chat_turn(agent: Agent, text: str) -> str | None:
    """Run one line of the chat; None when it could not be run (the UI was told why)."""
    if text.strip() == "/tasks" or text.strip().startswith("/cancel "):
        await background_command(agent, text.strip())
        return None
    command = PROMPT.match(text.strip())
    if command is not None:
        server, name, rest = command.group(1), command.group(2), command.group(3) or ""
        return await run_prompt(agent, server, name, rest)
    attachments = [
        (m.group(1), m.group(2).rstrip(".,;:!?)"))
        for m in ATTACHMENT.finditer(text)
        if m.group(1) in agent.fleet.links
    ]
    if not attachments:
        return await agent.ask(text)
    parts = [text]
    for server, uri in attachments:
        body = await _read(agent, server, uri)
        if body is None:
            return None
        parts.append(f'<attachment server="{server}" uri="{uri}">\n{body}\n</attachment>')
    return await agent.send([UserMessage("\n\n".join(parts))], text)


async def background_command(agent: Agent, text: str) -> None:
    """`/tasks` lists the background calls; `/cancel TASK` cancels one."""
    if text == "/tasks":
        agent.ui.info(listing(agent.background))
        return
    task = text.removeprefix("/cancel ").strip()
    try:
        agent.ui.info(await agent.background.cancel(task))
    except LookupError as exc:
        agent.ui.warn(f"/cancel {task}: {exc.args[0]}")
    except (MCPError, ClientError) as exc:
        agent.ui.warn(f"/cancel {task}: the server did not cancel it: {exc}")


async def _read(agent: Agent, server: str, uri: str) -> str | None:
    link = agent.fleet.links[server]
    await link.wake()  # a lazy server starts on first use
    if link.client is None:
        agent.ui.warn(f"cannot attach {uri}: server {server!r} is not connected")
        return None
    try:
        with link.in_use():
            read = await link.client.read_resource(uri)
    except (MCPError, ClientError) as exc:
        agent.ui.warn(f"cannot attach {uri}: {server} answered: {exc}")
        return None
    agent.resources.note(server, [{"type": "resource", "resource": c} for c in read.contents])
    blocks = [{"type": "resource", "resource": c} for c in read.contents]
    fitted = fit(blocks, agent.max_tool_tokens, agent.results)
    return "\n".join(describe_block(b) for b in fitted.model)


def parse_arguments(rest: str) -> dict[str, str]:
    """`a=1 b="two words"` → {"a": "1", "b": "two words"}; ValueError on a word without `=`."""
    out: dict[str, str] = {}
    for word in shlex.split(rest):
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ValueError(f"prompt arguments are key=value pairs; got {word!r}")
        out[key] = value
    return out


async def run_prompt(agent: Agent, server: str, name: str, rest: str) -> str | None:
    link = agent.fleet.links.get(server)
    if link is None or link.client is None:
        known = ", ".join(n for n, s in agent.fleet.links.items() if s.client is not None)
        agent.ui.warn(f"no connected server {server!r} (connected: {known or 'none'})")
        return None
    try:
        arguments = parse_arguments(rest)
        prompt = await link.client.get_prompt(name, arguments)
    except ValueError as exc:
        agent.ui.warn(f"/{server}:{name}: {exc}")
        return None
    except (MCPError, ClientError) as exc:
        agent.ui.warn(f"/{server}:{name} failed: {server} answered: {exc}")
        return None
    messages: list[Message] = []
    for message in prompt.messages:
        text = _content_text(message.get("content"))
        if message.get("role") == "assistant":
            messages.append(AssistantMessage(text))
        else:
            messages.append(UserMessage(text))
    if not messages:
        agent.ui.warn(f"/{server}:{name}: the prompt has no messages")
        return None
    return await agent.send(messages, f"/{server}:{name} {rest}".strip())


def _content_text(content: Any) -> str:
    items = content if isinstance(content, list) else [content]
    return "\n".join(render(c) if c.get("type") in ("text", "resource") else f"[{c.get('type')}]"
                     for c in items if isinstance(c, dict))  # fmt: skip
