"""uvicorn is reached into by one module only (issue 27 item 4): `uvicorn_adapter` states the
versions it was written for, this file fails when the installed uvicorn leaves them, and a
server under an unsupported uvicorn still serves (uvicorn's h11, head limits off) and says so
in one line."""

from __future__ import annotations

import ast
import asyncio
import sys
from pathlib import Path

import orjson

from support import ROOT, free_port, headers_for, rpc, scaled, wait_port

SRC = ROOT / "src/mcpkit"
ADAPTER = SRC / "server/transports/uvicorn_adapter.py"
PROBES = {"getattr", "hasattr", "setattr", "vars"}


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(SRC.rglob("*.py"))]


def test_the_installed_uvicorn_is_the_one_the_adapter_was_written_for() -> None:
    from mcpkit.server.transports import uvicorn_adapter as adapter

    low, high = adapter.SUPPORTED
    installed = adapter.uvicorn_version()
    assert adapter.supported(), (
        f"uvicorn {installed} left the range {low}..{high} that "
        "server/transports/uvicorn_adapter.py was written for: re-read the uvicorn internals "
        "it lists, then move SUPPORTED"
    )


def test_the_range_is_half_open() -> None:
    from mcpkit.server.transports.uvicorn_adapter import SUPPORTED, supported

    low, high = SUPPORTED
    assert supported(low) and supported((*low, 9))
    assert not supported(high) and not supported((low[0], low[1] - 1, 9))


def test_only_the_adapter_imports_uvicorn_internals() -> None:
    """Outside the adapter: `import uvicorn` and its public `Config`/`Server`, nothing deeper,
    and no class derived from a uvicorn class."""
    offenders = []
    for path, tree in _modules():
        if path == ADAPTER:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("uvicorn."):
                offenders.append(f"{path.relative_to(SRC)}: from {node.module}")
            elif isinstance(node, ast.Import):
                deep = [a.name for a in node.names if a.name.startswith("uvicorn.")]
                offenders += [f"{path.relative_to(SRC)}: import {name}" for name in deep]
            elif isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base) for base in node.bases]
                derived = [b for b in bases if "uvicorn" in b or "_uvicorn" in b]
                offenders += [f"{path.relative_to(SRC)}: class {node.name}({b})" for b in derived]
    assert offenders == []


def test_no_attribute_probing_in_server_transports() -> None:
    """Issue 27: the server's transports name what they use (no getattr/hasattr/setattr/vars
    or __dict__)."""
    found = []
    for path in sorted((SRC / "server/transports").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.id if isinstance(node, ast.Name) else None
            if name in PROBES or (isinstance(node, ast.Attribute) and node.attr == "__dict__"):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


async def test_an_unsupported_uvicorn_serves_without_head_limits_and_says_so() -> None:
    port = free_port()
    script = ROOT / "tests/servers/limits_server.py"
    pretend = (
        "import runpy, sys\n"
        "from mcpkit.server.transports import uvicorn_adapter\n"
        "uvicorn_adapter.SUPPORTED = ((0, 1), (0, 2))\n"
        f"sys.argv = [{str(script)!r}, {str(port)!r}, '{{}}']\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", pretend, stderr=asyncio.subprocess.PIPE
    )
    try:
        await wait_port(port, proc)
        message = rpc("tools/call", {"name": "echo", "arguments": {"text": "served"}})
        body = orjson.dumps(message)
        headers = {**headers_for(message), "content-length": str(len(body)), "connection": "close"}
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body)
        reply = await asyncio.wait_for(reader.read(), scaled(10))
        writer.close()
        assert reply.startswith(b"HTTP/1.1 200") and b"served" in reply
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))
    assert proc.stderr is not None
    err = (await proc.stderr.read()).decode()
    lines = [line for line in err.splitlines() if "outside the range" in line]
    assert len(lines) == 1 and "uvicorn>=0.1,<0.2" in lines[0], err
    assert "Traceback" not in err
