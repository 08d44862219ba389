"""Background calls (issue 30): a tool call its server runs as a task goes to the background,
the conversation goes on, and the result arrives as a message once the task ends; task ids
are persisted (TASK-09), cancellation sends `tasks/cancel` (TASK-14), and a background task's
question reaches the user (TASK-11)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import SERVERS, RecordingUI, start_http, stop
from mcpkit.client.inputs import Elicitation
from mcpkit.host import Host, HostSettings, parse_config
from mcpkit.host.background_store import BackgroundSettings
from mcpkit.host.conversation import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResults,
    ToolSpec,
    UserMessage,
)
from mcpkit.host.events import BackgroundEnded, CallBackgrounded, Event
from mcpkit.host.models.scripted import ScriptedModel
from support import free_port, scaled

SERVER = str(SERVERS / "background_server.py")


class AnsweringUI(RecordingUI):
    """Answers a server's form with {"ok": true}."""

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        self.events.append(("elicit", (server, request.message)))
        return {"action": "accept", "content": {"ok": True}}


def config(tmp_path: Path, entry: dict[str, Any] | None = None) -> Any:
    stdio = {"command": sys.executable, "args": [SERVER], "env": {"BACKGROUND_DIR": str(tmp_path)}}
    return parse_config({"mcpServers": {"bg": {**(entry or stdio), "trusted": True}}})


def settings(tmp_path: Path, after: float = 0) -> HostSettings:
    return HostSettings(
        audit=tmp_path / "audit.jsonl",
        background=BackgroundSettings(after, tmp_path / "tasks.json"),
    )


def call(name: str, arguments: dict[str, Any], call_id: str = "c1") -> Any:
    return lambda h, t: AssistantMessage("", [ToolCall(call_id, name, arguments)])


def say(text: str, seen: list[list[Message]] | None = None) -> Any:
    def step(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        if seen is not None:
            seen.append(list(history))
        return AssistantMessage(text)

    return step


def deliveries(history: list[Message]) -> list[str]:
    return [m.text for m in history if isinstance(m, UserMessage) and "[Background" in m.text]


def last_result(history: list[Message]) -> str:
    results = [m for m in history if isinstance(m, ToolResults)]
    return str(results[-1].results[0].content[0]["text"])


class Ended:
    """Waits for a background task's end on the agent's bus."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.ended: asyncio.Queue[BackgroundEnded] = asyncio.Queue()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, BackgroundEnded):
            self.ended.put_nowait(event)

    async def next(self) -> BackgroundEnded:
        return await asyncio.wait_for(self.ended.get(), scaled(15))


async def test_the_result_arrives_once_after_the_model_answered_another_message(
    tmp_path: Path,
) -> None:
    seen: list[list[Message]] = []
    model = ScriptedModel(
        [
            call("bg__build", {"name": "a"}),
            say("It is building.", seen),
            say("Paris.", seen),
            say("It finished: built a.", seen),
            say("Nothing new.", seen),
        ]
    )
    ui = RecordingUI()
    async with Host(config(tmp_path), model=model, ui=ui, settings=settings(tmp_path)) as host:
        agent = host.agent()
        heard = Ended()
        agent.events.subscribe(heard)
        assert await agent.ask("Build a.") == "It is building."
        handle = last_result(seen[0])
        assert "runs in the background as task" in handle
        (backgrounded,) = [e for e in heard.events if isinstance(e, CallBackgrounded)]
        assert backgrounded.task_id in handle
        assert await agent.ask("What is the capital of France?") == "Paris."
        assert deliveries(seen[1]) == []  # still running: nothing arrived
        (tmp_path / "release-a").write_text("")
        ended = await heard.next()
        assert (ended.task_id, ended.status) == (backgrounded.task_id, "completed")
        await agent.ask("Any news?")
        (delivered,) = deliveries(seen[2])
        assert "bg__build" in delivered and "built a" in delivered and ended.task_id in delivered
        await agent.ask("And now?")
        assert len(deliveries(seen[3])) == 1  # the model saw it once, not again
    audit = (tmp_path / "audit.jsonl").read_text()
    assert '"outcome": "ok"' in audit or '"outcome":"ok"' in audit  # the task's final outcome


async def test_cancel_task_sends_tasks_cancel(tmp_path: Path) -> None:
    seen: list[list[Message]] = []

    def cancel(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        assert "cancel_task" in [t.name for t in tools]
        task = re.search(r"task (\S+);", last_result(history))
        assert task is not None
        return AssistantMessage("", [ToolCall("c2", "cancel_task", {"task": task.group(1)})])

    model = ScriptedModel([call("bg__build", {"name": "c"}), cancel, say("Stopped.", seen)])
    async with Host(
        config(tmp_path), model=model, ui=RecordingUI(), settings=settings(tmp_path)
    ) as host:
        agent = host.agent()
        heard = Ended()
        agent.events.subscribe(heard)
        await agent.ask("Build c, then stop it.")
        assert "Asked the server to cancel task" in last_result(seen[0])
        ended = await heard.next()
        assert ended.status == "cancelled"
        assert (tmp_path / "cancelled-c").exists()  # the server's handler was cancelled


async def test_a_restarted_host_asks_about_a_persisted_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKGROUND_DIR", str(tmp_path))
    port = free_port()
    proc = await start_http([SERVER], port)
    try:
        cfg = config(tmp_path, {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
        first = ScriptedModel([call("bg__build", {"name": "r"}), say("Started.")])
        async with Host(cfg, model=first, ui=RecordingUI(), settings=settings(tmp_path)) as host:
            await host.agent().ask("Build r.")
        assert "bg__build" in (tmp_path / "tasks.json").read_text()  # TASK-09
        seen: list[list[Message]] = []
        second = ScriptedModel(
            [
                call("task_status", {}),
                lambda h, t: AssistantMessage(
                    "",
                    [ToolCall("c3", "task_status", {"task": _task_id(last_result(h))})],
                ),
                say("Still going.", seen),
                say("Done.", seen),
            ]
        )
        async with Host(cfg, model=second, ui=RecordingUI(), settings=settings(tmp_path)) as host:
            agent = host.agent()
            heard = Ended()
            agent.events.subscribe(heard)
            await agent.ask("How is my build?")
            assert "is still running" in last_result(seen[0])
            assert not (tmp_path / "cancelled-r").exists()  # closing the first host kept it
            (tmp_path / "release-r").write_text("")
            assert (await heard.next()).status == "completed"
            await agent.ask("And now?")
            (delivered,) = deliveries(seen[1])
            assert "built r" in delivered
    finally:
        await stop(proc)


def _task_id(listing: str) -> str:
    found = re.search(r"- (\S+): bg__build", listing)
    assert found is not None, listing
    return found.group(1)


async def test_a_background_task_that_needs_input_asks_the_user(tmp_path: Path) -> None:
    seen: list[list[Message]] = []
    model = ScriptedModel(
        [call("bg__approve", {"name": "x"}), say("Waiting.", seen), say("Shipped.", seen)]
    )
    ui = AnsweringUI()
    async with Host(config(tmp_path), model=model, ui=ui, settings=settings(tmp_path)) as host:
        agent = host.agent()
        heard = Ended()
        agent.events.subscribe(heard)
        await agent.ask("Ship x.")
        assert ui.of("elicit") == []
        (tmp_path / "release-x").write_text("")  # the task now turns input_required
        assert (await heard.next()).status == "completed"
        assert ui.of("elicit") == [("bg", "Ship x?")]  # TASK-11: asked like any elicitation
        await agent.ask("Did it ship?")
        (delivered,) = deliveries(seen[1])
        assert "shipped x" in delivered


async def test_a_call_that_ends_before_after_is_answered_in_the_turn(tmp_path: Path) -> None:
    (tmp_path / "release-q").write_text("")
    seen: list[list[Message]] = []
    model = ScriptedModel([call("bg__build", {"name": "q"}), say("Built.", seen)])
    async with Host(
        config(tmp_path), model=model, ui=RecordingUI(), settings=settings(tmp_path, after=60)
    ) as host:
        await host.agent().ask("Build q.")
    assert last_result(seen[0]) == "built q"
    assert not (tmp_path / "tasks.json").exists()


async def test_the_chat_lists_and_cancels_background_tasks(tmp_path: Path) -> None:
    from mcpkit.host.chat import chat_turn

    model = ScriptedModel([call("bg__build", {"name": "t"}), say("Started.")])
    ui = RecordingUI()
    async with Host(config(tmp_path), model=model, ui=ui, settings=settings(tmp_path)) as host:
        agent = host.agent()
        heard = Ended()
        agent.events.subscribe(heard)
        await chat_turn(agent, "Build t.")
        await chat_turn(agent, "/tasks")
        listed = ui.of("info")[-1]
        task = _task_id(listed)
        assert "still running" in listed
        assert await chat_turn(agent, f"/cancel {task}") is None
        assert (await heard.next()).status == "cancelled"
        assert (tmp_path / "cancelled-t").exists()
        await chat_turn(agent, "/cancel nope")
        assert "no background task 'nope'" in ui.of("warn")[-1]


async def test_in_the_background_the_deadline_no_longer_counts(tmp_path: Path) -> None:
    stdio = {
        "command": sys.executable,
        "args": [SERVER],
        "env": {"BACKGROUND_DIR": str(tmp_path)},
        "timeouts": {"build": 0.2},
    }
    model = ScriptedModel([call("bg__build", {"name": "d"}), say("Started.")])
    cfg = config(tmp_path, stdio)
    async with Host(cfg, model=model, ui=RecordingUI(), settings=settings(tmp_path)) as host:
        agent = host.agent()
        heard = Ended()
        agent.events.subscribe(heard)
        await agent.ask("Build d.")
        with pytest.raises(TimeoutError):  # five times its deadline, and still running
            await asyncio.wait_for(heard.ended.get(), 1.0)
        (tmp_path / "release-d").write_text("")
        ended = await heard.next()
        assert ended.status == "completed" and "built d" in str(ended.result.content)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, BackgroundSettings()),
        ({"after": 0}, BackgroundSettings(0.0)),
        ({"after": False}, BackgroundSettings(None)),
        ({"tasks": "t.json"}, BackgroundSettings(tasks=Path("/cfg/t.json"))),
    ],
)
def test_background_settings(value: Any, expected: BackgroundSettings) -> None:
    assert BackgroundSettings.parse(value, Path("/cfg")) == expected


@pytest.mark.parametrize("value", [{"after": -1}, {"after": "soon"}, {"later": 1}, 3])
def test_bad_background_settings_say_what_is_wrong(value: Any) -> None:
    with pytest.raises(ValueError, match="background"):
        BackgroundSettings.parse(value, None)


async def test_the_terminal_asks_a_background_question_after_enter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rich.console import Console

    from mcpkit.host.terminal import TerminalUI

    console = Console(record=True, width=120)
    ui = TerminalUI(console)
    monkeypatch.setattr("rich.prompt.Confirm.ask", lambda *a, **k: True)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    ui.reading = True  # the chat reads the user's next message in its thread
    asked = asyncio.ensure_future(ui.elicit("bg", Elicitation("Ship x?", "form", schema)))
    await asyncio.sleep(0)  # one step: the question is queued, not read from the terminal
    assert not asked.done() and "press Enter to answer it" in console.export_text(clear=False)
    ui.reading = False
    assert ui.answer_waiting()
    assert await asked == {"action": "accept", "content": {"ok": True}}
    assert not ui.answer_waiting()


def test_mcpkit_host_keeps_task_ids_in_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpkit.cli.runtime import host_settings

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    settings = host_settings(None, parse_config({"mcpServers": {}}))
    assert settings.background.tasks == tmp_path / "mcpkit/background-tasks.json"
    assert HostSettings().background.tasks is None  # a Host built without one: in memory
