"""The terminal UI (rich): tool-call panels, consent prompts, forms for elicitation, progress.

`auto_confirm` / `auto_elicit` make it non-interactive (demos, CI): the question and the
automatic answer are still printed, so nothing happens out of the user's sight.
"""

from __future__ import annotations

import asyncio
import json
import webbrowser
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.prompt import Confirm, FloatPrompt, IntPrompt, Prompt

from ..client.inputs import Elicitation
from .consent import Decision, PendingCall
from .content import describe_block
from .conversation import ToolResult
from .supervision import LinkState, StateChange
from .ui import Answer

AutoConfirm = Callable[[PendingCall], Answer]
AutoElicit = Callable[[str, Elicitation], dict[str, Any]]


class TerminalUI:
    def __init__(
        self,
        console: Console | None = None,
        *,
        auto_confirm: AutoConfirm | None = None,
        auto_elicit: AutoElicit | None = None,
        open_urls: bool = False,
    ) -> None:
        self.console = console or Console()
        self.auto_confirm = auto_confirm
        self.auto_elicit = auto_elicit
        self.open_urls = open_urls
        #: True while the chat reads your next message: a question asked meanwhile (a task in
        #: the background, TASK-11) waits for Enter (`answer_waiting`), not for that reader.
        self.reading = False
        self._waiting: list[tuple[Elicitation, asyncio.Future[dict[str, Any]]]] = []

    def user(self, text: str) -> None:
        self.console.print(f"\n[bold cyan]user >[/] {text}")

    def assistant(self, text: str) -> None:
        self.console.print(f"[bold green]agent >[/] {text}")

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        args = json.dumps(call.arguments, ensure_ascii=False)
        trust = "trusted" if call.trusted else "untrusted"
        self.console.print(
            Panel(
                f"[bold]{call.server}[/] > {call.tool}\n{args}",
                title=f"tool call · {decision.value} · {trust} server",
                expand=False,
            )
        )

    async def confirm(self, call: PendingCall) -> Answer:
        question = f"Allow {call.server} > {call.tool} with these arguments?"
        if self.auto_confirm is not None:
            answer = self.auto_confirm(call)
            said = "for this session" if answer == "session" else "yes" if answer else "no"
            self.console.print(f"[yellow]consent >[/] {question} [bold]{said}[/] (automatic)")
            return answer
        choice = Prompt.ask(
            f"[yellow]consent >[/] {question} [dim](y = yes, n = no, s = yes for this session)[/]",
            console=self.console,
            choices=["y", "n", "s"],
            default="n",
            show_choices=False,
        )
        return "session" if choice == "s" else choice == "y"

    def tool_result(self, call: PendingCall, result: ToolResult) -> None:
        text = "\n".join(describe_block(b) for b in result.content)
        style = "red" if result.is_error else "dim"
        # Tool output is data, not markup: "[output truncated ...]" must show as written.
        self.console.print(f"[{style}]  -> {call.tool}: {escape(text)}[/]")
        for block in result.user_only:  # audience: user only, never sent to the model
            self.console.print(f"[cyan]  (for you) {escape(describe_block(block))}[/]")

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        self.console.print(f"[dim]  ... {call.tool} {done} {message or ''}[/]")

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        self.console.print(
            Panel(
                request.message,
                title=f"{server} asks (elicitation, {request.mode} mode)",
                expand=False,
            )
        )
        if self.auto_elicit is not None:
            answer = self.auto_elicit(server, request)
            self.console.print(
                f"[yellow]answer >[/] {json.dumps(answer, ensure_ascii=False)} (automatic)"
            )
            return answer
        if self.reading:
            self.console.print("[yellow]answer >[/] press Enter to answer it")
            answered: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._waiting.append((request, answered))
            return await answered
        return self._answer(request)

    def answer_waiting(self) -> bool:
        """Ask the questions that came while the chat was reading; whether there were any."""
        waiting, self._waiting = self._waiting, []
        for request, answered in waiting:
            if not answered.done():
                self.console.print(f"[yellow]answer >[/] {escape(request.message)}")
                answered.set_result(self._answer(request))
        return bool(waiting)

    def _answer(self, request: Elicitation) -> dict[str, Any]:
        if request.mode == "url":
            # ELIC-06/28: show the full URL and the domain, open only with consent.
            self.console.print(f"URL: [underline]{request.url}[/]")
            if not Confirm.ask("Open this URL?", console=self.console, default=False):
                return {"action": "decline"}
            if self.open_urls and request.url:
                webbrowser.open(request.url)
            return {"action": "accept"}
        return self._form(request)

    def _form(self, request: Elicitation) -> dict[str, Any]:
        if not Confirm.ask("Answer this form?", console=self.console, default=True):
            return {"action": "decline"}
        content: dict[str, Any] = {}
        props = (request.requested_schema or {}).get("properties") or {}
        for name, prop in props.items():
            label = prop.get("title") or name
            default = prop.get("default")
            kind = prop.get("type")
            if kind == "boolean":
                content[name] = Confirm.ask(label, console=self.console, default=bool(default))
            elif kind == "integer":
                content[name] = IntPrompt.ask(label, console=self.console, default=default)
            elif kind == "number":
                content[name] = FloatPrompt.ask(label, console=self.console, default=default)
            else:
                choices = (
                    prop.get("enum") or [o.get("const") for o in prop.get("oneOf") or []] or None
                )
                content[name] = Prompt.ask(
                    label, console=self.console, default=default, choices=choices
                )
        return {"action": "accept", "content": content}

    def server_state(self, change: StateChange) -> None:
        style = {LinkState.READY: "green", LinkState.DEGRADED: "yellow", LinkState.IDLE: "dim"}.get(
            change.state, "red"
        )
        self.console.print(f"[{style}]server >[/] {change.describe()}")

    def warn(self, text: str) -> None:
        self.console.print(f"[bold yellow]warning >[/] {text}")

    def info(self, text: str) -> None:
        self.console.print(f"[dim]{text}[/]")
