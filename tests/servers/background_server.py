"""A server whose tools run as tasks that the test ends: `build(name)` writes
`started-NAME` in `$BACKGROUND_DIR` and finishes once the test writes `release-NAME` there
(`cancelled-NAME` when it is cancelled instead); `approve(name)` asks the user first (its
task turns `input_required`). Stdio, or HTTP with a port argument (tasks outlive a host)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcpkit import Context, Server, TaskStore

DIR = Path(os.environ["BACKGROUND_DIR"])
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
server = Server("background", tasks=TaskStore(ttl_seconds=600, poll_interval_ms=20))


async def _released(name: str) -> None:
    (DIR / f"started-{name}").write_text("")
    try:
        while not (DIR / f"release-{name}").exists():  # noqa: ASYNC110 (the test's file)
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        (DIR / f"cancelled-{name}").write_text("")
        raise


@server.tool(task="required")
async def build(name: str) -> str:
    """Build something (runs until the test releases it)."""
    await _released(name)
    return f"built {name}"


@server.tool(task="required")
async def approve(name: str, ctx: Context) -> str:
    """Build something once the user approves."""
    await _released(name)
    answer = await ctx.elicit(f"Ship {name}?", CONFIRM, key="ship")
    return f"shipped {name}" if answer.accepted and answer.content["ok"] else "not shipped"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run("stdio")
