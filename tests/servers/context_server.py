"""A server for the host's context-budget tests: `python context_server.py NAME [--http PORT]`.

Instructions, listed resources, a tool that links to resources (one listed, one only linked),
a 300,000-character embedded resource with a large image, content for the user only, a
prompt, and (over HTTP) a tool that reports the per-call `_meta` and `X-Tenant` header it got.
"""

from __future__ import annotations

import base64
import contextvars
import io
import json
import sys
from typing import Any

from mcpkit import Context, Server

NAME = sys.argv[1] if len(sys.argv) > 1 else "docs"
BIG = "".join(f"line {i:06d} of the big report\n" for i in range(11_000))[:300_000]
TENANT: contextvars.ContextVar[str | None] = contextvars.ContextVar("tenant", default=None)

server = Server(
    NAME, version="1.0", instructions=f"{NAME.upper()}-INSTRUCTIONS: cite page numbers."
)


@server.resource(f"docs://{NAME}/guide", name="guide", mime_type="text/plain")
def guide() -> str:
    return f"The {NAME} guide: page 1 says hello."


@server.resource(f"docs://{NAME}/linked-only", name="linked", mime_type="text/plain")
def linked_only() -> str:
    return f"Only linked from {NAME}."


@server.tool()
def find_docs(topic: str) -> list[Any]:
    """Find documents about a topic; returns links to them."""
    return [
        {"type": "text", "text": f"Two documents about {topic}."},
        {"type": "resource_link", "uri": f"docs://{NAME}/guide", "name": "guide"},
        {"type": "resource_link", "uri": f"docs://{NAME}/elsewhere", "name": "elsewhere"},
    ]


def big_image() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.effect_noise((1800, 1400), 64).save(buffer, "PNG")  # about 2 MB, over 1568 pixels
    return base64.b64encode(buffer.getvalue()).decode()


@server.tool()
def big_report() -> list[Any]:
    """The full report: a 300,000-character document and a chart."""
    return [
        {"type": "resource", "resource": {"uri": f"docs://{NAME}/report", "text": BIG}},
        {"type": "image", "data": big_image(), "mimeType": "image/png"},
    ]


@server.tool()
def account_summary() -> list[Any]:
    """Summary of the account, with a note for the user's eyes only."""
    user = {"audience": ["user"]}
    return [
        {"type": "text", "text": "Balance: 42 EUR."},
        {"type": "text", "text": "USER-ONLY-SECRET 7731", "annotations": user},
        {
            "type": "resource",
            "resource": {"uri": f"docs://{NAME}/statement", "text": "USER-ONLY-STATEMENT"},
            "annotations": user,
        },
    ]


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the host says the caller is."""
    return json.dumps({"user": ctx.request_meta.get("com.example/user"), "tenant": TENANT.get()})


@server.tool()
def lookup_account(customer_id: str) -> str:
    """The account of a customer (customer_id is host-owned)."""
    return f"account of {customer_id}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"PROMPT-TEXT: please greet {name} warmly."


def tenant_middleware(app: Any) -> Any:
    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            TENANT.set(headers.get(b"x-tenant", b"").decode() or None)
        await app(scope, receive, send)

    return wrapped


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--http":
        import uvicorn

        uvicorn.run(
            tenant_middleware(server.http_app()),
            host="127.0.0.1",
            port=int(sys.argv[3]),
            log_level="warning",
        )
    else:
        server.run("stdio")
