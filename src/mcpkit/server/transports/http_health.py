"""`/healthz` and `/readyz` on the HTTP app, beside (never inside) the MCP endpoint.

    GET /healthz   200 "ok"                the process serves HTTP (liveness)
    GET /readyz    200 "ready"             every readiness check passes (`server.readiness`)
                   503 "not ready"         a dependency is down (the Redis bus), or draining

For load balancers and kubelets: GET or HEAD only (405 otherwise), no authentication, no
body beyond the status word, `Cache-Control: no-store`. Host rule: these two paths accept
any `Host` header, because probes address the pod by IP (`Host: 10.1.2.3:8000`), and they
reveal nothing a DNS-rebinding page could use. The MCP endpoint keeps its Host and Origin
checks (TR-HTTP-02/03).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .asgi import Send

if TYPE_CHECKING:
    from ..readiness import Readiness

__all__ = ["HEALTH_PATHS", "answer_health"]

HEALTH_PATHS = frozenset({"/healthz", "/readyz"})
_PLAIN = (b"content-type", b"text/plain; charset=utf-8")
_NO_STORE = (b"cache-control", b"no-store")


async def answer_health(readiness: Readiness, path: str, method: str, send: Send) -> None:
    if method not in ("GET", "HEAD"):
        status, word, extra = 405, b"method not allowed", [(b"allow", b"GET, HEAD")]
    elif path == "/healthz":
        status, word, extra = 200, b"ok", []
    elif readiness.failing():
        status, word, extra = 503, b"not ready", []
    else:
        status, word, extra = 200, b"ready", []
    headers = [_PLAIN, _NO_STORE, (b"content-length", str(len(word)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else word})
