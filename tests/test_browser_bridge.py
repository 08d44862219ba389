"""The host's side of the MCP Apps bridge in headless Chromium, message by message (SEP-1865,
`spec/extensions/apps/spec.types.d.ts`): an app built on the official `App` class of
`@modelcontextprotocol/ext-apps` records what the host sends it (tests/servers/
bridge_app_server.py), and each test checks one promise: the Content-Security-Policy (its
default, `blob:` workers under a declared policy, a blocked frame said so), tool-cancelled,
host-context-changed, resource-teardown (awaited), update-model-context, request-teardown,
display modes, sizes both ways, and `toolInfo.id`.

The model is the real `anthropic` SDK against a loopback fake API (scripted replies); the app
server is a real stdio process.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from browser_support import browser_page, ext_apps_bundle, need_browser, static_origin
from host_support import SERVERS, FakeAPI, api_path, script, web_for
from mcpkit.host import parse_config
from support import scaled

WAIT = scaled(15) * 1000  # ms: the longest any step may take before the test fails
SERVER = SERVERS / "bridge_app_server.py"


@dataclass
class Bridge:
    page: Any
    web: Any
    api: FakeAPI

    def card(self, call: str = "toolu_0_0") -> Any:
        return self.page.locator(f'.card[data-call="{call}"]')

    def app(self, call: str = "toolu_0_0") -> Any:
        """The app document inside the card (the sandbox proxy's inner frame)."""
        return self.page.frame_locator(f'.card[data-call="{call}"] iframe.app-frame').frame_locator(
            "iframe"
        )

    async def say(self, text: str) -> None:
        await self.page.fill("#prompt", text)
        await self.page.click("#send")

    async def connected(self, call: str = "toolu_0_0") -> Any:
        from playwright.async_api import expect

        app = self.app(call)
        await expect(app.locator("#out")).to_have_text("connected", timeout=WAIT)
        return app

    async def received(self, method: str, call: str = "toolu_0_0") -> list[Any]:
        """The params of each `method` the app recorded, once it recorded one."""
        from playwright.async_api import expect

        log = self.app(call).locator("#log")
        await expect(log).to_contain_text(f"{method} ", timeout=WAIT)
        lines = (await log.text_content() or "").splitlines()
        return [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith(method)]


@contextlib.asynccontextmanager
async def bridge(
    tmp_path: Path, *steps: Any, entry: dict[str, Any] | None = None, **page: Any
) -> AsyncIterator[Bridge]:
    """The web UI with the bridge test server; the model's scripted `steps`; after the page
    is open, the first user message is sent."""
    from playwright.async_api import expect

    need_browser()
    bundle = ext_apps_bundle()
    async with static_origin({"app-with-deps.js": bundle}) as origin:
        server = {
            "command": sys.executable,
            "args": [str(SERVER), origin],
            "trusted": True,
            "consent": {"allow": ["*"]},
            **(entry or {}),
        }
        cfg = parse_config({"mcpServers": {"bridge": server}}, source="test", env={})
        async with (
            FakeAPI(api_path("anthropic"), script("anthropic", *steps)) as api,
            web_for(cfg, api, tmp_path) as web,
            browser_page(**page) as browser,
        ):
            await browser.goto(web.url)
            await expect(browser.locator("body")).to_have_attribute(
                "data-ready", "true", timeout=WAIT
            )
            # The app's teardown work is a round trip through the host: on a busy machine it
            # may take longer than the 3 s a closing card waits by default.
            web.apps.teardown_wait = scaled(3)
            b = Bridge(browser, web, api)
            await b.say("Show it.")
            yield b
            assert not browser.errors


def calls(tool: str, **arguments: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(f"bridge__{tool}", arguments)]


# -- the Content-Security-Policy -----------------------------------------------------------
async def test_a_worker_from_a_blob_url_runs_under_a_declared_policy(tmp_path: Path) -> None:
    """What pdf.js does to start its worker: `new Worker(URL.createObjectURL(blob))`."""
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_worker"), "Shown.") as b:
        await expect(b.app().locator("#out")).to_have_text("worker says 42", timeout=WAIT)
        await expect(b.card().locator('[data-role="csp"]')).to_have_count(0)


async def test_without_a_declared_policy_the_default_blocks_and_the_card_says_so(
    tmp_path: Path,
) -> None:
    """No `_meta.ui.csp`: the extension's restrictive default (a MUST), which has no `blob:`;
    the blocked worker is reported by the sandbox and the card says what was refused."""
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_undeclared"), "Shown.") as b:
        notice = b.card().locator('[data-role="csp"]')
        await expect(notice).to_contain_text(
            "Blocked by the app's Content-Security-Policy (worker-src): blob: URLs", timeout=WAIT
        )
        await expect(notice).to_contain_text("must declare what it loads in _meta.ui.csp")
        await expect(b.app().locator("#out")).not_to_have_text("worker says 42")


# -- the call's outcome --------------------------------------------------------------------
async def test_tool_cancelled_when_the_call_times_out(tmp_path: Path) -> None:
    """The host's deadline ends the call: the app hears tool-cancelled (a MUST "for any
    reason"), never waits for a result."""
    async with bridge(
        tmp_path, calls("slow_bridge"), "It timed out.", entry={"timeouts": {"slow_bridge": 1}}
    ) as b:
        (cancelled,) = await b.received("tool-cancelled")
        shown = await b.card().locator('[data-role="result"]').text_content()
        assert cancelled["reason"] and cancelled["reason"] in (shown or "")
        assert not await b.app().locator("#log").get_by_text("tool-result").count()


async def test_tool_cancelled_when_the_server_dies_before_answering(tmp_path: Path) -> None:
    """Another reason a call ends without a result: the server is gone. (The app's resource
    was read by the first call: apps are read once per server.)"""
    steps = (calls("show_bridge"), calls("crash_bridge"), "The server died.")
    async with bridge(tmp_path, *steps) as b:
        await b.connected()
        (cancelled,) = await b.received("tool-cancelled", call="toolu_1_0")
        assert cancelled["reason"]
        assert not await b.app("toolu_1_0").locator("#log").get_by_text("tool-result").count()


# -- host context --------------------------------------------------------------------------
#: In the app's frame: a host-context-changed gave a container narrower than `w`.
NARROWER = """(w) => document.getElementById("log").textContent.split("\\n")
  .filter((line) => line.startsWith("host-context-changed "))
  .map((line) => JSON.parse(line.slice(21)).containerDimensions)
  .some((c) => c && c.maxWidth < w)"""


async def test_host_context_declares_modes_and_changes_with_the_theme(tmp_path: Path) -> None:
    async with bridge(tmp_path, calls("show_bridge", label="t"), "Shown.") as b:
        await b.connected()
        (context,) = await b.received("initialized")
        assert context["theme"] == "light" and context["displayMode"] == "inline"
        assert context["availableDisplayModes"] == ["inline", "fullscreen"]
        assert context["containerDimensions"]["maxWidth"] > 0
        await b.page.emulate_media(color_scheme="dark")
        changes = await b.received("host-context-changed")
        assert any(c.get("theme") == "dark" for c in changes), changes
        # The room the card gives changes with the window: so does the context.
        await b.page.set_viewport_size({"width": 800, "height": 900})
        (frame,) = [f for f in b.page.frames if f.url == "about:srcdoc"]
        room = context["containerDimensions"]["maxWidth"]
        await frame.wait_for_function(NARROWER, arg=room, timeout=WAIT)


async def test_tool_info_id_is_the_requests_id(tmp_path: Path) -> None:
    """`toolInfo.id` is the JSON-RPC id of the tools/call request, not the model's call id."""
    async with bridge(tmp_path, calls("show_bridge"), "Shown.") as b:
        await b.connected()
        (context,) = await b.received("initialized")
        info = context["toolInfo"]
        assert info["tool"]["name"] == "show_bridge"
        sent = [
            e["message"]
            for e in b.web.inspector.wire["bridge"]
            if e["dir"] == "send" and e["message"].get("method") == "tools/call"
        ]
        assert [m["params"]["name"] for m in sent] == ["show_bridge"]
        assert info["id"] == sent[0]["id"] != "toolu_0_0"


# -- the end of an app ---------------------------------------------------------------------
async def test_closing_a_card_sends_resource_teardown_and_waits(tmp_path: Path) -> None:
    """The host asks the app to tear down and waits for its answer before the frame goes:
    the app's teardown work (a round trip through the host) is done."""
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_bridge"), "Shown.") as b:
        await b.connected()
        await b.card().locator('[data-role="close-app"]').click()
        await expect(b.card().locator('[data-role="app-closed"]')).to_contain_text(
            "closed by the user", timeout=WAIT
        )
        await expect(b.card().locator("iframe.app-frame")).to_have_count(0)
        assert list(b.web.apps.contexts.values()) == ["saved on teardown"]


async def test_request_teardown_closes_the_app_after_its_teardown(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_bridge"), "Shown.") as b:
        app = await b.connected()
        await app.locator("#close").click()
        await expect(b.card().locator('[data-role="app-closed"]')).to_contain_text(
            "the app asked to close", timeout=WAIT
        )
        assert list(b.web.apps.contexts.values()) == ["saved on teardown"]


async def test_update_model_context_is_shown_and_reaches_the_models_next_turn(
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_bridge"), "Shown.", "Row 7 it is.") as b:
        app = await b.connected()
        await app.locator("#context").click()
        await expect(app.locator("#out")).to_have_text("context updated", timeout=WAIT)
        shown = b.card().locator('[data-role="model-context"]')
        await expect(shown).to_contain_text("The user picked row 7.")
        await expect(shown).to_contain_text('"row": 7')
        await b.say("Which row?")
        await expect(b.page.locator(".msg.assistant").last).to_have_text(
            "Row 7 it is.", timeout=WAIT
        )
        last = json.dumps(b.api.requests[-1]["messages"][-1])
        assert "The user picked row 7." in last and "Which row?" in last
        assert b.web.apps.contexts == {}  # sent once


# -- display modes and sizes ---------------------------------------------------------------
async def test_display_modes_switch_only_to_declared_ones_and_return_the_result(
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_bridge"), "Shown.") as b:
        app = await b.connected()
        await app.locator("#pip").click()  # not a mode this host supports
        await expect(app.locator("#out")).to_have_text("display mode inline", timeout=WAIT)
        await app.locator("#full").click()
        await expect(app.locator("#out")).to_have_text("display mode fullscreen", timeout=WAIT)
        changes = await b.received("host-context-changed")
        assert any(c.get("displayMode") == "fullscreen" for c in changes)
        box = await b.card().locator("iframe.app-frame").bounding_box()
        assert box is not None and box["height"] > 700  # most of the 940 px window
        await app.locator("#inline").click()
        await expect(app.locator("#out")).to_have_text("display mode inline", timeout=WAIT)


async def test_a_mode_the_app_did_not_declare_is_refused(tmp_path: Path) -> None:
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_inline"), "Shown.") as b:
        app = await b.connected()
        await app.locator("#full").click()
        await expect(app.locator("#out")).to_have_text("display mode inline", timeout=WAIT)
        assert not await b.card().locator(".app.fullscreen").count()


async def test_size_changed_sets_the_frames_height_and_width(tmp_path: Path) -> None:
    """The app's reported size is the size of its viewport: borders come on top."""
    async with bridge(tmp_path, calls("show_bridge"), "Shown.") as b:
        app = await b.connected()
        await app.locator("#size").click()
        frame = b.card().locator("iframe.app-frame")
        inner = app.locator("html")
        await b.page.wait_for_function(
            "(f) => f.clientWidth === 300 && f.clientHeight === 250",
            arg=await frame.element_handle(),
            timeout=WAIT,
        )
        size = await inner.evaluate("() => [innerWidth, innerHeight]")
        assert size == [300, 250]


# -- the card ------------------------------------------------------------------------------
#: The card's body in order: which of the arguments, the app and the result come where, and
#: which of the folds are open.
ORDER = """(card) => Array.from(card.querySelector(".body").children).map((el) =>
  el.classList.contains("app") ? "app"
  : el.dataset.role === "result-data" ? `result-data${el.open ? " open" : ""}`
  : el.tagName === "DETAILS" ? `arguments${el.open ? " open" : ""}`
  : el.dataset.role || el.className)"""


async def test_an_apps_card_shows_the_app_with_its_result_folded_after_it(tmp_path: Path) -> None:
    """The app shows the call: the arguments fold and the result follows the app, folded, as
    the data the app was given (not a raw dump between the arguments and the app)."""
    from playwright.async_api import expect

    async with bridge(tmp_path, calls("show_bridge", label="x"), "Shown.") as b:
        await b.connected()
        await b.received("tool-result")
        await expect(b.card().locator('[data-role="result"]')).to_have_count(1, timeout=WAIT)
        order = await b.card().evaluate(ORDER)
        assert order == ["arguments", "app", "result-data"], order
        await b.card().locator('[data-role="result-data"] > summary').click()
        await expect(b.card().locator('[data-role="result"]')).to_be_visible(timeout=WAIT)
