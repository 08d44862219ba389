"""A backend that a test kills mid-call: `python mortal_backend.py PID_FILE` (stdio) or
`python mortal_backend.py PORT PID_FILE --http`.

`stall` (a plain call) and `long_job` (a task, when the client allows) write this process's id
to PID_FILE once they run, then wait forever: the file appearing is the test's signal that the
call is in the backend's hands, and the id is what it sends SIGKILL to.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcpkit import Server, TaskStore

HTTP = "--http" in sys.argv
_args = [a for a in sys.argv[1:] if a != "--http"]
PID_FILE = Path(_args[1 if HTTP else 0]) if len(_args) > HTTP else None
server = Server("mortal", tasks=TaskStore(poll_interval_ms=50))


async def _hang() -> str:
    if PID_FILE is not None:
        partial = PID_FILE.with_suffix(".partial")
        partial.write_text(str(os.getpid()))
        partial.replace(PID_FILE)  # whole or absent: the test never reads half a number
    await asyncio.Event().wait()
    return "never"


@server.tool()
async def stall() -> str:
    """Wait forever (until killed)."""
    return await _hang()


@server.tool(task="optional")
async def long_job() -> str:
    """Run as a task and wait forever (until killed)."""
    return await _hang()


if __name__ == "__main__":
    if HTTP:
        server.run("http", port=int(_args[0]))
    else:
        server.run("stdio")
