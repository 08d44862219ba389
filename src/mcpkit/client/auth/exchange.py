"""Authorization as a wrapper around one HTTP exchange (method, headers, body → response).

OAuth is a matter of HTTP (a stdio server takes its credentials from the environment:
BASE-31), and its challenges live below JSON-RPC: a 401/403 or a DPoP nonce is answered by
sending the same HTTP request again, whatever it carried (a POST of a request, the legacy GET
stream, the session's DELETE). So `HttpTransport` sends through an `Exchange`, and with
`auth=` that exchange is this wrapper around the plain one (AUTH-20).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import aiohttp

from .oauth import RetryState

if TYPE_CHECKING:
    from .oauth import OAuth

__all__ = ["AuthorizedExchange", "Exchange"]

Exchange = Callable[[str, Mapping[str, str], bytes | None], Awaitable[aiohttp.ClientResponse]]
"""One HTTP exchange with the endpoint: (method, headers, body) → the response, unread."""


class AuthorizedExchange:
    """`inner` with the access token (and DPoP proof) added, and challenges answered: the
    request is sent again after authorization, step-up or a fresh DPoP nonce."""

    __slots__ = ("auth", "inner", "url")

    def __init__(self, inner: Exchange, auth: OAuth, url: str) -> None:
        self.inner = inner
        self.auth = auth
        self.url = url

    async def __call__(
        self, method: str, headers: Mapping[str, str], data: bytes | None = None
    ) -> aiohttp.ClientResponse:
        auth = self.auth
        state = RetryState()
        while True:
            sent = await auth.headers(method, self.url)
            resp = await self.inner(method, {**headers, **sent}, data)
            if resp.status not in (401, 403) and "DPoP-Nonce" not in resp.headers:
                return resp
            try:
                retry = await auth.on_response(
                    resp.status,
                    resp.headers,
                    resp.headers.getall("WWW-Authenticate", []),
                    sent,
                    state,
                )
            except BaseException:
                resp.release()
                raise
            if not retry:
                return resp
            resp.release()
