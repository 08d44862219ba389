"""The app sandbox's origin (a second loopback port): the proxy page each MCP App is loaded
through, served with that app's Content-Security-Policy as an HTTP header. The app's document
is written into a `srcdoc` frame inside the proxy, which inherits the proxy's policy, so the
policy comes from the host (built from the resource's declared domains), never from the page.
Nothing here carries a cookie or reaches the host's API."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..apps import AppResource
from .asgi import Request, Send, respond, respond_text, static_file


async def serve_sandbox(
    request: Request,
    send: Send,
    find: Callable[[str], AppResource | None],
    host_ok: Callable[[str | None], bool],
    ui_origins: Iterable[str],
) -> None:
    if not host_ok(request.header("host")):
        await respond_text(send, 403, "unknown Host header")
        return
    if request.method != "GET":
        await respond_text(send, 405, "method not allowed")
        return
    path = request.path
    if path.startswith("/sandbox/"):
        resource = find(path.removeprefix("/sandbox/"))
        found = static_file("sandbox.html")
        if resource is None or found is None:
            await respond_text(send, 404, "no such app")
            return
        ancestors = " ".join(sorted(ui_origins))
        policy = f"{resource.policy()}; frame-ancestors {ancestors}"
        headers = [
            (b"content-security-policy", policy.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"cache-control", b"no-store"),
        ]
        await respond(send, 200, found[0], found[1], headers)
        return
    if path == "/sandbox.js":
        found = static_file("sandbox.js")
        assert found is not None
        await respond(send, 200, found[0], found[1], [(b"x-content-type-options", b"nosniff")])
        return
    await respond_text(send, 404, "not found")
