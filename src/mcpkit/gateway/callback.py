"""The gateway's HTTP app: the MCP endpoint (`StreamableHTTPApp`), plus the OAuth callback of
its `perUser` backends (`per_user.py`) at the path of `"callbackUrl"`.

The callback names its user by the front's own credential (the `Authorization` header the
front checks): a flow is completed only by the user who started it (ELIC-32).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from ..server.auth.access import AccessToken
from ..server.auth.resource import AuthFailure
from ..server.server import Server
from ..server.transports.asgi import Receive, Scope, Send, route_path
from ..server.transports.http import StreamableHTTPApp
from .per_user import UserCredentials


class GatewayApp(StreamableHTTPApp):
    """`StreamableHTTPApp` that also answers `GET <callback path>`."""

    def __init__(self, server: Server, users: UserCredentials, **options: Any) -> None:
        super().__init__(server, **options)
        self.users = users

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = self.users.callback_path
        if (
            path is None
            or scope["method"] != "GET"
            or path not in (scope["path"], route_path(scope))
        ):
            await super()._http(scope, receive, send)
            return
        query = dict(parse_qsl(bytes(scope.get("query_string") or b"").decode("latin-1")))
        status, text = await self.users.callback(query, await self._user(scope))
        body = text.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8")]
        headers.append((b"content-length", b"%d" % len(body)))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _user(self, scope: Scope) -> AccessToken | None:
        """Who opened the callback: the front's verified token, else nobody."""
        if self.auth is None:
            return None
        given = dict(scope["headers"]).get(b"authorization")
        try:
            return await self.auth.authenticate(given.decode("latin-1") if given else None)
        except AuthFailure:
            return None
