"""A stdio MCP server with an MCP App built on the official `App` class from the npm package
`@modelcontextprotocol/ext-apps`, for the browser tests of mcpkit's MCP Apps host.

    python counter_app_server.py ORIGIN     # ORIGIN serves app-with-deps.js (with CORS)

The app imports the class from ORIGIN, which its resource declares in `resourceDomains`
(nothing else may load). Tools: `show_counter` (model and app), `increment` (app only: never
in the model's catalogue), `model_only` (refused to apps). The page's buttons call
`increment`, `model_only` and `get_stock` (another server's tool: refused), and open a link.
`survey` asks for a form with every field type elicitation allows and returns the answer;
`sign_in` asks the user to open a URL (URL-mode elicitation). A resource, a template and a
prompt give the inspector something to read and run.
"""

from __future__ import annotations

import json
import sys

from mcpkit import Context, Server

ORIGIN = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9"
UI = "ui://counter/app"
MIME = "text/html;profile=mcp-app"
server = Server("counter", version="1.0")
COUNT = {"value": 0}

HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Counter</title>
<style>body { font-family: system-ui, sans-serif; margin: 12px; } button { margin: 4px; }</style>
</head><body>
<h3>Counter: <span id="count">?</span></h3>
<div>input: <code id="input">?</code></div>
<button id="inc">Increment</button>
<button id="model">Call model_only</button>
<button id="other">Call get_stock</button>
<button id="link">Open docs</button>
<button id="msg">Suggest a message</button>
<p id="out" role="status"></p>
<script type="module">
import { App } from "ORIGIN/app-with-deps.js";
const $ = (id) => document.getElementById(id);
const app = new App({ name: "counter-app", version: "1.0.0" }, {});
app.ontoolinput = (params) => { $("input").textContent = JSON.stringify(params.arguments); };
app.ontoolresult = (result) => { $("count").textContent = String(result.structuredContent.count); };
async function attempt(name) {
  try {
    const r = await app.callServerTool({ name, arguments: name === "get_stock" ? { sku: "KET-BLUE" } : {} });
    $("out").textContent = r.isError ? `error: ${r.content[0].text}` : `ok: ${JSON.stringify(r.structuredContent)}`;
    if (name === "increment") $("count").textContent = String(r.structuredContent.count);
  } catch (err) {
    $("out").textContent = `refused: ${err.message}`;
  }
}
$("inc").onclick = () => attempt("increment");
$("model").onclick = () => attempt("model_only");
$("other").onclick = () => attempt("get_stock");
$("link").onclick = async () => {
  try { await app.openLink({ url: "https://example.com/counter-docs" }); $("out").textContent = "link opened"; }
  catch (err) { $("out").textContent = `link refused: ${err.message}`; }
};
$("msg").onclick = async () => {
  await app.sendMessage({ role: "user", content: [{ type: "text", text: "Reset the counter, please." }] });
  $("out").textContent = "message suggested";
};
await app.connect();
$("out").textContent = `connected to ${app.getHostVersion().name}`;
</script></body></html>
""".replace("ORIGIN", ORIGIN)


@server.tool(meta={"ui": {"resourceUri": UI}})
async def show_counter(label: str = "clicks") -> dict[str, object]:
    """Show the counter (with its app)."""
    return {"label": label, "count": COUNT["value"]}


@server.tool(meta={"ui": {"resourceUri": UI, "visibility": ["app"]}})
async def increment() -> dict[str, int]:
    """Add one (the app's button)."""
    COUNT["value"] += 1
    return {"count": COUNT["value"]}


@server.tool(meta={"ui": {"visibility": ["model"]}})
async def model_only() -> str:
    """Only the model may call this."""
    return "model only"


SURVEY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "email": {"type": "string", "title": "E-mail", "format": "email"},
        "website": {"type": "string", "title": "Website", "format": "uri"},
        "birthday": {"type": "string", "title": "Birthday", "format": "date"},
        "meeting": {"type": "string", "title": "Meeting", "format": "date-time"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": True},
        "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
        "legacy": {
            "type": "string",
            "title": "Legacy",
            "enum": ["a", "b"],
            "enumNames": ["Alpha", "Beta"],
        },
        "toppings": {
            "type": "array",
            "title": "Toppings",
            "items": {"type": "string", "enum": ["cheese", "ham", "olives"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [{"const": "x", "title": "Extra X"}, {"const": "y", "title": "Extra Y"}]
            },
        },
    },
    "required": ["name", "age", "toppings"],
}


@server.tool()
async def survey(ctx: Context) -> str:
    """Ask the user a form with every field type; returns what came back."""
    answer = await ctx.elicit("Tell us about you.", SURVEY)
    return json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True)


@server.tool()
async def two_steps(ctx: Context) -> str:
    """Report half the work done, then wait for the user's go-ahead (a form) to finish."""
    await ctx.report_progress(1, 2, "first half done")
    answer = await ctx.elicit(
        "Go on with the second half?",
        {"type": "object", "properties": {"go": {"type": "boolean", "title": "Go on"}}},
    )
    await ctx.report_progress(2, 2, "second half done")
    return "finished" if answer.accepted else "stopped"


@server.tool()
async def sign_in(ctx: Context) -> str:
    """Ask the user to open a sign-in page (URL mode)."""
    answer = await ctx.elicit_url("Sign in to Counter Cloud.", "https://counter.example/login")
    return answer.action


@server.resource("counter://value", name="value", mime_type="text/plain")
async def value() -> str:
    """The counter's value."""
    return f"count={COUNT['value']}"


@server.resource("counter://history/{n}", name="history", mime_type="text/plain")
async def history(n: str) -> str:
    """The last n values."""
    return f"last {n} values"


@server.prompt()
async def greet(name: str) -> str:
    """A greeting for the counter's user."""
    return f"Say hello to {name}."


@server.resource(UI, name="counter_app", mime_type=MIME)
async def counter_app() -> dict[str, object]:
    return {
        "uri": UI,
        "mimeType": MIME,
        "text": HTML,
        "_meta": {"ui": {"csp": {"resourceDomains": [ORIGIN]}, "prefersBorder": True}},
    }


if __name__ == "__main__":
    server.run("stdio")
