"""The gateway's HTTP app: the MCP endpoint (`StreamableHTTPApp`), plus the pages of its
`perUser` backends' authorizations (`per_user.py`), beside the path of `"callbackUrl"`:

- `GET <base>/start/<flow id>`, the URL the user is given: the gateway finds out who the
  browser's user is (its cookie, the front's `Authorization` header, or a sign-in at the
  front's authorization server: `sign_in.py`) and sends only the flow's owner on to the
  backend's authorization server; anyone else gets 403 and the flow stays open (ELIC-32).
- `GET <base>/signed-in`, where the front's authorization server sends the browser back.
- `GET <callbackUrl>`, where the backend's sends it back: again only for the flow's owner.

Without `auth.clientId` the gateway cannot sign a browser in: the user is then whoever the
`Authorization` header names (an SSO proxy in front, or an API client), and nobody otherwise.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..server.auth.resource import AuthFailure
from ..server.server import Server
from ..server.transports.asgi import Receive, Scope, Send, route_path
from ..server.transports.http import StreamableHTTPApp
from .per_user import ANOTHER_USER, UNKNOWN_FLOW, UserCredentials
from .sign_in import SignIn, SignInFailed

HEADER_ONLY = (
    " This gateway has no auth.clientId, so it knows a browser's user only from an "
    "Authorization header (set by an SSO proxy)."
)
Page = tuple[int, str, list[tuple[bytes, bytes]]]


class GatewayApp(StreamableHTTPApp):
    """`StreamableHTTPApp` that also serves the `perUser` authorization pages."""

    def __init__(self, server: Server, users: UserCredentials, **options: Any) -> None:
        super().__init__(server, **options)
        self.users = users
        self.base_path = urlsplit(users.base).path
        front = users.front
        self.sign_in: SignIn | None = None
        if self.auth is not None and front.get("clientId"):
            self.sign_in = SignIn(self.auth, front, users.cookie_key, users.base)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        page = await self._page(scope) if scope["method"] == "GET" else None
        if page is None:
            await super()._http(scope, receive, send)
            return
        status, text, headers = page
        body = text.encode()
        headers += [(b"content-type", b"text/plain; charset=utf-8")]
        headers.append((b"content-length", b"%d" % len(body)))
        headers.append((b"cache-control", b"no-store"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _page(self, scope: Scope) -> Page | None:
        paths = {scope["path"], route_path(scope)}
        query = dict(parse_qsl(bytes(scope.get("query_string") or b"").decode("latin-1")))
        if self.users.callback_path in paths:
            status, text = await self.users.callback(query, await self._user(scope))
            return status, self._explained(status, text), []
        for path in paths:
            if path.startswith(self.base_path + "/start/"):
                return await self._start(scope, path.rsplit("/", 1)[1])
            if path == self.base_path + "/signed-in" and self.sign_in is not None:
                return await self._signed_in(query, dict(scope["headers"]).get(b"cookie"))
        return None

    async def _start(self, scope: Scope, flow_id: str) -> Page:
        """The user's URL: on to the backend for the flow's owner only."""
        flow = self.users.started(flow_id)
        if flow is None:
            return 400, UNKNOWN_FLOW, []
        user = await self._user(scope)
        if user is None and self.sign_in is not None:
            try:
                location, started = await self.sign_in.begin(flow_id)
            except SignInFailed as exc:
                return 502, f"The gateway could not sign you in: {exc}. Try again later.", []
            status, text, headers = _redirect(location)
            return status, text, [*headers, (b"set-cookie", started.encode())]
        if user is not None and user != flow.principal:
            return 403, self._explained(403, ANOTHER_USER), []
        return _redirect(flow.url)  # the owner; or, header rule, checked at the callback

    async def _signed_in(self, query: dict[str, str], cookies: bytes | None) -> Page:
        """The front's authorization server sent the browser back: who it is, remembered."""
        assert self.sign_in is not None
        try:
            user, flow_id = await self.sign_in.finish(query, cookies)
        except SignInFailed as exc:
            return 400, f"The sign-in failed: {exc}. Open the link from your MCP client again.", []
        cookie = [(b"set-cookie", self.sign_in.cookie(user).encode())]
        flow = self.users.started(flow_id)
        if flow is None:
            return 400, UNKNOWN_FLOW, cookie
        if user != flow.principal:
            return 403, ANOTHER_USER, cookie
        status, text, headers = _redirect(flow.url)
        return status, text, headers + cookie

    def _explained(self, status: int, text: str) -> str:
        return text + HEADER_ONLY if status == 403 and self.sign_in is None else text

    async def _user(self, scope: Scope) -> str | None:
        """Who opened the page: the front's verified token, else the gateway's cookie."""
        headers = dict(scope["headers"])
        if self.auth is not None and b"authorization" in headers:
            try:
                access = await self.auth.authenticate(headers[b"authorization"].decode("latin-1"))
                return access.principal
            except AuthFailure:
                return None
        return self.sign_in.who(headers.get(b"cookie")) if self.sign_in is not None else None


def _redirect(url: str) -> Page:
    return 302, "Redirecting.", [(b"location", url.encode())]
