"""`mcpkit dev` in headless Chromium: a real `mcpkit dev` subprocess with no model key in its
environment opens the inspector; the layout fits from 800 to 1,600 px; a tool with a UI called
in the inspector renders its app (the chat's `AppView`); saving the server file reloads its
tools in the open page; results are rendered by type; the JSON-RPC log has times; the empty
chat says how to set a model and offers example prompts made from the server's tools."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from browser_support import browser_page, need_browser, screenshot_dir
from dev_support import mcpkit
from support import ROOT, scaled

WAIT = scaled(20) * 1000  # ms: the longest any step may take before the test fails
SHIPPING = ROOT / "examples" / "northwind" / "shipping_server.py"
WEATHER = ROOT / "examples" / "weather_server.py"


@pytest.fixture(autouse=True)
def _browser() -> None:
    need_browser()


async def open_page(page: Any, url: str) -> None:
    from playwright.async_api import expect

    await page.goto(url)
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=WAIT)


async def overflow(page: Any) -> int:
    """How far the page is wider than the window (0: no horizontal scroll bar)."""
    return int(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


async def test_dev_opens_the_inspector_without_a_key_and_fits_800_px(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with (
        mcpkit("examples/weather_server.py", "--no-open", tmp_path=tmp_path) as dev,
        browser_page() as page,
    ):
        await page.set_viewport_size({"width": 800, "height": 800})
        await open_page(page, dev.url)
        await expect(page.locator("#inspector")).to_be_visible()
        await expect(page.locator('.tabs button[data-tab="inspector"]')).to_have_attribute(
            "aria-selected", "true"
        )
        tools = page.locator('#inspect-list button[data-item="forecast"]')
        await expect(tools).to_be_visible(timeout=WAIT)  # the only server, already picked
        await tools.click()
        assert await overflow(page) <= 0
        await page.screenshot(path=str(screenshot_dir() / "dev-inspector-800.png"))
        # The chat: no model, one line saying how to set one, example prompts from the tools.
        await page.click('.tabs button[data-tab="chat"]')
        hint = page.locator('[data-role="model-hint"]')
        await expect(hint).to_contain_text("ANTHROPIC_API_KEY")
        await expect(page.locator("#who")).to_have_text("no model")
        example = page.locator('[data-role="example"][data-tool="forecast"]')
        await expect(example).to_contain_text("Forecast for a city")
        await example.click()
        await expect(page.locator("#prompt")).to_have_value(
            "Use weather_server's forecast tool (Forecast for a city, one entry per day): "
        )
        await page.screenshot(path=str(screenshot_dir() / "dev-chat-800.png"))
        await page.click("#send")
        note = page.locator(".note.error")
        await expect(note).to_contain_text("no model is set", timeout=WAIT)
        assert await overflow(page) <= 0
        for width in (1024, 1400, 1600):
            await page.set_viewport_size({"width": width, "height": 800})
            assert await overflow(page) <= 0, width
        assert not page.errors  # type: ignore[attr-defined]


async def call_in_inspector(page: Any, tool: str, **fields: str) -> Any:
    """Pick `tool` in the inspector, fill its form, call it; the outcome's locator."""
    from playwright.async_api import expect

    await page.click(f'#inspect-list button[data-item="{tool}"]')
    detail = page.locator("#inspect-detail")
    for name, value in fields.items():
        await detail.locator(f'input[name="{name}"]').fill(value)
    await detail.locator('[data-role="call"]').click()
    outcome = detail.locator(".outcome")
    await expect(outcome.locator('[data-role="took"]')).to_be_visible(timeout=WAIT)
    return outcome


async def test_a_tool_with_a_ui_renders_its_app_in_the_inspector(tmp_path: Path) -> None:
    """The app of `track_parcel` renders beside its result; its button calls its own
    app-only tool; the JSON-RPC log shows each message's time and each reply's delay; the
    audit table keeps every column visible at 1,400 px."""
    from playwright.async_api import expect

    async with (
        mcpkit(str(SHIPPING), "--no-open", tmp_path=tmp_path) as dev,
        browser_page() as page,
    ):
        await page.set_viewport_size({"width": 1400, "height": 900})
        await open_page(page, dev.url)
        outcome = await call_in_inspector(page, "track_parcel", parcel_id="NW-1042")
        await expect(outcome.locator('[data-role="tree"]').first).to_contain_text("Nordic Post")
        app = outcome.locator('[data-role="app"] iframe.app-frame')
        await expect(app).to_have_count(1)
        card = outcome.frame_locator('[data-role="app"] iframe.app-frame').frame_locator("iframe")
        await expect(card.locator("#status")).to_have_text("in transit", timeout=WAIT)
        await card.locator("#reserve").click()  # visibility ["app"]: only its app may call it
        await expect(card.locator("#outcome")).to_have_text(
            "Replacement NW-R001 booked for NW-1042.", timeout=WAIT
        )
        await page.screenshot(path=str(screenshot_dir() / "dev-inspector-app.png"))

        await page.click('#inspect-tabs button[data-sub="wire"]')
        entries = page.locator("#inspect-detail .wire-entry")
        await expect(entries.first).to_be_visible()
        times = await page.locator('.wire-entry [data-role="time"]').all_inner_texts()
        assert len(times) == await entries.count() and times
        assert all(len(t) == 12 and t[2] == t[5] == ":" and t[8] == "." for t in times), times
        await expect(page.locator('.wire-entry [data-role="took"]').first).to_have_text(
            re.compile(r"^\d+ ms$")
        )

        await page.click('.tabs button[data-tab="chat"]')
        audit = page.locator("#audit tbody tr")
        await expect(audit).to_have_count(2)  # the inspector's call and its app's
        await expect(page.locator("#audit")).to_contain_text("app:shipping_server")
        clipped = await page.evaluate(
            "(() => { const w = document.querySelector('.audit-wrap');"
            " return w.scrollWidth - w.clientWidth; })()"
        )
        assert clipped <= 0
        assert await overflow(page) <= 0
        assert not page.errors  # type: ignore[attr-defined]


async def test_results_are_rendered_by_type(tmp_path: Path) -> None:
    from playwright.async_api import expect

    server = ROOT / "tests" / "servers" / "typed_results_server.py"
    async with (
        mcpkit(str(server), "--no-open", tmp_path=tmp_path) as dev,
        browser_page() as page,
    ):
        await open_page(page, dev.url)
        outcome = await call_in_inspector(page, "picture")
        result = outcome.locator('[data-role="result"]')
        await expect(result.locator('[data-role="text"]')).to_have_text("a red square")
        image = result.locator('img[data-role="image"]')
        await expect(image).to_be_visible()
        assert await image.evaluate("(img) => img.complete && img.naturalWidth") == 2
        await expect(result).to_have_attribute("data-error", "false")

        outcome = await call_in_inspector(page, "report", city="Oslo")
        tree = outcome.locator('[data-role="result"] [data-role="structured"]')
        await expect(tree.locator("details.tree").first).to_have_attribute("open", "")
        await expect(tree).to_contain_text('"clear"')
        days = tree.locator("details.tree", has_text="days").last
        assert await days.evaluate("(d) => d.open") is False  # the third level starts folded
        await days.locator("summary").first.click()
        assert await days.evaluate("(d) => d.open") is True

        outcome = await call_in_inspector(page, "broken")
        failed = outcome.locator('[data-role="result"]')
        await expect(failed).to_have_attribute("data-error", "true")
        await expect(failed.locator('[data-role="is-error"]')).to_be_visible()
        await expect(failed).to_contain_text("the sensor is offline")
        await page.screenshot(path=str(screenshot_dir() / "dev-results.png"))
        assert not page.errors  # type: ignore[attr-defined]


def save(path: Path, text: str) -> None:
    """Save as editors do: a new file renamed over the old one."""
    draft = path.with_suffix(".draft")
    draft.write_text(text)
    draft.replace(path)


async def test_saving_the_server_file_reloads_its_tools_in_the_open_page(tmp_path: Path) -> None:
    from playwright.async_api import expect

    server = tmp_path / "weather.py"
    shutil.copy(WEATHER, server)
    original = server.read_text()
    alerts = '\n\n@server.tool()\nasync def alerts(city: str) -> str:\n    """Alerts."""\n    return f"no alerts for {city}"\n'
    async with (
        mcpkit(str(server), "--no-open", tmp_path=tmp_path) as dev,
        browser_page() as page,
    ):
        await open_page(page, dev.url)
        listed = page.locator("#inspect-list button[data-item]")
        await expect(listed).to_have_count(1, timeout=WAIT)
        await page.evaluate("window.sameDocument = true")  # gone if the page reloads

        save(server, original + alerts)
        status = page.locator("#dev-status")
        await expect(status).to_have_text("weather restarted: 2 tools", timeout=WAIT)
        await expect(listed).to_have_count(2)
        outcome = await call_in_inspector(page, "alerts", city="Oslo")
        await expect(outcome.locator('[data-role="text"]')).to_have_text("no alerts for Oslo")

        save(server, original + alerts.replace("-> str:", "-> str"))  # a syntax error
        await expect(status).to_have_class("dev-status error", timeout=WAIT)
        text = await status.inner_text()
        assert text.startswith("weather.py line ") and "\n" not in text, text
        assert "last good version keeps running" in text
        await expect(listed).to_have_count(2)  # the page and the server carry on
        outcome = await call_in_inspector(page, "alerts", city="Bergen")
        await expect(outcome.locator('[data-role="text"]')).to_have_text("no alerts for Bergen")

        save(server, original)
        await expect(status).to_have_text("weather restarted: 1 tool", timeout=WAIT)
        await expect(listed).to_have_count(1)
        assert await page.evaluate("window.sameDocument") is True
        assert not page.errors  # type: ignore[attr-defined]


async def test_a_card_times_the_call_not_the_wait_for_consent(tmp_path: Path) -> None:
    """The card's duration leaves out the time the person took to allow the call (shown
    apart), so a slow answer never reads like a slow tool."""
    import asyncio
    import sys

    from playwright.async_api import expect

    from host_support import FakeAPI, api_path, script, web_for
    from mcpkit.host import parse_config

    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(WEATHER)]}
    cfg = parse_config({"mcpServers": {"weather": server}})  # untrusted: every call is asked
    replies = script("anthropic", [("weather__forecast", {"city": "Oslo", "days": 1})], "Clear.")
    hold = 2.0  # seconds the person takes to answer (what the duration must leave out)
    async with (
        FakeAPI(api_path("anthropic"), replies) as api,
        web_for(cfg, api, tmp_path) as web,
        browser_page() as page,
    ):
        await open_page(page, web.url)
        await page.fill("#prompt", "Weather in Oslo?")
        await page.click("#send")
        ask = page.locator('.question[data-type="consent"]')
        await expect(ask).to_be_visible(timeout=WAIT)
        await asyncio.sleep(hold)  # the person reading the question: the measured wait itself
        await ask.get_by_role("button", name="Allow once").click()
        duration = page.locator('.card[data-call="toolu_0_0"] [data-role="duration"]')
        await expect(duration).to_contain_text("waiting for you", timeout=WAIT)
        card = page.locator('.card[data-call="toolu_0_0"]')  # its result, by type
        await expect(card.locator('[data-role="structured"]')).to_contain_text('"Oslo"')
        await expect(page.locator('[data-role="empty"]')).to_have_count(0)
        took = float(await duration.get_attribute("data-ms") or "nan")
        waited = float((await duration.inner_text()).split(" · ")[-1].split(" s ")[0])
        assert waited >= hold - 0.05, await duration.inner_text()
        assert took < hold * 1000, await duration.inner_text()  # the call alone, not the wait
        assert not page.errors  # type: ignore[attr-defined]
