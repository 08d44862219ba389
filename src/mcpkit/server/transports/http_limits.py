"""Connection-level HTTP limits for `serve_http`, nginx's defaults: what a slow or greedy
client may hold before it is answered and closed.

uvicorn's httptools protocol has a keep-alive timeout and a concurrency limit but no limit on
how long or how large a request head may be; `uvicorn_adapter.limited_protocol()` adds them.
This module holds the limits and the refusals, and imports no uvicorn:

    header_timeout    60 s     the whole request head (line and headers) must arrive within it
                               (nginx `client_header_timeout`)                       → 408
    body_timeout      60 s     each part of a body within this of the one before
                               (nginx `client_body_timeout`)                         → 408
    max_header_line   8 KiB    one header line, or the request line (nginx
                               `large_client_header_buffers` 4 8k)                   → 431 / 414
    max_header_bytes  32 KiB   the whole head                                        → 431
    max_headers       100      header fields                                         → 431
    max_connections   1000     open connections; one more is answered               → 503
                               (`serve_http` sizes it from the descriptor limit: `budget`)

Every refusal is a JSON-RPC error without an `id` (the request was never read: BASE-11), a
`Connection: close`, and for 503 a `Retry-After`. The body size limit (413) is the ASGI app's
(`max_body_size`); so is its body timeout when the app is mounted elsewhere. A connection
idle for uvicorn's keep-alive timeout (`keep_alive_timeout`) after its last response is
closed (within a second more).

The request path pays a few attribute writes per request (header lines are measured only
when the head is longer than one line may be). The timers, keep-alive included, are one
sweep per second over the open connections, not a timer per request: uvicorn arms and
cancels one per response, which costs more than the rest of the limits' work per request.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol.errors import MCPError
from ...protocol.jsonrpc import encode_unread_error

#: Seconds a refused connection is still read (and dropped) before it is closed.
LINGER_SECONDS = 2.0
_REASONS = {
    408: b"Request Timeout",
    414: b"URI Too Long",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The connection-level limits (seconds, bytes, counts); None turns one off."""

    header_timeout: float | None = 60.0
    body_timeout: float | None = 60.0
    max_header_line: int = 8 * 1024
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    max_connections: int | None = 1000
    retry_after: int = 5


def refusal(status: int, error: MCPError, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response refusing a request that was never read, and closing."""
    body = encode_unread_error(error)
    head = [
        b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status]),
        b"content-type: application/json\r\n",
        b"content-length: %d\r\n" % len(body),
        b"connection: close\r\n",
    ]
    if retry_after is not None:
        head.append(b"retry-after: %d\r\n" % retry_after)
    return b"".join([*head, b"\r\n", body])
