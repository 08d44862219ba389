"""The web UI in headless Chromium (Debian's package, driven by Playwright): the Northwind
conversation with its consent dialogs, elicitation form and MCP App; the inspector calling a
tool from its form while a `subscriptions/listen` stream shows the change live; and an app
built on the official `App` class from `@modelcontextprotocol/ext-apps`.

The model is the real `anthropic` SDK against a loopback fake API (scripted replies), so the
conversation is deterministic; the servers are the real Northwind processes.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import (
    browser_page,
    ext_apps_bundle,
    need_browser,
    open_ui,
    say,
    screenshot_dir,
    static_origin,
)
from host_support import (
    SERVERS,
    FakeAPI,
    api_path,
    child_pids,
    example_config,
    northwind_http,
    script,
    settings_for,
    tool_names,
    web_for,
)
from mcpkit.host import parse_config
from mcpkit.host.pins import ToolPins
from support import scaled

WAIT = scaled(15) * 1000  # ms: the longest any step may take before the test fails


@pytest.fixture
async def northwind() -> AsyncIterator[dict[str, str]]:
    need_browser()
    async with northwind_http() as env:
        yield env


def app_frame(page: Any, call: str) -> Any:
    """The app document inside the card of `call` (the sandbox proxy's inner frame)."""
    return page.frame_locator(f'.card[data-call="{call}"] iframe.app-frame').frame_locator("iframe")


async def inner_frame(page: Any, selector: str) -> Any:
    """The app frame (a Playwright Frame) holding `selector`."""
    for frame in page.frames:
        if frame.url == "about:srcdoc" and await frame.locator(selector).count():
            return frame
    raise AssertionError(f"no app frame has {selector}")


async def test_northwind_in_the_browser(northwind: dict[str, str], tmp_path: Path) -> None:
    from playwright.async_api import expect

    cfg = example_config(northwind)
    replies = script(
        "anthropic",
        [("shipping__track_parcel", {"parcel_id": "NW-1042"})],
        "NW-1042 is in transit with Nordic Post.",
        [
            ("returns__create_return", {"order_id": "ORD-7", "reason": "arrived cracked"}),
            ("warehouse__reserve_stock", {"sku": "KET-BLUE", "quantity": 1, "order_id": "ORD-7"}),
        ],
        "Return opened and a replacement kettle reserved.",
    )
    shots = screenshot_dir()
    async with (
        FakeAPI(api_path("anthropic"), replies) as api,
        web_for(cfg, api, tmp_path, agent="support", system="Northwind support.") as web,
        browser_page() as page,
    ):
        base = web.url.split("?")[0]
        # Without the access token: refused, and nothing of the page is served.
        refused = await page.goto(base)
        assert refused is not None and refused.status == 401
        assert "access token" in await refused.text()
        api_refused = await page.request.get(base + "api/state")
        assert api_refused.status == 401

        await open_ui(page, web)
        assert "token=" not in page.url  # dropped from the address bar and history
        # A request carrying the cookie but not the page's CSRF token is refused.
        no_csrf = await page.evaluate("fetch('/api/state').then(r => r.status)")
        assert no_csrf == 403

        # Turn 1: track_parcel runs (allowed by the config) and its MCP App renders.
        await say(page, "Where is NW-1042?")
        card = page.locator('.card[data-call="toolu_0_0"]')
        await expect(card.locator('[data-role="result"]')).to_contain_text(
            "in transit", timeout=WAIT
        )
        parcel = app_frame(page, "toolu_0_0")
        await expect(parcel.locator("#status")).to_have_text("in transit", timeout=WAIT)
        await expect(page.locator(".msg.assistant")).to_have_text(
            "NW-1042 is in transit with Nordic Post."
        )

        # The app's button calls an app-only tool of its own server through the bridge.
        await parcel.locator("#reserve").click()
        await expect(parcel.locator("#outcome")).to_have_text(
            "Replacement NW-R001 booked for NW-1042.", timeout=WAIT
        )
        await expect(page.locator(".card", has_text="called by its app")).to_contain_text(
            "reserve_replacement"
        )
        # ...and is refused a tool of another server.
        frame = await inner_frame(page, "#reserve")
        refusal = await frame.evaluate(
            "request('tools/call', {name: 'get_stock', arguments: {sku: 'KET-BLUE'}})"
            ".then(() => 'allowed', (e) => e.message)"
        )
        assert "may call only tools of the 'shipping' server" in refusal
        await card.screenshot(path=str(shots / "ui-app.png"))

        # The inspector: listen to warehouse, call reserve_stock from its form, see the change.
        await page.click('.tabs button[data-tab="inspector"]')
        await page.click('#inspect-servers button[data-server="warehouse"]')
        await page.click('#inspect-tabs button[data-sub="listen"]')
        await page.click('[data-role="listen"]')
        stream = page.locator(".card[data-listen]")
        await expect(stream.locator(".badge").first).to_have_text("open", timeout=WAIT)
        await page.click('#inspect-tabs button[data-sub="tools"]')
        await page.click('#inspect-list button[data-item="reserve_stock"]')
        detail = page.locator("#inspect-detail")
        await detail.locator('input[name="sku"]').fill("MUG-SET")
        await detail.locator('input[name="quantity"]').fill("1.5")
        await detail.locator('[data-role="call"]').click()
        await expect(detail.locator(".field .error").nth(1)).to_have_text("enter a whole number")
        await detail.locator('input[name="quantity"]').fill("2")
        await detail.locator('input[name="order_id"]').fill("ORD-8")
        await detail.locator('[data-role="call"]').click()
        await expect(detail.locator('[data-role="result"]')).to_contain_text(
            "reservation_id", timeout=WAIT
        )
        await expect(detail.locator('[data-role="jsonrpc"]')).to_contain_text('"tools/call"')
        await detail.locator('[data-role="jsonrpc"] summary').click()
        await page.screenshot(path=str(shots / "ui-inspector.png"))
        await page.click('#inspect-tabs button[data-sub="listen"]')
        await expect(page.locator('[data-role="notification"]').first).to_contain_text(
            "notifications/tools/list_changed", timeout=WAIT
        )
        await page.click('.tabs button[data-tab="chat"]')

        # Turn 2: two consent dialogs, then the returns server's form.
        await say(page, "Return ORD-7 and reserve a new kettle.")
        ask_return = page.locator('.question[data-type="consent"]', has_text="create_return")
        await ask_return.get_by_role("button", name="Allow once").click()
        form = page.locator('.question[data-type="elicit"]')
        await expect(form).to_contain_text("returns", timeout=WAIT)  # which server asks
        await form.get_by_label("Confirm the return").check()
        await form.get_by_label("Units to return").fill("7")
        await form.get_by_role("button", name="Send").click()
        await expect(form.locator(".field .error").nth(1)).to_have_text("must be at most 3")
        assert len(web.questions.open) == 2  # the bad value never left the page
        ask_stock = page.locator('.question[data-type="consent"]', has_text="reserve_stock")
        await expect(ask_stock).to_be_visible()  # still waiting, in its call's card
        await page.screenshot(path=str(shots / "ui-chat.png"))
        await ask_stock.get_by_role("button", name="Allow for this session").click()
        await expect(ask_stock).to_have_count(0)
        await expect(page.locator('.card[data-call="toolu_2_1"]')).to_contain_text(
            "allowed for the session"
        )
        await form.get_by_label("Units to return").fill("2")
        await form.get_by_label("Return label").select_option(label="Print it at the post office")
        await form.get_by_role("button", name="Send").click()
        await expect(form).to_have_class("question done", timeout=WAIT)
        result = page.locator('.card[data-call="toolu_2_0"] [data-role="result"]')
        await expect(result).to_contain_text('"units":"2"', timeout=WAIT)
        await expect(result).to_contain_text('"label":"print"')
        await expect(page.locator(".msg.assistant").last).to_have_text(
            "Return opened and a replacement kettle reserved.", timeout=WAIT
        )
        audit = page.locator("#audit tbody")
        await expect(audit).to_contain_text("create_return")
        await expect(audit.locator("tr", has_text="support")).to_have_count(3)  # the agent's
        await expect(audit.locator("tr", has_text="app:shipping")).to_contain_text(
            "reserve_replacement"
        )
        await expect(audit.locator("tr", has_text="inspector")).to_contain_text("reserve_stock")
        assert not page.errors  # type: ignore[attr-defined]

    # MCP Apps visibility: the app-only tool never reached the model.
    for body in api.requests:
        names = tool_names("anthropic", body)
        assert "shipping__track_parcel" in names
        assert "shipping__reserve_replacement" not in names


async def test_official_app_class(tmp_path: Path) -> None:
    """An app written with ext-apps' `App` connects through mcpkit's bridge, receives the tool
    input and result, calls an app-only tool, is refused a model-only tool and another server's
    tool, and opens a link only after the user confirms."""
    from playwright.async_api import expect

    need_browser()
    bundle = ext_apps_bundle()
    async with static_origin({"app-with-deps.js": bundle}) as origin, northwind_http() as env:
        cfg = example_config(
            env,
            counter={
                "command": sys.executable,
                "args": [str(SERVERS / "counter_app_server.py"), origin],
                "trusted": True,
                "consent": {"allow": ["*"]},
            },
        )
        replies = script(
            "anthropic", [("counter__show_counter", {"label": "clicks"})], "Here is the counter."
        )
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            web_for(cfg, api, tmp_path) as web,
            browser_page() as page,
        ):
            await open_ui(page, web)
            await say(page, "Show the counter.")
            counter = app_frame(page, "toolu_0_0")
            await expect(counter.locator("#out")).to_have_text("connected to mcpkit", timeout=WAIT)
            await expect(counter.locator("#input")).to_have_text('{"label":"clicks"}')
            await expect(counter.locator("#count")).to_have_text("0", timeout=WAIT)

            await counter.locator("#inc").click()
            await expect(counter.locator("#out")).to_have_text('ok: {"count":1}', timeout=WAIT)
            await expect(counter.locator("#count")).to_have_text("1")
            await counter.locator("#model").click()
            await expect(counter.locator("#out")).to_have_text(
                "refused: the tool 'model_only' is not available to apps (its visibility)",
                timeout=WAIT,
            )
            await counter.locator("#other").click()
            await expect(counter.locator("#out")).to_contain_text(
                "refused: this app may call only tools of the 'counter' server",
                timeout=WAIT,
            )
            # ui/open-link waits for the user: cancel first (refused), then confirm.
            await counter.locator("#link").click()
            dialog = page.locator("dialog.confirm")
            await expect(dialog).to_contain_text("example.com")
            await dialog.get_by_role("button", name="Cancel").click()
            await expect(counter.locator("#out")).to_contain_text("link refused", timeout=WAIT)
            async with page.context.expect_page() as opened:
                await counter.locator("#link").click()
                await dialog.get_by_role("button", name="Open").click()
            # A new tab, without a handle on this page (noopener); closed, as its page cannot
            # load here (and a tab failing to load slows the browser down).
            await (await opened.value).close()  # it cannot load here: no need to keep it
            await expect(counter.locator("#out")).to_have_text("link opened", timeout=WAIT)
            # ui/message goes into the message box: the user decides whether to send it.
            await counter.locator("#msg").click()
            await expect(counter.locator("#out")).to_have_text("message suggested", timeout=WAIT)
            await expect(page.locator("#prompt")).to_have_value("Reset the counter, please.")
            assert len(api.requests) == 2  # nothing went to the model
            assert not page.errors  # type: ignore[attr-defined]

        names = tool_names("anthropic", api.requests[0])
        assert "counter__show_counter" in names and "counter__model_only" in names
        assert "counter__increment" not in names


async def test_forms_for_every_field_type_and_url_elicitation(tmp_path: Path) -> None:
    """A server's form with every field type elicitation allows: bad values are refused in the
    page, field by field; good ones reach the server with their JSON types. A call's progress
    shows as a bar. A URL-mode request opens its page in a new tab only when the user says so.
    The inspector reads a resource and a template and runs a prompt."""
    from playwright.async_api import expect

    need_browser()
    server = [str(SERVERS / "counter_app_server.py"), "http://127.0.0.1:9"]
    entry = {"command": sys.executable, "args": server, "consent": {"allow": ["*"]}}
    cfg = parse_config({"mcpServers": {"counter": entry}})
    replies = script(
        "anthropic",
        [("counter__survey", {})],
        "Thanks.",
        [("counter__two_steps", {})],
        "Done.",
        [("counter__sign_in", {})],
        "Signed in.",
    )
    async with (
        FakeAPI(api_path("anthropic"), replies) as api,
        web_for(cfg, api, tmp_path) as web,
        browser_page() as page,
    ):
        await open_ui(page, web)
        await say(page, "Survey me.")
        form = page.locator('.question[data-type="elicit"]')
        await expect(form).to_contain_text("Tell us about you.", timeout=WAIT)
        # Defaults are pre-filled (ELIC-13).
        await expect(form.get_by_label("Subscribe")).to_be_checked()
        await expect(form.get_by_label("Size")).to_have_value("0")

        bad = {"Name": "A", "E-mail": "nope", "Website": "not a url", "Meeting": "tomorrow"}
        for label, value in {**bad, "Age": "200", "Ratio": "2"}.items():
            await form.get_by_label(label, exact=True).fill(value)
        for topping in ("cheese", "ham", "olives"):
            await form.get_by_label(topping).check()
        await form.get_by_role("button", name="Send").click()
        errors = {
            "Name": "at least 2 characters",
            "E-mail": "enter an e-mail address",
            "Website": "enter a URI (e.g. https://example.com)",
            "Meeting": "enter a date and time (e.g. 2026-12-01T09:30:00Z)",
            "Age": "must be at most 150",
            "Ratio": "must be at most 1",
            "Toppings": "choose at most 2",
        }
        for label, message in errors.items():
            field = form.locator(".field", has=page.get_by_label(label, exact=True))
            await expect(field.locator(".error")).to_have_text(message)
        assert len(web.questions.open) == 1  # nothing was sent

        good = {
            "Name": "Ada",
            "E-mail": "ada@example.com",
            "Website": "https://ada.example",
            "Meeting": "2026-12-01T09:30:00Z",
            "Age": "42",
            "Ratio": "0.5",
        }
        for label, value in good.items():
            await form.get_by_label(label, exact=True).fill(value)
        await form.get_by_label("Birthday").fill("1815-12-10")
        await form.get_by_label("olives").uncheck()
        await form.get_by_label("Subscribe").uncheck()
        await form.get_by_label("Color").select_option(label="green")
        await form.get_by_label("Size").select_option(label="Large")
        await form.get_by_label("Legacy").select_option(label="Beta")
        await form.get_by_label("Extra Y").check()
        await form.get_by_role("button", name="Send").click()
        result = page.locator('.card[data-call="toolu_0_0"] [data-role="result"]')
        await expect(result).to_contain_text('"action": "accept"', timeout=WAIT)
        answer = json.loads(await result.inner_text())
        assert answer["content"] == {
            "name": "Ada",
            "email": "ada@example.com",
            "website": "https://ada.example",
            "birthday": "1815-12-10",
            "meeting": "2026-12-01T09:30:00Z",
            "age": 42,
            "ratio": 0.5,
            "subscribe": False,
            "color": "green",
            "size": "l",
            "legacy": "b",
            "toppings": ["cheese", "ham"],
            "extras": ["y"],
        }

        # Progress: the card's bar shows the server's report while the call waits for the user.
        await say(page, "Two steps.")
        bar = page.locator('.card[data-call="toolu_2_0"] progress')
        await expect(bar).to_have_attribute("value", "1", timeout=WAIT)
        await expect(bar).to_have_attribute("max", "2")
        await expect(page.locator('.card[data-call="toolu_2_0"] .progress')).to_contain_text(
            "first half done"
        )
        go = page.locator('.question[data-type="elicit"]', has_text="second half")
        await go.get_by_role("button", name="Send").click()
        result = page.locator('.card[data-call="toolu_2_0"] [data-role="result"]')
        await expect(result).to_have_text("finished", timeout=WAIT)

        # URL mode: the full address with its domain marked; opened only on the user's click.
        await say(page, "Sign me in.")
        ask = page.locator('.question[data-type="url"]')
        await expect(ask.locator(".domain")).to_have_text("counter.example", timeout=WAIT)
        await expect(ask).to_contain_text("https://counter.example/login")
        assert len(page.context.pages) == 1
        async with page.context.expect_page() as opened:
            await ask.get_by_role("button", name="Open the page").click()
        await (await opened.value).close()
        result = page.locator('.card[data-call="toolu_4_0"] [data-role="result"]')
        await expect(result).to_have_text("accept", timeout=WAIT)

        # The inspector reads a resource and a template, and runs a prompt, on this server.
        await page.click('.tabs button[data-tab="inspector"]')
        await page.click('#inspect-servers button[data-server="counter"]')
        detail = page.locator("#inspect-detail")
        for tab, item, fill, button, expected in [
            ("resources", "value", {}, "read", "count=0"),
            ("templates", "history", {"n": "3"}, None, "last 3 values"),
            ("prompts", "greet", {"name": "Ada"}, "run", "Say hello to Ada."),
        ]:
            await page.click(f'#inspect-tabs button[data-sub="{tab}"]')
            await page.click(f'#inspect-list button[data-item="{item}"]')
            for name, value in fill.items():
                await detail.locator(f'input[name="{name}"]').fill(value)
            if button is None:
                await detail.get_by_role("button", name="Read").click()
            else:
                await detail.locator(f'[data-role="{button}"]').click()
            await expect(detail.locator('[data-role="result"]')).to_contain_text(expected)
            await expect(detail.locator('[data-role="jsonrpc"]')).to_contain_text(
                '"jsonrpc": "2.0"'
            )
        await page.click('#inspect-tabs button[data-sub="wire"]')
        await expect(detail).to_contain_text("prompts/get")
        assert not page.errors  # type: ignore[attr-defined]


async def test_side_panel_shows_supervision_and_approves_a_changed_tool(tmp_path: Path) -> None:
    """The servers panel follows supervision (a killed stdio server goes down and comes back,
    said in the conversation too); a tool whose definition changed since it was pinned is
    listed with its diff and offered to the model only after the user approves it there."""
    from playwright.async_api import expect

    need_browser()
    ToolPins(tmp_path / "pins.json").pin("shipping", [{"name": "track_parcel", "title": "x"}])
    cfg = example_config({"PYTHON": sys.executable})
    pinned = settings_for(cfg, tmp_path, pins=tmp_path / "pins.json")
    replies = script("anthropic", "Hello.", "Hello again.")
    async with (
        FakeAPI(api_path("anthropic"), replies) as api,
        web_for(cfg, api, tmp_path, servers=["shipping"], settings=pinned) as web,
        browser_page() as page,
    ):
        await open_ui(page, web)
        server = page.locator('.srv[data-server="shipping"]')
        await expect(server.locator('[data-role="state"]')).to_have_text("ready", timeout=WAIT)
        # track_parcel changed; reserve_replacement (the card's own tool) is new: never pinned.
        await expect(server).to_contain_text("2 withheld")
        pin = page.locator('.pin[data-pin="shipping/track_parcel"]')
        await expect(pin).to_contain_text("+description:")  # the diff, pinned → now
        added = page.locator('.pin[data-pin="shipping/reserve_replacement"]')
        await expect(added).to_contain_text("is a new tool")
        await say(page, "Hi")
        await expect(page.locator(".msg.assistant")).to_have_text("Hello.", timeout=WAIT)

        await pin.get_by_role("button", name="Approve the new definition").click()
        await expect(pin).to_have_count(0)
        await added.get_by_role("button", name="Approve the new tool").click()
        await expect(page.locator("#pins")).to_contain_text("No new or changed tools waiting.")
        (pid,) = child_pids("shipping_server.py")
        os.kill(pid, signal.SIGKILL)
        notes = page.locator(".note")
        await expect(notes.filter(has_text="server 'shipping': down")).to_have_count(
            1, timeout=WAIT
        )
        await expect(notes.filter(has_text="server 'shipping': ready")).to_have_count(
            1, timeout=WAIT
        )
        await expect(server.locator('[data-role="state"]')).to_have_text("ready")
        await say(page, "Hi again")
        await expect(page.locator(".msg.assistant").last).to_have_text("Hello again.", timeout=WAIT)
        assert not page.errors  # type: ignore[attr-defined]

    assert "shipping__track_parcel" not in tool_names("anthropic", api.requests[0])
    assert "shipping__track_parcel" in tool_names("anthropic", api.requests[1])
