"""A stdio server that starts slower than the client's era probe: it sleeps before reading
stdin (a first `npx -y` run, a `docker run -i`, heavy imports, a crowded machine).

    python slow_server.py legacy|modern|modern-only SECONDS [--starts=FILE]

`legacy` is a bare 2025-11-25 server, as many published ones are: it answers `server/discover`
(unknown before `initialize`) with -32601 and serves `initialize` and `tools/call echo`.
`modern` is an mcpkit server (both eras); `modern-only` refuses `initialize` with -32022.
`--starts=FILE`: FILE gets a line each time the server starts (a test counts its restarts).
"""

from __future__ import annotations

import json
import sys
import time

kind, delay = sys.argv[1], float(sys.argv[2])
for arg in sys.argv[3:]:
    if arg.startswith("--starts="):
        with open(arg.removeprefix("--starts="), "a") as starts:
            starts.write("started\n")
time.sleep(delay)  # nothing is read from stdin meanwhile

if kind != "legacy":
    from mcpkit import Server

    server = Server("slow", legacy=kind == "modern")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    server.run()
    sys.exit(0)


def reply(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


TOOL = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {}}}}
for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue  # notifications: initialized, cancelled
    params = request.get("params") or {}
    if method == "initialize":
        result: dict[str, object] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-legacy", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
    else:
        reply({"id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})
        continue
    reply({"id": rid, "result": result})
