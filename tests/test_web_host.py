"""The web UI's host side without a browser: the MCP Apps rules (visibility, resources, CSP),
the access checks (token, cookie, CSRF, Host, Origin) over real HTTP, the apps extension in
the client capabilities (VER-07, both eras), and tool visibility in the terminal host."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from yarl import URL

from host_support import (
    EXAMPLE,
    SERVERS,
    FakeAPI,
    RecordingUI,
    api_path,
    example_config,
    host_for,
    northwind_http,
    script,
    tool_names,
    tool_results,
    web_for,
)
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.host.apps import (
    APP_MIME,
    APPS_CAPABILITY,
    APPS_EXTENSION,
    AppResource,
    AppResourceError,
    app_resource,
    content_security_policy,
    declared_domains,
    for_apps,
    for_model,
    resource_uri,
)
from mcpkit.host.pins import ToolPins, tool_hash
from mcpkit.host.web import WebHost
from mcpkit.host.web.asgi import HTTPError
from mcpkit.host.web.events import EventHub, Questions
from mcpkit.host.web.routes import elicit_answer
from mcpkit.host.web.security import Guard
from mcpkit.host.web.webui import WebUI
from support import ROOT, default_sigint, scaled


# -- MCP Apps rules (pure) ---------------------------------------------------------------------
def test_visibility_defaults_to_model_and_app() -> None:
    plain = {"name": "t"}
    assert for_model(plain) and for_apps(plain)
    app_only = {"name": "t", "_meta": {"ui": {"visibility": ["app"]}}}
    assert not for_model(app_only) and for_apps(app_only)
    model_only = {"name": "t", "_meta": {"ui": {"visibility": ["model"]}}}
    assert for_model(model_only) and not for_apps(model_only)
    assert not for_model({"name": "t", "_meta": {"ui": {"visibility": []}}})


def test_resource_uri_reads_ui_scheme_and_deprecated_key() -> None:
    assert resource_uri({"_meta": {"ui": {"resourceUri": "ui://a/b"}}}) == "ui://a/b"
    assert resource_uri({"_meta": {"ui/resourceUri": "ui://old"}}) == "ui://old"
    assert resource_uri({"_meta": {"ui": {"resourceUri": "https://evil.example/x"}}}) is None
    assert resource_uri({"name": "plain"}) is None


def test_csp_default_is_the_extensions_restrictive_policy() -> None:
    """No `_meta.ui.csp`: the extension's restrictive default, only narrowed (a MUST)."""
    policy = content_security_policy(declared_domains(None))
    assert "blob:" not in policy and "worker-src" not in policy and "font-src" not in policy
    for directive in (
        "default-src 'none'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "media-src 'self' data:",
        "connect-src 'none'",
        "frame-src 'none'",
        "object-src 'none'",
        "base-uri 'self'",
    ):
        assert directive in policy.split("; ")


def test_csp_adds_only_declared_plain_origins() -> None:
    declared = declared_domains(
        {
            "connectDomains": ["https://api.example.com", "https://x.example; script-src *"],
            "resourceDomains": ["https://*.cdn.example", "'unsafe-eval'", "data:", 7],
            "frameDomains": ["javascript:alert(1)"],
        }
    )
    assert declared == {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://*.cdn.example"],
    }
    policy = content_security_policy(declared)
    assert "connect-src https://api.example.com" in policy
    assert "frame-src 'none'" in policy and "unsafe-eval" not in policy
    # What pdf.js needs to start its worker (a blob: worker loading data: code), and no
    # other scheme for scripts or workers.
    assert "worker-src 'self' blob: https://*.cdn.example" in policy.split("; ")
    assert "script-src 'self' 'unsafe-inline' blob: data: https://*.cdn.example" in policy.split(
        "; "
    )
    assert declared_domains({}) == {} and "connect-src 'none'" in content_security_policy({})


def test_model_context_keeps_each_apps_last_update_until_the_next_turn() -> None:
    """`ui/update-model-context`: each update replaces the app's last; the next user message
    takes them once (SEP-1865); content this host did not declare is refused."""
    from mcpkit.host.web.bridge import AppHost, AppRefused, AppSession

    hub = EventHub()
    apps = AppHost(hub, WebUI(hub, Questions(hub)), "http://127.0.0.1:9")
    resource = AppResource("ui://a", "<p>a</p>")
    apps.apps["a1"] = AppSession("a1", "shop", {"name": "cart"}, "toolu_1", resource)
    assert apps.update_context("a1", {"content": [{"type": "text", "text": "old"}]}) == "old"
    shown = apps.update_context(
        "a1", {"content": [{"type": "text", "text": "2 items"}], "structuredContent": {"n": 2}}
    )
    assert shown == '2 items\n{"n": 2}'
    with pytest.raises(AppRefused, match="Invalid content format"):
        apps.update_context("a1", {"content": [{"type": "image", "data": "", "mimeType": "x"}]})
    with pytest.raises(AppRefused, match="unknown app"):
        apps.update_context("nope", {})
    taken = apps.take_context()
    assert taken == '[Context from the shop app (cart), not the user]\n2 items\n{"n": 2}'
    assert apps.take_context() == ""  # once
    apps.update_context("a1", {"content": [{"type": "text", "text": "x"}]})
    assert apps.update_context("a1", {}) == "" and apps.take_context() == ""  # cleared


def test_app_resource_checks_mime_and_decodes_blobs() -> None:
    html = "<!DOCTYPE html><p>hi</p>"
    blob = base64.b64encode(html.encode()).decode()
    found = app_resource(
        "ui://a", {"contents": [{"uri": "ui://a", "mimeType": APP_MIME, "blob": blob}]}
    )
    assert found.html == html and found.policy() == content_security_policy(None)
    with pytest.raises(AppResourceError, match="MIME type"):
        app_resource(
            "ui://a", {"contents": [{"uri": "ui://a", "mimeType": "text/html", "text": html}]}
        )
    with pytest.raises(AppResourceError, match="no contents"):
        app_resource("ui://a", {"contents": []})


# -- access checks (pure) ----------------------------------------------------------------------
def test_guard_checks_host_origin_token_cookie_and_csrf() -> None:
    guard = Guard(8123)
    assert guard.host_ok("127.0.0.1:8123") and guard.host_ok("localhost:8123")
    assert not guard.host_ok("evil.example:8123")  # DNS rebinding
    assert not guard.host_ok("127.0.0.1:9999") and not guard.host_ok(None)
    assert guard.origin_ok(None) and guard.origin_ok("http://127.0.0.1:8123")
    assert not guard.origin_ok("http://127.0.0.1:9999") and not guard.origin_ok("null")
    assert guard.login("wrong") is None and guard.login(None) is None
    session = guard.login(guard.token)
    assert session is not None
    assert guard.session_ok(f"other=1; mcpkit_ui={session}")
    assert not guard.session_ok("mcpkit_ui=forged") and not guard.session_ok('mcpkit_ui="')
    assert guard.csrf_ok(guard.csrf) and not guard.csrf_ok("x") and not guard.csrf_ok(None)
    assert "HttpOnly" in guard.cookie(session) and "SameSite=Strict" in guard.cookie(session)


def test_elicitation_answers_are_checked_again_on_the_host() -> None:  # ELIC-31
    detail = {
        "mode": "form",
        "schema": {
            "type": "object",
            "properties": {"units": {"type": "integer", "minimum": 1, "maximum": 3}},
            "required": ["units"],
        },
    }
    assert elicit_answer(detail, {"action": "accept", "content": {"units": 2}}) == {
        "action": "accept",
        "content": {"units": 2},
    }
    with pytest.raises(HTTPError, match="does not fit the form"):
        elicit_answer(detail, {"action": "accept", "content": {"units": 7}})
    with pytest.raises(HTTPError):
        elicit_answer(detail, {"action": "maybe"})
    assert elicit_answer(detail, {"action": "decline", "content": {"x": 1}}) == {
        "action": "decline"
    }


async def test_event_hub_replays_after_an_id() -> None:
    hub = EventHub()
    first = hub.publish("note", text="one")
    hub.publish("rpc", replay=False, text="live only")
    hub.publish("note", text="two")
    seen: list[str] = []
    async for event in hub.follow(first.id):
        seen.append(event.data["text"])
        if len(seen) == 1:
            hub.publish("note", text="three")
        if len(seen) == 2:
            break
    assert seen == ["two", "three"]


# -- over HTTP -----------------------------------------------------------------------------------
@pytest.fixture
async def web(tmp_path: Path) -> AsyncIterator[WebHost]:
    async with northwind_http() as env:
        cfg = example_config(env)
        replies = script("anthropic", [("shipping__track_parcel", {"parcel_id": "NW-1042"})], "ok")
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            web_for(cfg, api, tmp_path, agent="support") as web,
        ):
            yield web


async def test_requests_without_the_access_token_are_refused(web: WebHost) -> None:
    base = web.url.split("?")[0]
    # unsafe=True: aiohttp keeps cookies of IP-address hosts only when told to.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        for path in ("", "api/state", "static/main.js", "api/events"):
            async with http.get(base + path) as r:
                assert r.status == 401, path
        async with http.get(base + "?token=wrong") as r:
            assert r.status == 401
        async with http.get(base, headers={"Host": f"evil.example:{web.port}"}) as r:
            assert r.status == 403  # DNS rebinding
        async with http.get(web.url) as r:
            assert r.status == 200
            cookie = r.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            csp = r.headers["Content-Security-Policy"]
            assert "script-src 'self';" in csp and f"frame-src {web.sandbox_origin}" in csp
            page = await r.text()
            assert web.guard.csrf in page and web.guard.token not in page
        # The cookie alone is not enough for the API: the CSRF token and our Origin are needed.
        async with http.get(base + "api/state") as r:
            assert r.status == 403
        csrf = {"X-MCPKit-CSRF": web.guard.csrf}
        async with http.get(base + "api/state", headers=csrf) as r:
            assert r.status == 200 and (await r.json())["agent"] == "support"
        async with http.post(
            base + "api/chat",
            json={"text": "hi"},
            headers={**csrf, "Origin": "http://evil.example"},
        ) as r:
            assert r.status == 403
        async with http.get(URL(base + "static/..%2Fwebhost.py", encoded=True)) as r:
            assert r.status == 404  # nothing outside static/ can be named


async def test_app_sandbox_serves_the_policy_of_the_resource(web: WebHost) -> None:
    assert web.agent is not None
    await web.agent.ask("Where is NW-1042?")
    await web.apps.opened()
    (app,) = web.apps.apps.values()
    assert (app.server, app.tool["name"]) == ("shipping", "track_parcel")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{web.sandbox_origin}/sandbox/{app.id}") as r:
            assert r.status == 200
            policy = r.headers["Content-Security-Policy"]
            assert policy.startswith(content_security_policy(None))
            assert f"frame-ancestors http://127.0.0.1:{web.port}" in policy
            assert "Set-Cookie" not in r.headers
        async with http.get(f"{web.sandbox_origin}/sandbox/unknown") as r:
            assert r.status == 404
        async with http.get(f"{web.sandbox_origin}/api/state") as r:
            assert r.status == 404  # the sandbox origin has no API
    # VER-07: every request to the servers declared the apps extension with its MIME type.
    sent = [e["message"] for e in web.inspector.wire["shipping"] if e["dir"] == "send"]
    caps = sent[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps["extensions"][APPS_EXTENSION] == APPS_CAPABILITY
    assert caps["elicitation"] == {"form": {}, "url": {}}


async def test_legacy_initialize_declares_the_apps_extension() -> None:  # VER-07
    seen: list[tuple[str, dict[str, Any]]] = []
    target = [sys.executable, str(SERVERS / "basic_server.py")]
    async with Client(
        target,
        era="legacy",
        extensions={APPS_EXTENSION: APPS_CAPABILITY},
        trace=lambda d, m: seen.append((d, m)),
    ) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
    init = next(m for d, m in seen if d == "send" and m.get("method") == "initialize")
    assert init["params"]["capabilities"]["extensions"] == {APPS_EXTENSION: APPS_CAPABILITY}
    assert any(d == "recv" and m.get("result", {}).get("content") for d, m in seen)


async def test_terminal_host_never_offers_app_only_tools(tmp_path: Path) -> None:
    async with northwind_http() as env:
        cfg = example_config(env)
        replies = script(
            "anthropic",
            [("shipping__reserve_replacement", {"parcel_id": "NW-1042"})],
            "done",
        )
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            host_for(cfg, api, RecordingUI(), tmp_path) as host,
        ):
            names = {t.name for t in host.fleet.catalog()}
            assert "shipping__track_parcel" in names
            assert "shipping__reserve_replacement" not in names
            await host.agent(name="support").ask("Book a replacement for NW-1042.")
    assert "shipping__reserve_replacement" not in tool_names("anthropic", api.requests[0])
    ((text, is_error),) = tool_results("anthropic", api.requests[1])
    assert is_error and "no tool named" in text


@pytest.mark.timing
async def test_mcpkit_ui_prints_a_tokened_address_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    config = tmp_path / "host.json"  # its pin, log and audit files land in tmp_path
    shutil.copy(EXAMPLE, config)
    async with northwind_http() as env, FakeAPI(api_path("anthropic"), []) as api:
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "mcpkit.cli", "ui", "--config", str(config)],
            *["--agent", "support", "--model", "anthropic:fake", "--port", "0"],
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, **env, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.url},
            preexec_fn=default_sigint,
        )
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), scaled(30))).decode()
        url = line.split("open ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(url.split("?")[0]) as r:
                assert r.status == 401
            async with http.get(url) as r:
                assert r.status == 200
        proc.send_signal(signal.SIGINT)
        out = (await asyncio.wait_for(proc.communicate(), scaled(30)))[0].decode()
    assert proc.returncode in (0, 130), out  # 130: uvicorn re-raises the Ctrl-C once stopped
    assert "Traceback" not in out and "Error" not in out


async def test_url_elicitation_is_a_question_with_its_domain() -> None:  # ELIC-06/28/29
    hub = EventHub()
    ui = WebUI(hub, Questions(hub))
    request = Elicitation.from_wire(
        {"mode": "url", "message": "Sign in", "url": "https://xn--nrthwind-b5a.example/pay?x=1"}
    )

    async def user() -> None:  # the page: sees the question in the event stream, answers
        async for event in hub.follow():
            if event.data["kind"] == "question":
                assert event.data["domain"] == "xn--nrthwind-b5a.example"
                assert event.data["punycode"] is True and event.data["server"] == "returns"
                ui.questions.answer(event.data["id"], "accept")
                return

    answer, _ = await asyncio.gather(ui.elicit("returns", request), user())
    assert answer == {"action": "accept"}  # ELIC-15: consent only, no content
    assert [e["kind"] for e in hub.events("question")] == ["question"]
    bad = Elicitation.from_wire({"mode": "url", "message": "x", "url": "javascript:alert(1)"})
    assert await ui.elicit("returns", bad) == {"action": "decline"}


def test_a_pinned_app_only_tool_turned_visible_to_the_model_is_withheld(tmp_path: Path) -> None:
    pins = ToolPins(tmp_path / "pins.json")
    hidden = {"name": "refund", "_meta": {"ui": {"resourceUri": "ui://a", "visibility": ["app"]}}}
    pins.pin("shop", [hidden])
    assert [t["name"] for t in pins.review("shop", [hidden]).offered] == ["refund"]
    exposed = {**hidden, "_meta": {"ui": {"resourceUri": "ui://a", "visibility": ["model"]}}}
    review = ToolPins(tmp_path / "pins.json").review("shop", [exposed])
    assert review.offered == [] and [c.tool for c in review.withheld] == ["refund"]
    diff = review.withheld[0].diff()
    assert '-      "app"' in diff and '+      "model"' in diff
    # Tools without MCP Apps metadata keep the hash they had (pin files stay valid).
    plain = {"name": "t", "description": "d", "_meta": {"other": 1}}
    assert tool_hash(plain) == tool_hash({"name": "t", "description": "d"})


async def test_an_apps_resource_is_read_once_though_two_calls_ask_at_once() -> None:
    """Two calls of tools sharing one `ui://` resource, the second allowed while the first
    read is still on the wire, share that read: the second app is shown even if its server
    dies before answering a second read (the CI failure of
    test_tool_cancelled_when_the_server_dies_before_answering)."""
    from mcpkit import Server
    from mcpkit.client import Client
    from mcpkit.host.web.bridge import AppHost

    server = Server("apps")
    reads: list[str] = []
    started, release = asyncio.Event(), asyncio.Event()

    @server.resource("ui://apps/view", mime_type=APP_MIME)
    async def view() -> str:
        reads.append("read")
        started.set()
        await release.wait()
        return "<p>v</p>"

    hub = EventHub()
    apps = AppHost(hub, WebUI(hub, Questions(hub)), "http://127.0.0.1:9")
    async with Client(server.memory_transport()) as client:
        link = SimpleNamespace(name="apps", client=client, up=True)
        first = asyncio.ensure_future(apps.resource(link, "ui://apps/view"))  # type: ignore[arg-type]
        second = asyncio.ensure_future(apps.resource(link, "ui://apps/view"))  # type: ignore[arg-type]
        await asyncio.wait_for(started.wait(), scaled(10))
        release.set()
        assert (await first).html == (await second).html == "<p>v</p>"
    assert reads == ["read"]
