"""The Northwind support agent behind mcpkit's web UI (what `make demo-ui` runs).

    python examples/northwind/demo_ui.py [--port 8765]

Starts the warehouse and returns servers (HTTP; shipping runs over stdio from the config),
then serves the UI for `host.json`'s support agent and prints its address (with the access
token). With no API key the agent is `ScriptedModel` (not AI): whatever you type, it replays
the support script (track a parcel and show its MCP App card; open a return, which asks for
consent and a form; reserve stock; a denied cancellation). Ctrl-C stops everything.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from demo import http_servers  # noqa: E402
from script import SUPPORT_TURNS, support_model  # noqa: E402

from mcpkit.host import load_config, make_model  # noqa: E402
from mcpkit.host.web import WebHost  # noqa: E402


async def main(port: int) -> None:
    async with http_servers() as env:
        config = load_config(HERE / "host.json", env=env)
        real = bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("OPENAI_API_KEY"))
        model = make_model(None) if real else support_model()
        system = config.raw["agents"]["support"]["system"]
        try:
            web = WebHost(config, model=model, agent="support", system=system, port=port)
        except OSError:  # the port is taken: any free one will do
            web = WebHost(config, model=model, agent="support", system=system, port=0)
        async with web:
            print(f"Northwind support agent: open {web.url}")
            if not real:
                print("No API key: the agent is ScriptedModel (not AI). Try these messages:")
                for turn in SUPPORT_TURNS:
                    print(f"  - {turn}")
            print("Ctrl-C to stop.")
            await web.wait_closed()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="UI port (0: any free port)")
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the servers are stopped on the way out
        asyncio.run(main(parser.parse_args().port))
