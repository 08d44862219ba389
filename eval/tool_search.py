"""`make eval-tools`: how well deferred loading finds tools, and what it saves per request.

The 26 recorded catalogues (tests/data/tool_catalogues, 404 real tools) are served behind one
`Host`; each of the labelled requests (tests/data/tool_requests.json)
is one conversation with a scripted stand-in for the model (no AI, no network), each
catalogue its own Streamable HTTP server (one process serves them all):

  round 1  the model calls `search_tools` with the request, verbatim;
  round 2  it calls a labelled tool if the search offered one, else the first one offered;
  round 3  it answers.

recall@k: share of requests with a labelled tool among the first k found; MRR: mean of
1/rank of the first labelled tool (0 when not found within the search limit). Catalogue
tokens per round: o200k_base tokens of the tool definitions in each model request, averaged
over all rounds; the full catalogue is the same 404 definitions in every round.

Before that run, each ranker that can run here (`rankers.RANKERS`: BM25; the embedding model
and the hybrid of both where the `search` extra is installed) ranks the same tool documents
the host indexes, in this process: recall@1, recall@5, MRR, the index build and the latency
of one query. Honesty checks follow: BM25 without its synonym groups, BM25 and the hybrid
without the nouns of identifier shapes (written after reading these requests' misses), and
the hybrid's fusion constant chosen by cross-validation with the labelled tools' servers
held out (5 folds, 3 shuffles): what a `k` picked on other servers' requests scores on these ones. The
end-to-end run uses the host's default ranker ("auto"), and its `recall@5` is the last line.

    .venv/bin/python eval/tool_search.py [--verbose] [--ranker NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
from pathlib import Path
from typing import Any

from rankers import compare_rankers  # eval/rankers.py (the script's folder is on sys.path)

from mcpkit.host import ConsentPolicy, Host, ToolSettings, parse_config
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.tokens import EncodingCounter, SpecTokens

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data"
SEARCH_LIMIT = 5


class Quiet:
    """A user who allows every call and reads nothing but warnings."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None

    def warn(self, text: str) -> None:
        print(f"warning: {text}", file=sys.stderr)

    async def confirm(self, call: Any) -> bool:
        return True

    async def elicit(self, server: str, request: Any) -> dict[str, Any]:
        return {"action": "decline"}


class EvalModel:
    """The scripted stand-in: search, call, answer; records what each request offered."""

    name = "openai:gpt-4.1"  # the agent counts tokens with this model's encoding (o200k_base)

    def __init__(self, tokens: SpecTokens) -> None:
        self.tokens = tokens
        self.request = ""
        self.labels: set[str] = set()
        self.found: list[str] = []
        self.rounds: list[int] = []

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        self.rounds.append(self.tokens.total(tools))
        results = [m for m in history if isinstance(m, ToolResults)]
        if not results:
            return AssistantMessage("", [ToolCall("s", "search_tools", {"query": self.request})])
        if len(results) == 1:
            text = results[0].results[0].content[0].get("text", "")
            self.found = re.findall(r"^- (\S+):", text, re.MULTILINE)
            pick = next((f for f in self.found if f in self.labels), None) or next(
                iter(self.found), None
            )
            if pick is not None:
                return AssistantMessage("", [ToolCall("c", pick, {})])
        return AssistantMessage("done")


def names() -> list[str]:
    return [path.stem for path in sorted((DATA / "tool_catalogues").glob("*.json"))]


async def serve(port: int) -> asyncio.subprocess.Process:
    """All catalogues in one process, each its own Streamable HTTP server at /NAME/mcp."""
    script = ROOT / "tests/servers/catalogue_server.py"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), "--http", str(port), *names()
    )
    for _ in range(600):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)  # no readiness line to wait for
            continue
        writer.close()
        return proc
    raise RuntimeError("the catalogue server did not start")


def config(port: int) -> Any:
    url = f"http://127.0.0.1:{port}"
    servers = {name: {"type": "http", "url": f"{url}/{name}/mcp"} for name in names()}
    return parse_config({"mcpServers": servers}, env={})


async def evaluate(verbose: bool, ranker: str) -> dict[str, float]:
    requests = json.loads((DATA / "tool_requests.json").read_text())["requests"]
    tokens = SpecTokens(EncodingCounter("o200k_base"))
    model = EvalModel(tokens)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = await serve(port)
    try:
        return await _evaluate(config(port), requests, model, tokens, verbose, ranker)
    finally:
        server.terminate()
        await server.wait()


async def _evaluate(
    cfg: Any,
    requests: list[dict[str, Any]],
    model: EvalModel,
    tokens: SpecTokens,
    verbose: bool,
    ranker: str,
) -> dict[str, float]:
    ranks: list[int | None] = []
    settings = ToolSettings(search_limit=SEARCH_LIMIT, ranker=ranker)
    async with Host(cfg, model=model, ui=Quiet(), policy=ConsentPolicy(allow=["*"])) as host:
        catalogue = host.fleet.catalog()
        full = tokens.total(catalogue)
        probe = host.agent(tools=settings)
        await probe.tools()
        compare_rankers(list(probe.catalog.docs.values()), requests, SEARCH_LIMIT)
        print(f"end to end through the host, ranker {ranker!r}:")
        for item in requests:
            model.request, model.labels, model.found = item["request"], set(item["tools"]), []
            agent = host.agent(tools=settings)
            await agent.ask(item["request"])
            rank = next((i for i, f in enumerate(model.found) if f in model.labels), None)
            ranks.append(rank)
            if verbose and (rank is None or rank > 0):
                print(f"  {rank if rank is not None else '-'}  {item['request']}\n"
                      f"     want {item['tools']}\n     got  {model.found}")  # fmt: skip
    n = len(requests)
    deferred = sum(model.rounds) / len(model.rounds)
    return {
        "servers": len(host.fleet.links),
        "tools": len(catalogue),
        "requests": n,
        "recall@1": sum(r == 0 for r in ranks) / n,
        "recall@5": sum(r is not None and r < 5 for r in ranks) / n,
        "mrr": sum(1 / (r + 1) for r in ranks if r is not None) / n,
        "full": full,
        "deferred": deferred,
        "rounds": len(model.rounds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Evaluate search_tools on real catalogues.")
    parser.add_argument("--verbose", "-v", action="store_true", help="list the misses")
    parser.add_argument("--ranker", default="auto", help="the host's ranker (default: auto)")
    args = parser.parse_args()
    r = asyncio.run(evaluate(args.verbose, args.ranker))
    print(f"{r['servers']} servers, {r['tools']} tools, {r['requests']} labelled requests")
    print(f"recall@1 {r['recall@1']:.3f}")
    print(f"MRR {r['mrr']:.3f}")
    print(
        f"catalogue tokens per round (o200k_base): full {r['full']:,.0f}, deferred "
        f"{r['deferred']:,.0f} over {r['rounds']} rounds ({r['full'] / r['deferred']:.0f}x fewer)"
    )
    print(f"recall@5 {r['recall@5']:.3f}")


if __name__ == "__main__":
    main()
