"""A stdio MCP server whose MCP Apps record every message the host sends them, for the browser
tests of mcpkit's side of the app bridge (tests/test_browser_bridge.py).

    python bridge_app_server.py ORIGIN     # ORIGIN serves app-with-deps.js (with CORS)

The recording app is built on the official `App` class of `@modelcontextprotocol/ext-apps`
(imported from ORIGIN, which its resource declares in `resourceDomains`); it writes each
notification and request it receives into `#log`, one line each (`method JSON`), and its
buttons send what an app may send: a context update, a teardown request, display mode
requests and a size. `show_bridge` shows it (declaring inline and full screen), `show_inline`
the same app declaring the inline mode only, `slow_bridge` never finishes (its deadline ends
it), `crash_bridge` kills the server before it answers, `show_worker` an app starting a
Worker from a `blob:` URL (as pdf.js does) under a declared policy, `show_undeclared` the
same without `_meta.ui.csp` (the restrictive default blocks the worker).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcpkit import Server

ORIGIN = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9"
MIME = "text/html;profile=mcp-app"
server = Server("bridge", version="1.0")

RECORDER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Recorder</title>
<style>html, body { margin: 0; } body { font: 13px system-ui, sans-serif; padding: 8px; }</style>
</head><body>
<button id="context">Update context</button>
<button id="close">Ask to close</button>
<button id="full">Full screen</button>
<button id="pip">Picture in picture</button>
<button id="inline">Inline</button>
<button id="size">Size 300x250</button>
<p id="out" role="status"></p>
<pre id="log"></pre>
<script type="module">
import { App } from "ORIGIN/app-with-deps.js";
const $ = (id) => document.getElementById(id);
const log = (method, params) => { $("log").textContent += `${method} ${JSON.stringify(params)}\\n`; };
const app = new App({ name: "recorder", version: "1.0.0" }, { availableDisplayModes: MODES },
  { autoResize: false });
app.ontoolinput = (p) => log("tool-input", p);
app.ontoolresult = (p) => log("tool-result", p.structuredContent);
app.ontoolcancelled = (p) => log("tool-cancelled", p);
app.onhostcontextchanged = (p) => log("host-context-changed", p);
app.onteardown = async (p) => {
  log("resource-teardown", p);
  // Work the host must wait for: a round trip through it before answering.
  await app.updateModelContext({ content: [{ type: "text", text: "saved on teardown" }] });
  return {};
};
$("context").onclick = async () => {
  await app.updateModelContext({ content: [{ type: "text", text: "The user picked row 7." }],
    structuredContent: { row: 7 } });
  $("out").textContent = "context updated";
};
$("close").onclick = () => app.requestTeardown();
const ask = async (mode) => {
  const r = await app.requestDisplayMode({ mode });
  $("out").textContent = `display mode ${r.mode}`;
};
$("full").onclick = () => ask("fullscreen");
$("pip").onclick = () => ask("pip");
$("inline").onclick = () => ask("inline");
$("size").onclick = () => app.sendSizeChanged({ width: 300, height: 250 });
await app.connect();
log("initialized", app.getHostContext());
$("out").textContent = "connected";
</script></body></html>
"""

WORKER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Worker</title></head><body>
<p id="out" role="status">starting a worker</p>
<script>
try {
  const code = new Blob(["onmessage = (e) => postMessage(e.data * 7);"], { type: "text/javascript" });
  const worker = new Worker(URL.createObjectURL(code));
  worker.onmessage = (e) => { document.getElementById("out").textContent = `worker says ${e.data}`; };
  worker.onerror = () => { document.getElementById("out").textContent = "worker failed"; };
  worker.postMessage(6);
} catch (err) {
  document.getElementById("out").textContent = `no worker: ${err.name}`;
}
</script></body></html>
"""


def recorder(modes: list[str]) -> str:
    return RECORDER.replace("ORIGIN", ORIGIN).replace("MODES", repr(modes))


APPS = {
    "ui://bridge/recorder": (recorder(["inline", "fullscreen"]), {"resourceDomains": [ORIGIN]}),
    "ui://bridge/inline": (recorder(["inline"]), {"resourceDomains": [ORIGIN]}),
    "ui://bridge/worker": (WORKER, {}),
    "ui://bridge/undeclared": (WORKER, None),
}


def register(uri: str, html: str, csp: dict[str, list[str]] | None) -> None:
    async def read() -> dict[str, object]:
        item: dict[str, object] = {"uri": uri, "mimeType": MIME, "text": html}
        if csp is not None:
            item["_meta"] = {"ui": {"csp": csp, "prefersBorder": True}}
        return item

    server.resource(uri, name=uri.rsplit("/", 1)[-1], mime_type=MIME)(read)


for _uri, (_html, _csp) in APPS.items():
    register(_uri, _html, _csp)


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/recorder"}})
async def show_bridge(label: str = "x") -> dict[str, str]:
    """Show the recording app."""
    return {"label": label}


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/inline"}})
async def show_inline() -> dict[str, str]:
    """Show the recording app that declares the inline display mode only."""
    return {"label": "inline"}


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/recorder"}})
async def slow_bridge() -> str:
    """Never finishes (the host's deadline ends it)."""
    await asyncio.sleep(3600)
    return "never"


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/recorder"}})
async def crash_bridge() -> str:
    """The server dies before answering (the call fails without a result)."""
    os._exit(3)


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/worker"}})
async def show_worker() -> str:
    """An app that starts a Worker from a blob: URL (declared policy)."""
    return "worker"


@server.tool(meta={"ui": {"resourceUri": "ui://bridge/undeclared"}})
async def show_undeclared() -> str:
    """The same app without `_meta.ui.csp`: the restrictive default applies."""
    return "undeclared"


if __name__ == "__main__":
    server.run("stdio")
