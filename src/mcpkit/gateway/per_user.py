"""Each front user's own OAuth token for a `"perUser"` backend: the gateway's backend-auth path.

- An anonymous caller is refused: there is nobody to act for.
- Each (backend, user) has its own `OAuth` (the client's: discovery, registration, PKCE,
  refresh) over that user's encrypted token record (`user_tokens.py`): a stored token is
  used, refreshed when it expires (refresh token grant), and survives a restart with Redis.
- Without one, the gateway trades the user's front token for a backend token where the
  backend's authorization server trusts the gateway's issuer (`"tokenExchange"`, RFC 8693),
  or runs the authorization code flow with its own callback (`callbackUrl`) as redirect URI:
  the user gets the URL as a URL-mode elicitation where the front client declared it
  (ELIC-09), otherwise an error that carries it (-32042 to a 2025-11-25 client; a tool error
  on 2026-07-28, where that code is gone: BASE-20).
- The flow's state is bound to the user who started it (ELIC-18/23/32): the URL the user
  gets is the gateway's own page (`start_url`, served by `callback.py`), which sends only
  that user on to the backend's authorization server, and the callback is accepted only from
  that same user (the gateway's sign-in cookie, or the front's `Authorization` header);
  anyone else is refused and the flow stays open for its owner.
- The tokens go to the backend only, never to the front client (ELIC-20/21).
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from ..client.auth import AuthorizationCode, ClientMetadata, OAuth
from ..client.auth.delegation import TokenExchange
from ..client.errors import AuthorizationError
from ..protocol.errors import MCPError, MissingRequiredClientCapability
from ..protocol.versions import LEGACY_LATEST
from ..server.context import Context
from .config import GatewaySettings, PerUser
from .user_tokens import SealedTokens

#: Users whose `OAuth` objects are kept (the least recently used go first; their tokens stay
#: stored, so such a user comes back without authorizing again).
MAX_USERS = 4096
#: How long a started authorization waits for the user's callback.
FLOW_TIMEOUT_S = 600.0
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
UNKNOWN_FLOW = "Unknown or finished authorization: start again from your MCP client."
ANOTHER_USER = (
    "This authorization was started by another user: sign in to the gateway as the user who "
    "started it."
)


class NotAuthorized(Exception):
    """The call cannot carry the user's token; the message is the caller's line."""


@dataclass(slots=True)
class _Flow:
    """One authorization waiting for its callback, and the user who started it."""

    principal: str
    answer: asyncio.Future[dict[str, str]]
    task: asyncio.Task[Any]
    #: The backend's authorization URL, and the id of the gateway's page that leads to it.
    url: str = ""
    id: str = field(default_factory=lambda: secrets.token_urlsafe(24))


class _Authorizer:
    """`AuthorizationCode`'s authorizer for one user: the URL goes to whoever waits on
    `published` (the call that needs it), the answer comes from the gateway's callback."""

    def __init__(self, owner: UserCredentials, principal: str) -> None:
        self.owner = owner
        self.principal = principal
        self.redirect_uri = owner.callback_url or ""
        self.published: asyncio.Future[str] | None = None

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def authorize(self, url: str) -> dict[str, str]:
        state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        task = asyncio.current_task()
        assert task is not None
        flow = _Flow(self.principal, asyncio.get_running_loop().create_future(), task, url)
        self.owner.flows[state] = flow
        if self.published is not None and not self.published.done():
            self.published.set_result(self.owner.start_url(flow.id))
        try:
            return await asyncio.wait_for(flow.answer, self.owner.timeout)
        except TimeoutError:
            raise AuthorizationError(
                "the user did not complete the authorization in time"
            ) from None
        finally:
            self.owner.flows.pop(state, None)


@dataclass(slots=True)
class _User:
    """One user's credentials at one backend."""

    oauth: OAuth
    authorizer: _Authorizer | None
    #: The user's current front token (what token exchange trades).
    subject: list[str] = field(default_factory=lambda: [""])
    pending: asyncio.Task[None] | None = None
    published: asyncio.Future[str] | None = None
    #: The token the server refused last: not to be used again.
    refused: str | None = None


class UserCredentials:
    """The per-user tokens of a gateway's `perUser` backends."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.tokens = SealedTokens(settings.user_tokens)
        self.callback_url = settings.callback_url
        #: The front's `auth` (its `clientId` lets the gateway sign a browser in: sign_in.py).
        self.front: Mapping[str, Any] = settings.auth or {}
        key = settings.user_tokens.get("key")
        self.cookie_key = key if isinstance(key, str) else None
        self.timeout = float(settings.user_tokens.get("flowTimeout") or FLOW_TIMEOUT_S)
        #: Authorizations waiting for their callback, by `state`.
        self.flows: dict[str, _Flow] = {}
        self._users: OrderedDict[tuple[str, str], _User] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def callback_path(self) -> str | None:
        return urlsplit(self.callback_url).path if self.callback_url else None

    @property
    def base(self) -> str:
        """Where the gateway's authorization pages live: beside the callback."""
        return (self.callback_url or "").rsplit("/", 1)[0]

    def start_url(self, flow_id: str) -> str:
        """The URL the user is given: the gateway's page, which checks who opens it before
        it sends the browser to the backend's authorization server (ELIC-32)."""
        return f"{self.base}/start/{flow_id}"

    def started(self, flow_id: str) -> _Flow | None:
        """The open flow whose page is `flow_id` (None: unknown, finished, or tampered with)."""
        return next((f for f in self.flows.values() if secrets.compare_digest(f.id, flow_id)), None)

    async def close(self) -> None:
        users, self._users = list(self._users.values()), OrderedDict()
        await asyncio.gather(*(_forget(user) for user in users), *self._closing)
        await self.tokens.close()

    # -- a call ---------------------------------------------------------------------------
    async def headers(self, name: str, url: str, rules: PerUser, ctx: Context) -> dict[str, str]:
        """The `Authorization` header of `ctx`'s user at backend `name` (at `url`): from a
        stored or refreshed token, token exchange, or the user's authorization (asked for
        here). `NotAuthorized` (or -32042 to a 2025-11-25 client) when there is none."""
        access = ctx.auth
        if ctx.principal is None or access is None:
            raise NotAuthorized(
                f"Server {name!r} is used with each caller's own account: call the gateway "
                "with your own token (anonymous callers are refused)."
            )
        user = self._user(name, url, rules, ctx.principal)
        user.subject[0] = access.token or ""
        tokens = user.oauth.tokens
        if tokens is None or (tokens.expired() and tokens.refresh_token is None):
            await self._obtain(name, user, ctx)
        return await user.oauth.headers("POST", url)

    def _user(self, name: str, url: str, rules: PerUser, principal: str) -> _User:
        key = (name, principal)
        user = self._users.pop(key, None)
        if user is None:
            user = self._new_user(name, url, rules, principal)
            while len(self._users) >= MAX_USERS:
                _, old = self._users.popitem(last=False)
                closing = asyncio.create_task(_forget(old))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        self._users[key] = user  # most recently used last
        return user

    def _new_user(self, name: str, url: str, rules: PerUser, principal: str) -> _User:
        store = self.tokens.of(principal, name)
        if rules.token_exchange:
            subject = [""]
            grant = TokenExchange(lambda: subject[0], rules.client_id, rules.client_secret)
            oauth = OAuth(grant, store=store, dpop=False)
            oauth.bind(url)
            return _User(oauth, None, subject)
        authorizer = _Authorizer(self, principal)
        code = AuthorizationCode(
            authorizer,
            client_id=rules.client_id,
            client_secret=rules.client_secret,
            metadata=ClientMetadata(client_name="mcpkit gateway"),
        )
        oauth = OAuth(code, store=store, dpop=False)
        oauth.bind(url)
        return _User(oauth, authorizer)

    async def _obtain(self, name: str, user: _User, ctx: Context) -> None:
        """A token for `user`: the flow runs in a task of its own (it outlives a round of
        input, and a 2026-07-28 retry finds it); the call waits for the URL or the token."""
        if user.pending is None or user.pending.done():
            user.published = asyncio.get_running_loop().create_future()
            if user.authorizer is not None:
                user.authorizer.published = user.published
            user.pending = asyncio.create_task(user.oauth.authorize(user.refused))
            user.pending.add_done_callback(_seen)  # a flow nobody came back for may fail
        pending, published = user.pending, user.published
        assert published is not None
        waiting: list[asyncio.Future[Any]] = [pending, published]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not pending.done():
            await self._ask(name, published.result(), ctx)
        try:
            await asyncio.wait_for(asyncio.shield(pending), self.timeout)
        except (AuthorizationError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise NotAuthorized(
                f"The gateway could not get your token for server {name!r}: {exc}; call "
                "again to start over."
            ) from None

    async def _ask(self, name: str, url: str, ctx: Context) -> None:
        message = f"Sign in to {name!r} so that the gateway can use it on your behalf."
        try:
            answer = await ctx.elicit_url(message, url, key=f"gateway-authorize-{name}")
        except MissingRequiredClientCapability:
            if ctx.protocol_version == LEGACY_LATEST:
                raise url_required(message, url) from None
            raise NotAuthorized(
                f"Server {name!r} needs your authorization: open {url} in a browser, sign "
                "in, then call again."
            ) from None
        if not answer.accepted:
            raise NotAuthorized(f"You declined to authorize server {name!r}: nothing was called.")

    def rejected(self, name: str, principal: str | None) -> str:
        """Server `name` answered 401 to the user's token (revoked there, or its grant
        withdrawn): it is dropped, and the next call refreshes it or asks the user again."""
        user = self._users.get((name, principal or ""))
        if user is not None and user.oauth.tokens is not None:
            user.refused, user.oauth.tokens = user.oauth.tokens.access_token, None
        return (
            f"Server {name!r} did not accept your token (revoked or expired there); call "
            "again to authorize anew."
        )

    # -- the callback ---------------------------------------------------------------------
    async def callback(self, query: Mapping[str, str], principal: str | None) -> tuple[int, str]:
        """The authorization server sent `principal`'s browser back (who the gateway's
        cookie or the front's `Authorization` header says it is): (HTTP status, page text)."""
        flow = self.flows.get(query.get("state") or "")
        if flow is None:
            return 400, UNKNOWN_FLOW
        if principal is None or principal != flow.principal:
            return 403, ANOTHER_USER
        if not flow.answer.done():
            flow.answer.set_result(dict(query))
        try:
            await asyncio.wait_for(asyncio.shield(flow.task), self.timeout)
        except (AuthorizationError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            return 400, f"The authorization failed: {exc}. Call the tool again to start over."
        return 200, "Authorized: you can close this page and go back to your MCP client."


def _seen(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()


async def _forget(user: _User) -> None:
    """A user's `OAuth` closed, its flow stopped (the stored tokens stay)."""
    if user.pending is not None:
        user.pending.cancel()
        await asyncio.gather(user.pending, return_exceptions=True)
    await user.oauth.close()


def url_required(message: str, url: str) -> MCPError:
    """The 2025-11-25 URLElicitationRequiredError: retry once the user has been to `url`."""
    import uuid

    elicitation = {"mode": "url", "elicitationId": uuid.uuid4().hex, "url": url, "message": message}
    return MCPError(
        "This request needs the user's authorization at a URL first.",
        {"elicitations": [elicitation]},
        code=URL_ELICITATION_REQUIRED,
    )
