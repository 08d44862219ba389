"""`mcpkit record` and `mcpkit replay` as real processes: a host conversation (scripted model on
the real anthropic SDK against a local fake API) over the published npm filesystem server,
recorded and then replayed offline in a fresh process with other ids; an elicitation round on
both eras; this run's ids and progress token on the raw stdio wire; secrets kept out of the
cassette; the commands' one-line errors. The parts alone: tests/test_cassette.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import FakeAPI, RecordingUI, anthropic_reply, api_path, make_model, tool_results
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.host import ConsentPolicy, Host, HostConfig, parse_config
from npm_servers import npm_servers
from processes import stop
from support import ROOT, free_port, scaled, wait_port

SERVER = ROOT / "tests/servers/cassette_server.py"
MCPKIT = [sys.executable, "-m", "mcpkit"]
SECRET = "sk-live-0123456789abcdef"
ARGUMENT_SECRET = "key-of-the-shop-42424242"


def recorder(cassette: Path, *command: str, redact: tuple[str, ...] = ()) -> list[str]:
    rules = [word for rule in redact for word in ("--redact", rule)]
    return [*MCPKIT, "record", "--out", str(cassette), *rules, "--", *command]


async def converse(config: HostConfig, steps: list[Any], prompt: str) -> list[dict[str, Any]]:
    """One user turn of a host whose model follows `steps`; the bodies the model API got."""
    replies = [lambda body, s=step, n=n: anthropic_reply(s, n) for n, step in enumerate(steps)]
    async with FakeAPI(api_path("anthropic"), replies) as api:
        model = make_model("anthropic", api)
        policy = ConsentPolicy(allow=["files__*"])
        async with Host(config, model=model, ui=RecordingUI(), policy=policy) as host:
            await host.agent().ask(prompt)
    return api.requests


async def test_a_host_conversation_over_the_npm_filesystem_server_replays_offline(
    tmp_path: Path,
) -> None:
    launcher = npm_servers()["filesystem"]
    files = tmp_path / "files"
    files.mkdir()
    (files / "hello.txt").write_text("hello from the filesystem\n")
    cassette = tmp_path / "filesystem.jsonl"
    entry = {
        "command": str(launcher),
        "args": [str(files)],
        "record": str(cassette),  # the host runs it behind `mcpkit record --out CASSETTE`
        "redact": ["*session*"],
        "env": {"FILES_API_TOKEN": SECRET},
    }
    listing = [
        ("files__list_directory", {"path": str(files)}),
        ("files__read_text_file", {"path": str(files / "hello.txt")}),
    ]
    recorded = await converse(
        parse_config({"mcpServers": {"files": entry}}),
        [[("files__list_allowed_directories", {})], listing, "Done."],
        "What is in my files?",
    )
    shutil.rmtree(files)  # offline: whatever the replay answers comes from the cassette
    missing = [("files__read_text_file", {"path": str(files / "missing.txt")})]
    replayed = await converse(
        parse_config({"mcpServers": {"files": {"cassette": str(cassette)}}}),
        [listing, missing, "Done."],  # no first call: every JSON-RPC id differs from the recording
        "What is in my files?",
    )
    results = tool_results("anthropic", recorded[2])
    assert "[FILE] hello.txt" in results[0][0] and "hello from the filesystem" in results[1][0]
    assert tool_results("anthropic", replayed[1]) == results  # identical, offline
    ((error, is_error),) = tool_results("anthropic", replayed[2])
    assert is_error and "not in the cassette" in error
    assert "the closest recorded request is tools/call read_text_file" in error
    raw = cassette.read_text()
    assert SECRET not in raw
    header = json.loads(raw.splitlines()[0])
    assert header["env"]["FILES_API_TOKEN"] == "[REDACTED]"
    assert header["era"] == "2025-11-25" and header["serverInfo"]["name"]
    assert header["server"]["command"] == [str(launcher), str(files)]
    assert "*session*" in header["redact"]


def confirming(asked: list[str]) -> Any:
    async def confirm(request: Elicitation) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"confirm": True}}

    return confirm


@pytest.mark.parametrize(("era", "version"), [("legacy", "2025-11-25"), ("modern", "2026-07-28")])
async def test_an_elicitation_round_is_recorded_and_replayed(
    era: str, version: str, tmp_path: Path
) -> None:
    cassette = tmp_path / "order.jsonl"
    asked: list[str] = []
    command = recorder(cassette, sys.executable, str(SERVER))
    async with Client(command, era=era, elicitation=confirming(asked)) as client:
        live = await client.call_tool("order", {"item": "tea"})
    replay = [*MCPKIT, "replay", str(cassette)]
    async with Client(replay, era=era, elicitation=confirming(asked)) as client:
        again = await client.call_tool("order", {"item": "tea"})
    port = free_port()
    served = await asyncio.create_subprocess_exec(
        *replay, "--http", "--port", str(port), "--quiet", stderr=asyncio.subprocess.PIPE
    )
    try:
        await wait_port(port, served)
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, era=era, elicitation=confirming(asked)) as client:
            over_http = await client.call_tool("order", {"item": "tea"})
    finally:
        await stop(served)
    assert live.text == again.text == over_http.text == "ordered tea"
    assert asked == ["Order tea?"] * 3  # each replay asked the user too
    header = json.loads(cassette.read_text().splitlines()[0])
    assert header["era"] == version and header["serverInfo"]["name"] == "cassette-test"


async def test_the_replay_answers_with_this_runs_ids_on_the_wire(tmp_path: Path) -> None:
    cassette = tmp_path / "order.jsonl"
    async with Client(
        recorder(cassette, sys.executable, str(SERVER)), era="legacy", elicitation=confirming([])
    ) as client:
        await client.call_tool("order", {"item": "tea"})
    proc = await asyncio.create_subprocess_exec(
        *MCPKIT, "replay", str(cassette),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    async def say(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await proc.stdin.drain()

    async def hear() -> dict[str, Any]:
        line = await asyncio.wait_for(proc.stdout.readline(), scaled(20))
        return dict(json.loads(line))

    try:
        client = {"name": "other-client", "version": "9"}
        await say({"id": "first", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": client}})  # fmt: skip
        assert (await hear())["id"] == "first"
        await say({"method": "notifications/initialized"})
        call = {"name": "order", "arguments": {"item": "tea"}, "_meta": {"progressToken": "p-77"}}
        await say({"id": "call-9", "method": "tools/call", "params": call})
        question = await hear()
        assert question["method"] == "elicitation/create"
        await say(
            {"id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}}
        )
        answer = await hear()
        assert answer["id"] == "call-9"
        assert answer["result"]["content"][0]["text"] == "ordered tea"
        other = {"name": "order", "arguments": {"item": "coffee"}}
        await say({"id": 10, "method": "tools/call", "params": other})
        miss = await hear()
        assert miss["id"] == 10 and miss["error"]["code"] == -32602
        assert (
            'tools/call order {"item":"coffee"} is not in the cassette' in miss["error"]["message"]
        )
        assert (
            'closest recorded request is tools/call order {"item":"tea"}'
            in miss["error"]["message"]
        )
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), scaled(20)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_secrets_in_the_environment_arguments_and_results_stay_out(tmp_path: Path) -> None:
    cassette = tmp_path / "login.jsonl"
    command = recorder(cassette, sys.executable, str(SERVER), redact=("*user*",))
    async with Client(command, env={"SHOP_API_TOKEN": SECRET}) as client:
        login = await client.call_tool("login", {"user": "ann", "api_key": ARGUMENT_SECRET})
        env = await client.call_tool("environment", {"name": "SHOP_API_TOKEN"})
    assert login.text == f"ann logged in with {ARGUMENT_SECRET}" and env.text == SECRET
    raw = cassette.read_text()
    assert SECRET not in raw and ARGUMENT_SECRET not in raw
    assert '"user":"[REDACTED]"' in raw  # the user's own rule (--redact)
    async with Client([*MCPKIT, "replay", str(cassette)]) as client:
        login = await client.call_tool("login", {"user": "bob", "api_key": "another-key-777"})
        env = await client.call_tool("environment", {"name": "SHOP_API_TOKEN"})
    assert login.text == "ann logged in with [REDACTED]" and env.text == "[REDACTED]"


@pytest.mark.timing
async def test_a_recorder_stopped_by_sigterm_completes_its_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "stopped.jsonl"
    proc = await asyncio.create_subprocess_exec(
        *recorder(cassette, sys.executable, str(SERVER)),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        proc.stdin.write(json.dumps(initialize).encode() + b"\n")
        await proc.stdin.drain()
        answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), scaled(20)))
        assert answer["result"]["serverInfo"]["name"] == "cassette-test"
    finally:
        code = await stop(proc)  # SIGTERM with the client still attached
    assert code == 0
    header = json.loads(cassette.read_text().splitlines()[0])
    assert header["era"] == "2025-11-25" and header["serverInfo"]["name"] == "cassette-test"


@pytest.mark.parametrize(("era", "version"), [("legacy", "2025-11-25"), ("modern", "2026-07-28")])
async def test_an_http_server_is_recorded_with_its_headers_redacted(
    era: str, version: str, tmp_path: Path
) -> None:
    cassette = tmp_path / "http.jsonl"
    upstream, front = free_port(), free_port()
    url = f"http://127.0.0.1:{upstream}/mcp"
    server = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVER), "--http", str(upstream)
    )
    recording = None
    asked: list[str] = []
    try:
        await wait_port(upstream, server)
        recording = await asyncio.create_subprocess_exec(
            *MCPKIT, "record", "--out", str(cassette), url, "--http", "--port", str(front), "-q"
        )
        await wait_port(front, recording)
        async with Client(
            f"http://127.0.0.1:{front}/mcp",
            era=era,
            headers={"Authorization": f"Bearer {SECRET}"},
            elicitation=confirming(asked),
        ) as client:
            ordered = await client.call_tool("order", {"item": "tea"})
            login = await client.call_tool("login", {"user": "ann", "api_key": ARGUMENT_SECRET})
        assert await stop(recording) == 0  # SIGTERM: the cassette is complete
    finally:
        await stop(server)
        if recording is not None:
            await stop(recording)
    assert ordered.text == "ordered tea" and login.text.endswith(ARGUMENT_SECRET)
    raw = cassette.read_text()
    assert SECRET not in raw and ARGUMENT_SECRET not in raw
    header, *entries = [json.loads(line) for line in raw.splitlines()]
    assert header["server"] == {"url": url} and header["era"] == version
    sent = [{k.lower(): v for k, v in e.get("headers", {}).items()} for e in entries]
    assert any(h.get("authorization") == "[REDACTED]" for h in sent)
    async with Client(
        [*MCPKIT, "replay", str(cassette)], era=era, elicitation=confirming(asked)
    ) as client:
        again = await client.call_tool("order", {"item": "tea"})
    assert again.text == "ordered tea" and asked == ["Order tea?"] * 2


def test_the_commands_fail_in_one_line(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*MCPKIT, *args], capture_output=True, text=True, timeout=scaled(60), cwd=tmp_path,
            env={**os.environ, "NO_COLOR": "1"},
        )  # fmt: skip

    missing = run("replay", "nothing.jsonl")
    assert missing.returncode == 1
    assert (
        missing.stderr.count("\n") == 1
        and "cannot read the cassette nothing.jsonl" in missing.stderr
    )
    no_command = run("record", "--out", "x.jsonl")
    assert no_command.returncode == 1 and "no server to record" in no_command.stderr
    stdio_http = run("record", "--out", "x.jsonl", "--http", "--", "python", "server.py")
    assert (
        stdio_http.returncode == 1 and "a stdio server is recorded over stdio" in stdio_http.stderr
    )
    not_url = run("record", "--out", "x.jsonl", "server.example:80")
    assert not_url.returncode == 1 and "looks like a URL without its scheme" in not_url.stderr
    gone = run("record", "--out", "x.jsonl", "--", "no-such-server-command")
    assert (
        gone.returncode == 1 and "cannot start the server 'no-such-server-command'" in gone.stderr
    )
