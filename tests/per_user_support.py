"""The per-user credentials stack for tests (issue 31, item 5): the front's and a backend's
authorization servers (the project's fixture), an OAuth-protected backend, gateways in front
of it, and a browser that keeps cookies and follows redirects."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp

from gateway_support import serving
from mcpkit import Context, Server
from mcpkit.auth import BearerAuth, JWTVerifier
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.gateway import Gateway, front_auth
from mcpkit.host import parse_config
from oauth_server import Grant, LocalAuthServer, loopback_socket

KEY = "mTNqo2t0Ysd6AIQ6Dqg5qHKlfsX1E1BBgTyMtLaHWL4="  # a Fernet key, for tests only


def backend() -> Server:
    server = Server("orders")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """Who the backend's token says the caller is."""
        return str(ctx.principal)

    return server


class Stack:
    """Two authorization servers (the front's, which signs the users' front tokens, and the
    backend's), an OAuth-protected backend, and gateways in front of it."""

    def __init__(self) -> None:
        self.front_as = LocalAuthServer()
        self.backend_as = LocalAuthServer(scopes=("orders:read", "offline_access"))
        self.backend_sock = loopback_socket()
        self.backend_url = f"http://127.0.0.1:{self.backend_sock.getsockname()[1]}/mcp"
        self.gateway_url = ""
        self.last: Gateway | None = None  # the gateway served last

    async def close(self) -> None:
        await self.front_as.close()  # started only where the gateway signs browsers in
        self.front_as.sock.close()
        await self.backend_as.close()

    def backend_auth(self) -> BearerAuth:
        verifier = JWTVerifier(
            issuer=self.backend_as.issuer,
            audience=self.backend_url,
            jwks_uri=self.backend_as.jwks_uri,
        )
        return BearerAuth(
            verifier,
            resource=self.backend_url,
            authorization_servers=[self.backend_as.issuer],
            scopes_supported=["orders:read"],
        )

    def front_token(self, who: str) -> str:
        return self.front_as.sign(Grant("front-app", "", self.gateway_url, who))

    def gateway(self, url: str, *, open_front: bool = False, **more: Any) -> Gateway:
        """A gateway at `url` whose `orders` backend is `perUser`; it lists the backend's
        catalogue with a service token of its own, and calls with each user's."""
        service = self.backend_as.sign(Grant("gw", "orders:read", self.backend_url, "gateway"))
        per_user = more.pop("perUser", True)
        front_client = more.pop("clientId", None)
        jwks = {"keys": [self.front_as.key.as_dict(private=False)]}
        gateway: dict[str, Any] = {
            "callbackUrl": url.removesuffix("/mcp") + "/oauth/callback",
            "userTokens": {"key": KEY},
            **more,
        }
        if not open_front:
            gateway["auth"] = {
                "resource": url,
                "jwt": {"issuer": self.front_as.issuer, "jwks": jwks},
            }
            if front_client is not None:  # the gateway's own client at the front's server
                gateway["auth"]["clientId"] = front_client
                signed_in = url.removesuffix("/mcp") + "/oauth/signed-in"
                self.front_as.clients[front_client] = [signed_in]
        entry = {
            "url": self.backend_url,
            "trusted": True,
            "consent": {"allow": ["*"]},
            "headers": {"Authorization": f"Bearer {service}"},
            "perUser": per_user,
        }
        return Gateway(parse_config({"gateway": gateway, "mcpServers": {"orders": entry}}, env={}))

    @contextlib.asynccontextmanager
    async def serving_gateway(self, **options: Any) -> AsyncIterator[str]:
        sock = loopback_socket()
        self.gateway_url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        gateway = self.last = self.gateway(self.gateway_url, **options)
        auth = front_auth(gateway.settings, self.gateway_url)
        async with serving(gateway, sock, auth=auth) as url:
            yield url

    def user(self, who: str, *, ask: Any = None, **options: Any) -> Client:
        headers = {"Authorization": f"Bearer {self.front_token(who)}"}
        if ask is not None:
            options.update(elicitation=ask, url_elicitation=True)
        return Client(self.gateway_url, headers=headers, **options)

    async def sign_in(self, url: str, who: str, callback_as: str | None = "") -> tuple[int, str]:
        """The user's browser, signed in as `who` at the authorization servers, follows `url`
        to its end; the gateway's pages get the front token of `callback_as` (default: `who`;
        None: no credential, as a plain browser)."""
        opener = who if callback_as == "" else callback_as
        headers = {"Authorization": f"Bearer {self.front_token(opener)}"} if opener else {}
        async with Browser(who) as http:
            return await http.follow(url, self.gateway_url.removesuffix("/mcp"), headers)


class Browser:
    """A plain HTTP client that keeps cookies like a browser (`user` names who is signed in
    at the test authorization servers) and follows redirects one by one."""

    def __init__(self, who: str) -> None:
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.http.cookie_jar.update_cookies({"user": who})
        self.set_cookies: list[str] = []
        self.visited: list[str] = []

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()

    async def follow(
        self, url: str, gateway: str = "", headers: dict[str, str] | None = None, until: str = "\0"
    ) -> tuple[int, str]:
        """(status, text) of the page the redirects from `url` end at (or (302, the URL) of the
        first redirect to a URL starting with `until`); `headers` go to the gateway's pages
        only."""
        for _ in range(10):
            if url.startswith(until):
                return 302, url
            self.visited.append(url)
            extra = headers if headers and gateway and url.startswith(gateway) else {}
            async with self.http.get(url, headers=extra, allow_redirects=False) as answer:
                self.set_cookies += answer.headers.getall("Set-Cookie", [])
                if answer.status != 302:
                    return answer.status, await answer.text()
                url = answer.headers["Location"]
        raise AssertionError(f"too many redirects: {self.visited}")


def browser(stack: Stack, who: str) -> Callable[[Elicitation], Awaitable[dict[str, Any]]]:
    """A front client's URL elicitation handler: the user signs in, then accepts."""

    async def ask(request: Elicitation) -> dict[str, Any]:
        assert request.mode == "url" and request.url is not None
        assert request.url.startswith(stack.gateway_url.removesuffix("/mcp") + "/oauth/start/")
        status, text = await stack.sign_in(request.url, who)
        assert status == 200, text
        return {"action": "accept"}

    return ask


@contextlib.asynccontextmanager
async def running_stack() -> AsyncIterator[Stack]:
    """A `Stack` with its backend and the backend's authorization server up."""
    stack = Stack()
    await stack.backend_as.start()
    async with serving(backend(), stack.backend_sock, auth=stack.backend_auth()):
        yield stack
    await stack.close()
