"""MCP Apps that survive a page reload, and consent for an app's calls asked once, in its card
(issue 28, items 2 and 3), in headless Chromium with the official `App` class from npm.

The app (tests/servers/appsession_server.py) calls two app-only tools of its server as soon as
it loads; the server writes how many of those calls ran to a file, so a test can tell a call
answered from the record from one that ran. The model is the real `anthropic` SDK against a
loopback fake API.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from browser_support import browser_page, ext_apps_bundle, need_browser, static_origin
from host_support import SERVERS, FakeAPI, api_path, script, tool_names, web_for
from mcpkit.host import parse_config
from support import scaled

WAIT = scaled(15) * 1000  # ms: the longest any step may take before the test fails
CARD = '.card[data-call="toolu_0_0"]'
LOADED = "load_rows #1, load_totals #2"
DENIED = "refused: The user did not allow this app to call its server's tools."


@contextlib.asynccontextmanager
async def board(tmp_path: Path, consent: dict[str, list[str]], *options: str) -> AsyncIterator[Any]:
    """The web UI with the board server (untrusted, with `consent`), a page on it, and the
    model asking for the board once; yields (web, page, api, count file)."""
    need_browser()
    bundle = ext_apps_bundle()
    counted = tmp_path / "calls.txt"
    async with static_origin({"app-with-deps.js": bundle}) as origin:
        entry = {
            "command": sys.executable,
            "args": [str(SERVERS / "appsession_server.py"), origin, str(counted), *options],
            "consent": consent,
        }
        cfg = parse_config({"mcpServers": {"board": entry}}, source="test")
        replies = script(
            "anthropic", [("board__show_board", {"label": "Q3"})], "Here is the board."
        )
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            web_for(cfg, api, tmp_path) as web,
            browser_page() as page,
        ):
            await open_page(page, web.url)
            await page.fill("#prompt", "Show me the Q3 board.")
            await page.click("#send")
            yield web, page, api, counted


async def open_page(page: Any, url: str | None = None) -> None:
    """Open (or, without `url`, reload) the page and wait until it has replayed the session."""
    from playwright.async_api import expect

    if url is None:
        await page.reload()
    else:
        await page.goto(url)
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=WAIT)


def app_frame(page: Any) -> Any:
    """The app document in the board's card (inside the sandbox proxy's frame)."""
    return page.frame_locator(f"{CARD} iframe.app-frame").frame_locator("iframe")


def ran(counted: Path) -> int:
    """How many calls of the app-only tools ran on the server."""
    return int(counted.read_text()) if counted.exists() else 0


async def test_a_reload_restores_the_app_without_running_its_calls_again(
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    async with board(tmp_path, {"allow": ["*"]}) as (_web, page, api, counted):
        app = app_frame(page)
        await expect(app.locator("#loaded")).to_have_text(LOADED, timeout=WAIT)
        await expect(app.locator("#label")).to_have_text("Q3")
        assert ran(counted) == 2
        await expect(page.locator(".card", has_text="called by its app")).to_have_count(2)

        await open_page(page)
        # The app again, from the stored input and result; its calls on load are answered as
        # the first time, and nothing runs on the server.
        app = app_frame(page)
        await expect(app.locator("#loaded")).to_have_text(LOADED, timeout=WAIT)
        await expect(app.locator("#label")).to_have_text("Q3")
        await expect(app.locator("#results")).to_have_text("1", timeout=WAIT)  # sent once
        assert ran(counted) == 2
        await expect(page.locator(".card", has_text="called by its app")).to_have_count(2)
        await expect(page.locator(".question")).to_have_count(0)

        # What the user does in the restored app runs.
        await app.locator("#again").click()
        await expect(app.locator("#out")).to_have_text("load_rows #3", timeout=WAIT)
        assert ran(counted) == 3
        assert len(api.requests) == 2  # the reload asked the model nothing
        assert not page.errors


async def test_a_question_of_the_closed_page_is_withdrawn_not_doubled(tmp_path: Path) -> None:
    """The app's call on load waits for a server's form; the page is reloaded: the old call
    ends with its page and its question is withdrawn; the restored app asks anew, once."""
    from playwright.async_api import expect

    async with board(tmp_path, {"allow": ["*"]}, "ask") as (web, page, _api, counted):
        form = page.locator('.question[data-type="elicit"]:not(.done)')
        await expect(form).to_contain_text("Which quarter?", timeout=WAIT)
        (first,) = web.questions.open

        await open_page(page)
        old = page.locator(f'.question[data-question="{first}"]')
        await expect(old).to_have_class("question done", timeout=WAIT)  # withdrawn
        await expect(form).not_to_have_attribute("data-question", first, timeout=WAIT)
        await expect(form).to_have_count(1)
        assert first not in web.questions.open
        assert len(web.questions.open) == 1
        ended = page.locator(".card", has_text="called by its app").first
        await expect(ended).to_contain_text("cancelled: the page that asked for it was closed")
        await form.get_by_label("Quarter").fill("Q4")
        await form.get_by_role("button", name="Send").click()
        app = app_frame(page)
        await expect(app.locator("#loaded")).to_have_text(LOADED, timeout=WAIT)
        assert ran(counted) == 2
        assert not web.questions.open
        assert not page.errors


async def test_consent_is_asked_once_in_the_apps_card_before_it_loads(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with board(tmp_path, {"allow": ["show_board"]}) as (web, page, api, counted):
        card = page.locator(CARD)
        ask = card.locator('.question[data-type="app-consent"]')
        await expect(ask).to_contain_text("This app may call tools of server board", timeout=WAIT)
        await expect(card.locator("iframe.app-frame")).to_have_count(0)  # not before the answer
        await expect(card.locator('[data-role="result"]')).to_contain_text("Q3", timeout=WAIT)

        # A reload hands the open question to the new page: still one, still in the card.
        await open_page(page)
        await expect(page.locator(".question")).to_have_count(1)
        assert len(web.questions.open) == 1
        await ask.get_by_role("button", name="Allow").click()

        app = app_frame(page)
        await expect(app.locator("#loaded")).to_have_text(LOADED, timeout=WAIT)
        await app.locator("#again").click()
        await expect(app.locator("#out")).to_have_text("load_rows #3", timeout=WAIT)
        assert ran(counted) == 3
        await expect(page.locator(".question")).to_have_count(0)
        assert not web.questions.open
        # Each call's card says who allowed it: the answer given for the app.
        audit = page.locator("#audit tbody")
        await expect(audit.locator("tr", has_text="app:board")).to_have_count(3)
        by = audit.locator("tr", has_text="app:board").locator("td:nth-child(6)")
        await expect(by).to_have_text(["app", "app", "app"])
        assert not page.errors

    # Visibility still holds: the app-only tools never reached the model.
    names = tool_names("anthropic", api.requests[0])
    assert "board__show_board" in names and "board__load_rows" not in names


async def test_denied_app_calls_fail_clearly_and_nothing_runs(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with board(tmp_path, {"allow": ["show_board"]}) as (web, page, _api, counted):
        card = page.locator(CARD)
        ask = card.locator('.question[data-type="app-consent"]')
        await ask.get_by_role("button", name="Deny").click(timeout=WAIT)
        await expect(card.locator('[data-role="app-calls"]')).to_contain_text("you denied it")
        app = app_frame(page)
        await expect(app.locator("#label")).to_have_text("Q3", timeout=WAIT)
        await expect(app.locator("#loaded")).to_have_text(DENIED, timeout=WAIT)
        await app.locator("#again").click()
        await expect(app.locator("#out")).to_have_text(DENIED, timeout=WAIT)
        assert ran(counted) == 0
        await expect(page.locator(".question")).to_have_count(0)
        assert not web.questions.open
        assert not page.errors
