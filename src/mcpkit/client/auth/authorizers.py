"""Getting the user's authorization response: the step between the authorization request URL and
the `code`/`state`/`iss` that come back on the redirect URI.

    LoopbackAuthorizer   interactive: print (and open) the URL, catch the redirect on a local
                         loopback listener (CLI, desktop host)
    HeadlessAuthorizer   no browser: GET the URL and read the 302's Location (tests, automation
                         against an authorization server that approves without a user)
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

import aiohttp

from ..errors import AuthorizationError

__all__ = ["Authorizer", "HeadlessAuthorizer", "LoopbackAuthorizer"]


class Authorizer(Protocol):
    """Sends the user to `url`; returns the query parameters of the redirect back."""

    @property
    def redirect_uri(self) -> str: ...

    async def start(self) -> None: ...

    async def authorize(self, url: str) -> dict[str, str]: ...

    async def close(self) -> None: ...


def _query(location: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))


class HeadlessAuthorizer:
    """Follows nothing: the authorization endpoint's redirect is read from `Location`."""

    def __init__(self, redirect_uri: str = "http://localhost:3000/callback") -> None:
        self.redirect_uri = redirect_uri
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        if self._http is None:
            self._http = aiohttp.ClientSession()

    async def authorize(self, url: str) -> dict[str, str]:
        await self.start()
        assert self._http is not None
        async with self._http.get(url, allow_redirects=False) as resp:
            location = resp.headers.get("Location")
            status = resp.status
        if status not in (301, 302, 303, 307, 308) or not location:
            raise AuthorizationError(
                f"the authorization endpoint answered HTTP {status} without a redirect"
            )
        return _query(location)

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.close()


@dataclass(eq=False, kw_only=True)
class LoopbackAuthorizer:
    """Listens on `http://127.0.0.1:<port><path>` for the redirect (RFC 8252 §7.3).

    `port=0` picks a free port when `start()` runs (before registration, so the registered
    redirect URI is exact). `open_browser` opens the URL; it is always printed to stderr too.
    """

    host: str = "127.0.0.1"
    port: int = 0
    path: str = "/callback"
    open_browser: bool = True
    timeout: float = 300.0
    #: Shows the user the URL to open (default: printed to stderr).
    announce: Callable[[str], None] | None = None
    _runner: object | None = field(default=None, init=False, repr=False)
    _waiter: asyncio.Future[dict[str, str]] | None = field(default=None, init=False, repr=False)

    @property
    def redirect_uri(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    async def start(self) -> None:
        if self._runner is not None:
            return
        from aiohttp import web

        async def callback(request: web.Request) -> web.Response:
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_result(dict(request.query))
            return web.Response(
                text="Authorization complete. You can close this window.",
                content_type="text/plain",
            )

        app = web.Application()
        app.router.add_get(self.path, callback)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        if self.port == 0:
            for address in runner.addresses:  # the port the system chose
                self.port = address[1]
                break
        self._runner = runner

    async def authorize(self, url: str) -> dict[str, str]:
        await self.start()
        self._waiter = asyncio.get_running_loop().create_future()
        (self.announce or _print)(url)
        if self.open_browser:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(webbrowser.open, url)
        try:
            return await asyncio.wait_for(self._waiter, self.timeout)
        except TimeoutError:
            raise AuthorizationError("no authorization response arrived in time") from None
        finally:
            self._waiter = None

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()  # type: ignore[attr-defined]


def _print(url: str) -> None:
    print(f"Open this URL to authorize:\n  {url}", file=sys.stderr, flush=True)
