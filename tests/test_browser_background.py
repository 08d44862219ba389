"""The web UI's background tasks panel (issue 30) in headless Chromium: a call its server runs
as a task is listed while the conversation goes on, its Cancel button sends `tasks/cancel`,
and the call's end reaches the model at its next message, once."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from browser_support import browser_page, need_browser, open_ui, say
from host_support import SERVERS, FakeAPI, api_path, make_model, script
from mcpkit.host import HostSettings, parse_config
from mcpkit.host.background_store import BackgroundSettings
from mcpkit.host.consent import ConsentPolicy
from mcpkit.host.web import WebHost
from support import scaled

WAIT = scaled(15) * 1000  # ms


def web_host(tmp_path: Path, api: FakeAPI) -> WebHost:
    server = {
        "command": sys.executable,
        "args": [str(SERVERS / "background_server.py")],
        "env": {"BACKGROUND_DIR": str(tmp_path)},
    }
    cfg = parse_config({"mcpServers": {"bg": server}})
    settings = HostSettings(background=BackgroundSettings(0, tmp_path / "tasks.json"))
    policy = ConsentPolicy(allow=["bg__*"])
    return WebHost(cfg, model=make_model("anthropic", api), settings=settings, policy=policy)


@contextlib.asynccontextmanager
async def chat(tmp_path: Path, steps: list[Any], first: str) -> AsyncIterator[tuple[FakeAPI, Any]]:
    """The page, once the agent has answered `first` with the script's second step."""
    from playwright.async_api import expect

    need_browser()
    async with (
        FakeAPI(api_path("anthropic"), script("anthropic", *steps)) as api,
        web_host(tmp_path, api) as web,
        browser_page() as page,
    ):
        await open_ui(page, web)
        await say(page, first)
        await expect(page.locator(".msg.assistant")).to_have_text(steps[1], timeout=WAIT)
        yield api, page
        assert not page.errors  # type: ignore[attr-defined]


async def test_the_panel_lists_a_background_task_and_cancels_it(tmp_path: Path) -> None:
    from playwright.async_api import expect

    steps = [
        [("bg__build", {"name": "w"})],
        "It runs in the background.",
        "Paris.",
        "It was cancelled.",
    ]
    async with chat(tmp_path, steps, "Build w.") as (api, page):
        assistant = page.locator(".msg.assistant")
        task = page.locator("#tasks .task")
        await expect(task).to_have_count(1, timeout=WAIT)
        await expect(task).to_contain_text("build")
        await expect(task.locator('[data-role="task-status"]')).to_have_text("running")
        await say(page, "What is the capital of France?")
        await expect(assistant.last).to_have_text("Paris.", timeout=WAIT)
        await expect(task.locator('[data-role="task-status"]')).to_have_text("running")

        await task.get_by_role("button", name="Cancel").click()
        await expect(task).to_have_attribute("data-status", "cancelled", timeout=WAIT)
        assert (tmp_path / "cancelled-w").exists()  # the server's handler was cancelled
        await say(page, "How did the build go?")
        await expect(assistant.last).to_have_text("It was cancelled.", timeout=WAIT)
        await expect(page.locator("#tasks")).to_contain_text("No background tasks.")
    told = [str(r) for r in api.requests]
    assert "[Background call ended]" not in told[2]  # still running when Paris was asked
    assert "[Background call ended]" in told[3] and "cancelled" in told[3]


async def test_a_background_task_asks_its_question_in_the_page(tmp_path: Path) -> None:
    """TASK-11: the task's `input_required` becomes the page's form, as any elicitation."""
    from playwright.async_api import expect

    steps = [[("bg__approve", {"name": "y"})], "Waiting.", "Shipped."]
    async with chat(tmp_path, steps, "Ship y.") as (api, page):
        (tmp_path / "release-y").write_text("")  # the task turns input_required
        question = page.locator('.question[data-type="elicit"]')
        await expect(question).to_contain_text("Ship y?", timeout=WAIT)
        await question.locator("input[type=checkbox]").check()
        await question.get_by_role("button", name="Send").click()
        task = page.locator("#tasks .task")
        await expect(task).to_have_attribute("data-status", "completed", timeout=WAIT)
        await say(page, "Did it ship?")
        await expect(page.locator(".msg.assistant").last).to_have_text("Shipped.", timeout=WAIT)
    assert "shipped y" in str(api.requests[2])
