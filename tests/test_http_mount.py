"""The HTTP app mounted under a path of a real Starlette or FastAPI application, served by
real uvicorn on a real socket and driven by mcpkit's client, on both eras: tools/call, the
listen stream (the GET stream on a 2025-11-25 session), DELETE of the session, the server's
lifespan run by the host app, and the Protected Resource Metadata inside the mount.

The two applications are the docs' own snippets (docs/deployment.md), run as they stand."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpkit import Context, Server
from mcpkit.client import Client
from mcpkit.server.auth import AccessToken, BearerAuth, InvalidToken
from mcpkit.server.transports.asgi import route_path
from oauth_server import loopback_socket
from support import ROOT, scaled

FRAMEWORKS = ["starlette", "fastapi"]
ERAS = ["modern", "legacy"]


def docs_app(framework: str) -> tuple[Any, Any]:
    """The docs' mount snippet for `framework`, run in the namespace of the example it names:
    `(the host application, the mounted MCP app)`."""
    text = (ROOT / "docs/deployment.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- test: with (\S+) -->\n```python\n(.*?)```", text, re.S)
    marker = "Mount(" if framework == "starlette" else "FastAPI("
    example, code = next((e, c) for e, c in blocks if marker in c)
    namespace: dict[str, Any] = {"__name__": "mounted_example"}
    exec(compile((ROOT / example).read_text(), example, "exec"), namespace)
    exec(compile(code, "docs/deployment.md", "exec"), namespace)
    return namespace["app" if framework == "starlette" else "api"], namespace["mcp"]


@contextlib.asynccontextmanager
async def serving(app: Any, sock: socket.socket | None = None) -> AsyncIterator[str]:
    """`app` served by uvicorn on a loopback port (`sock`'s), lifespan on: its base URL."""
    sock = sock or loopback_socket()
    config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
    http = uvicorn.Server(config)
    task = asyncio.create_task(http.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        http.should_exit = True
        await asyncio.wait_for(task, scaled(10))
        sock.close()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_the_docs_mount_serves_both_eras(framework: str, era: str) -> None:
    app, mcp = docs_app(framework)
    async with serving(app) as base:
        client = Client(f"{base}/weather/mcp", era=era, timeout=scaled(10))  # type: ignore[arg-type]
        async with client:
            assert client.era == era
            result = await client.call_tool("forecast", {"city": "Oslo", "days": 1})
            assert result.structured_content == {
                "city": "Oslo",
                "days": [{"day": 1, "sky": "clear"}],
            }
            async with client.subscribe(tools=True) as sub:  # legacy: on the GET stream
                mcp.server.tool(name="extra", description="Extra.")(lambda: "")
                note = await asyncio.wait_for(sub.__anext__(), scaled(10))
                assert note.method == "notifications/tools/list_changed"
            if era == "legacy":
                assert len(mcp.sessions) == 1
        if era == "legacy":
            assert len(mcp.sessions) == 0  # the client's DELETE reached the mounted app
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/mcp", json={}) as resp:
                assert resp.status == 404  # only below the mount
            async with http.get(f"{base}/weather/healthz") as resp:
                assert resp.status == 200  # the probes are the app's, inside the mount


def lifespan_server() -> tuple[Server, list[str]]:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    server = Server("db", lifespan=lifespan)

    @server.tool()
    async def status(ctx: Context) -> str:
        """Say whether the database is connected."""
        return str(ctx.lifespan["db"])

    return server, events


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_the_host_app_runs_the_servers_lifespan(framework: str) -> None:
    server, events = lifespan_server()
    mcp = server.http_app()
    if framework == "starlette":
        app: Any = Starlette(routes=[Mount("/db", app=mcp)], lifespan=mcp.lifespan)
    else:
        from fastapi import FastAPI

        app = FastAPI(lifespan=mcp.lifespan)
        app.mount("/db", mcp)
    async with serving(app) as base, Client(f"{base}/db/mcp", timeout=scaled(10)) as client:
        assert events == ["start"]
        assert (await client.call_tool("status")).text == "connected"
    assert events == ["start", "stop"]


async def test_a_lifespan_never_entered_is_a_clear_error(caplog: pytest.LogCaptureFixture) -> None:
    server, events = lifespan_server()
    app = Starlette(routes=[Mount("/db", app=server.http_app())])  # no lifespan= given
    async with serving(app) as base, Client(f"{base}/db/mcp", timeout=scaled(10)) as client:
        result = await client.call_tool("status")
    assert result.is_error and events == []
    assert "lifespan was never entered" in caplog.text
    assert "lifespan=mcp_app.lifespan" in caplog.text  # what to do


class OneToken:
    async def verify(self, token: str) -> AccessToken:
        if token != "good":
            raise InvalidToken("unknown token")
        return AccessToken(subject="ann", token=token)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_protected_resource_metadata_is_served_inside_the_mount(framework: str) -> None:
    sock = loopback_socket()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = Server("weather")

    @server.tool()
    def sky() -> str:
        """The sky."""
        return "clear"

    resource = f"{origin}/weather/mcp"
    auth = BearerAuth(OneToken(), resource=resource, authorization_servers=[origin])
    mcp = server.http_app(auth=auth)
    if framework == "starlette":
        app: Any = Starlette(routes=[Mount("/weather", app=mcp)], lifespan=mcp.lifespan)
    else:
        from fastapi import FastAPI

        app = FastAPI(lifespan=mcp.lifespan)
        app.mount("/weather", mcp)
    metadata = f"{origin}/weather/.well-known/oauth-protected-resource/weather/mcp"
    async with serving(app, sock), aiohttp.ClientSession() as http:
        async with http.post(resource, json={}) as resp:
            assert resp.status == 401
            assert f'resource_metadata="{metadata}"' in resp.headers["www-authenticate"]
        async with http.get(metadata) as resp:  # RFC 9728 path, inside the mount
            assert resp.status == 200 and (await resp.json())["resource"] == resource
        headers = {"Authorization": "Bearer good"}
        async with Client(resource, headers=headers, timeout=scaled(10)) as client:
            assert (await client.call_tool("sky")).text == "clear"


@pytest.mark.parametrize(
    ("path", "root_path", "route"),
    [
        ("/weather/mcp", "/weather", "/mcp"),  # Starlette >= 0.33, FastAPI, uvicorn --root-path
        ("/mcp", "/weather", "/mcp"),  # older Starlette stripped the mount point
        ("/mcp", "", "/mcp"),  # not mounted
        ("/weatherman/mcp", "/weather", "/weatherman/mcp"),  # a prefix, not the mount point
        ("/weather", "/weather", "/"),
    ],
)
def test_the_route_is_the_path_below_the_mount_point(path: str, root_path: str, route: str) -> None:
    assert route_path({"path": path, "root_path": root_path}) == route
