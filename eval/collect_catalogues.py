"""Save the `tools/list` output of real, public MCP servers as test data.

    npm install --prefix NODE_DIR --ignore-scripts <the npm packages in eval/servers.json>
    python -m venv PY_VENV && PY_VENV/bin/pip install <the PyPI packages in eval/servers.json>
    .venv/bin/python eval/collect_catalogues.py --node NODE_DIR --python PY_VENV [PY_VENV2 ...]

    .venv/bin/python eval/collect_catalogues.py --toolsnaps GIT_DIR   # GitHub's official server

(GIT_DIR: a clone of github/github-mcp-server; its Go server is not on npm or PyPI, so its
tool definitions are read from the snapshots its tests keep, at the clone's HEAD.)
(mcp-atlassian pins an older `mcp` than mcp-server-git/-fetch/-time: give it a venv of its own.)

Each server is started over stdio with placeholder credentials (listing tools needs none), its
tools are listed with mcpkit's client, and `tests/data/tool_catalogues/<name>.json` records the
package, its registry, version and licence next to the tools exactly as the server sent them.
Not part of `make test`: it needs the packages above, the test data it wrote does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcpkit.client import Client

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/data/tool_catalogues"


def npm_metadata(node: Path, package: str) -> dict[str, Any]:
    folder = node / "node_modules" / package
    meta = json.loads((folder / "package.json").read_text())
    licence = meta.get("license", "unknown")
    if licence == "unknown" and (folder / "LICENSE").is_file():
        licence = first_line(folder / "LICENSE")
    if licence.startswith("SEE LICENSE"):  # no LICENSE file shipped: the README names it
        licence = from_readme((folder / "README.md").read_text(encoding="utf-8"), licence)
    return {"version": meta["version"], "license": licence}


def from_readme(readme: str, otherwise: str) -> str:
    """The licence a package's README names, for a package whose metadata names none."""
    found = re.search(r"licensed under the ([\w.\- ]+?) License", readme)
    return f"{found.group(1)} (from the package README)" if found else otherwise


def first_line(path: Path) -> str:
    return next(line.strip() for line in path.read_text().splitlines() if line.strip())


def pypi_metadata(venv: Path, package: str) -> dict[str, Any]:
    code = (
        "import importlib.metadata as m, json, sys; dist = m.distribution(sys.argv[1]); "
        "d = dist.metadata; "
        "lic = d.get('License-Expression') or d.get('License') or "
        "next((c.rsplit(' :: ', 1)[-1] for c in d.get_all('Classifier') or [] "
        "if c.startswith('License')), None) or "
        "next((f.read_text().strip().splitlines()[0] for f in dist.files or [] "
        "if f.name.startswith('LICENSE')), 'unknown'); "
        "print(json.dumps({'version': d['Version'], 'license': lic, "
        "'readme': d.get_payload() or ''}))"
    )
    out = subprocess.run(
        [str(venv / "bin/python"), "-c", code, package], check=True, capture_output=True
    )
    meta = json.loads(out.stdout)
    return {"version": meta["version"], "license": from_readme(meta["readme"], meta["license"])
            if meta["license"] == "unknown" else meta["license"]}  # fmt: skip


async def wait_port(port: int) -> None:
    for _ in range(100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)  # a script, not a test: polling a port is fine here
            continue
        writer.close()
        return
    raise RuntimeError(f"redis-server did not listen on port {port}")


async def collect(spec: dict[str, Any], node: Path, venvs: list[Path], tmp: str) -> dict[str, Any]:
    redis, port = None, 0
    if spec.get("redis"):  # a server that connects at start-up: give it a real, empty Redis
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        redis = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(port), "--save", "", "--dir", tmp,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        await wait_port(port)

    def fill(value: str) -> str:
        return value.replace("{tmp}", tmp).replace("{redis}", f"redis://127.0.0.1:{port}")

    args = [fill(a) for a in spec.get("args", [])]
    if spec["registry"] == "npm" and "script" in spec:  # a bin name two packages share
        command = "node"
        args.insert(0, str(node / "node_modules" / spec["package"] / spec["script"]))
        meta = npm_metadata(node, spec["package"])
    elif spec["registry"] == "npm":
        command = str(node / "node_modules/.bin" / spec["bin"])
        meta = npm_metadata(node, spec["package"])
    else:
        venv = next(v for v in venvs if (v / "bin" / spec["bin"]).exists())
        command = str(venv / "bin" / spec["bin"])
        meta = pypi_metadata(venv, spec["package"])
    target = {
        "command": command,
        "args": args,
        "env": {"HOME": tmp, **{k: fill(v) for k, v in spec.get("env", {}).items()}},
        "cwd": tmp,
    }
    try:
        async with Client(target, stderr="discard", timeout=60) as client:
            tools = [t.raw for t in await client.list_tools()]
            info = client.info
    finally:
        if redis is not None:
            redis.terminate()
            await redis.wait()
    return {
        "server": spec["name"],
        "registry": spec["registry"],
        "package": spec["package"],
        "version": meta["version"],
        "license": meta["license"],
        "serverInfo": {"name": info.name, "version": info.version} if info else None,
        "tools": tools,
    }


def toolsnaps(git_dir: Path) -> dict[str, Any]:
    """GitHub's official server from its test snapshots: the default tools, without the
    feature-flagged granular issue and pull-request variants or the dynamic-toolset tools."""

    def git(*args: str) -> str:
        run = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, text=True)
        run.check_returncode()
        return run.stdout

    commit = git("rev-parse", "HEAD").strip()
    folder = "pkg/github/__toolsnaps__/"
    files = [f for f in git("ls-tree", "--name-only", "HEAD", folder).split()
             if f.endswith(".snap") and "_typed" not in f and "_ff_" not in f]  # fmt: skip
    granular: set[str] = set()
    for name in ("issues_granular.go", "pullrequests_granular.go"):
        granular |= set(re.findall(r'"((?:update|add|remove|set|create|delete|request|resolve|'
                                   r'unresolve|submit|reprioritize)_[a-z_]+)"',
                                   git("show", f"HEAD:pkg/github/{name}")))  # fmt: skip
    granular -= {"add_issue_comment", "create_pull_request", "update_pull_request",
                 "update_pull_request_branch", "request_copilot_review"}  # fmt: skip
    tools = [json.loads(git("show", f"HEAD:{f}")) for f in files]
    tools = [t for t in tools if t["name"] not in granular | {"enable_toolset", "ui_get"}]
    source = {"repository": "github/github-mcp-server", "commit": commit, "path": folder}
    return {
        "server": "github-official", "registry": "github", "package": "github/github-mcp-server",
        "version": commit[:12], "license": "MIT", "source": source,
        "serverInfo": {"name": "github-mcp-server", "version": commit[:12]}, "tools": tools,
    }  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", type=Path, help="npm --prefix directory")
    parser.add_argument("--python", type=Path, nargs="+", help="venvs with the PyPI servers")
    parser.add_argument("--toolsnaps", type=Path, help="a clone of github/github-mcp-server")
    parser.add_argument("--only", nargs="*", help="server names to collect (default: all)")
    args = parser.parse_args()
    specs = json.loads((ROOT / "eval/servers.json").read_text())["servers"]
    OUT.mkdir(parents=True, exist_ok=True)
    if args.toolsnaps:
        data = toolsnaps(args.toolsnaps)
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        (OUT / "github-official.json").write_text(text, encoding="utf-8")
        print(f"github-official: {data['version']}: {len(data['tools'])} tools")
    if not args.node or not args.python:
        return
    total = 0
    for spec in specs:
        if (args.only and spec["name"] not in args.only) or spec["registry"] == "github":
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                data = await collect(
                    spec, args.node.resolve(), [p.resolve() for p in args.python], tmp
                )
            except Exception as exc:
                print(f"{spec['name']}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
        path = OUT / f"{spec['name']}.json"
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        total += len(data["tools"])
        print(
            f"{spec['name']}: {data['package']} {data['version']} ({data['license']}): "
            f"{len(data['tools'])} tools"
        )
    print(f"total {total} tools")


if __name__ == "__main__":
    asyncio.run(main())
