"""A stdio MCP server whose MCP App calls its server by itself as soon as it loads, for the
browser tests of apps that survive a page reload and of consent asked in the app's card.

    python appsession_server.py ORIGIN COUNT_FILE [ask]

ORIGIN serves the official `App` class (`app-with-deps.js`, npm `@modelcontextprotocol/
ext-apps`). `show_board` (the model's tool) has the app; `load_rows` and `load_totals` are
app-only tools the app calls on load, and `load_rows` again when its button is clicked. Every
call of an app-only tool that runs adds one to the number written to COUNT_FILE. With `ask`,
`load_rows` first asks the user which quarter (a form) and counts only once answered.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcpkit import Context, Server

ORIGIN = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9"
COUNT_FILE = Path(sys.argv[2]) if len(sys.argv) > 2 else None
ASK = sys.argv[3:4] == ["ask"]
UI = "ui://board/app"
MIME = "text/html;profile=mcp-app"
APP_ONLY = {"ui": {"resourceUri": UI, "visibility": ["app"]}}
server = Server("board", version="1.0")
CALLS = {"n": 0}

HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Board</title></head><body>
<h3>Board <span id="label">?</span> (results received: <span id="results">0</span>)</h3>
<p id="loaded">Loading…</p>
<button id="again">Load the rows again</button>
<p id="out"></p>
<script type="module">
import { App } from "ORIGIN/app-with-deps.js";
const $ = (id) => document.getElementById(id);
const app = new App({ name: "board-app", version: "1.0.0" }, {});
let results = 0;
app.ontoolresult = (result) => {
  $("label").textContent = result.structuredContent.label;
  $("results").textContent = String(++results);
};
async function load(name) {
  const r = await app.callServerTool({ name, arguments: { table: "q3" } });
  return r.isError ? `error ${r.content[0].text}` : `${name} #${r.structuredContent.call}`;
}
$("again").onclick = async () => {
  try { $("out").textContent = await load("load_rows"); }
  catch (err) { $("out").textContent = `refused: ${err.message}`; }
};
await app.connect();
try {
  const rows = await load("load_rows");
  const totals = await load("load_totals");
  $("loaded").textContent = `${rows}, ${totals}`;
} catch (err) {
  $("loaded").textContent = `refused: ${err.message}`;
}
</script></body></html>
""".replace("ORIGIN", ORIGIN)


def _count() -> int:
    CALLS["n"] += 1
    if COUNT_FILE is not None:
        COUNT_FILE.write_text(str(CALLS["n"]))
    return CALLS["n"]


@server.tool(meta={"ui": {"resourceUri": UI}})
async def show_board(label: str = "board") -> dict[str, object]:
    """Show the board (with its app)."""
    return {"label": label}


@server.tool(meta=APP_ONLY)
async def load_rows(table: str, ctx: Context) -> dict[str, object]:
    """The board's rows (the app calls it)."""
    if ASK:
        quarter = {"type": "string", "title": "Quarter"}
        answer = await ctx.elicit(
            "Which quarter?", {"type": "object", "properties": {"quarter": quarter}}
        )
        table = str((answer.content or {}).get("quarter", table))
    return {"table": table, "call": _count()}


@server.tool(meta=APP_ONLY)
async def load_totals(table: str) -> dict[str, object]:
    """The board's totals (the app calls it)."""
    return {"table": table, "call": _count()}


@server.resource(UI, name="board_app", mime_type=MIME)
async def board_app() -> dict[str, object]:
    return {
        "uri": UI,
        "mimeType": MIME,
        "text": HTML,
        "_meta": {"ui": {"csp": {"resourceDomains": [ORIGIN]}, "prefersBorder": True}},
    }


if __name__ == "__main__":
    server.run("stdio")
