"""Who a browser's user is, for the `perUser` authorization pages (ELIC-32): the gateway
sends the browser through the front's own authorization server with an authorization code +
PKCE request of its own (`auth.clientId`), verifies the token it gets with the front's own
verifier, and remembers the user in a short-lived cookie (HttpOnly, SameSite=Lax, encrypted
with Fernet under a key derived from `userTokens.key`) so that a second flow skips the trip.

Nothing in a URL names the user: the flow id only finds the flow, whose owner is compared with
the user signed in here.
"""

from __future__ import annotations

import base64
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..client.auth.discovery import discover_auth_server
from ..client.auth.grants import check_authorization_response
from ..client.auth.pkce import Pkce
from ..client.errors import AuthorizationError
from ..protocol.auth_metadata import AuthServerMetadata
from ..server.auth.resource import AuthFailure, BearerAuth

COOKIE = "mcpkit_gateway_user"
#: The sign-in a browser started: its answer is taken only from that browser (a link with
#: someone else's code does not sign anyone in as them: login CSRF).
STARTED = "mcpkit_gateway_sign_in"
#: How long the cookie names its user (seconds).
COOKIE_TTL_S = 900
#: Sign-ins started and not back yet (the oldest go first).
MAX_PENDING = 1024


class SignInFailed(Exception):
    """The front's authorization server did not say who the user is; the message says why."""


def cookie_key(key: str | None) -> Fernet:
    """The cookie's Fernet key: derived from the token store's key (HKDF, its own `info`, so a
    cookie is never a token record nor one the other way), else one for this process."""
    if not key:
        return Fernet(Fernet.generate_key())
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"mcpkit sign-in cookie")
    return Fernet(base64.urlsafe_b64encode(hkdf.derive(key.encode())))


class SignIn:
    """The gateway's own client at the front's authorization server."""

    def __init__(self, auth: BearerAuth, settings: Mapping[str, Any], key: str | None, base: str):
        self.auth = auth
        self.client_id = str(settings["clientId"])
        self.client_secret = settings.get("clientSecret")
        self.issuer = str(auth.metadata["authorization_servers"][0])
        self.redirect_uri = base + "/signed-in"
        parts = urlsplit(base)
        self.cookie_path = parts.path or "/"
        self.secure = parts.scheme == "https"
        self.fernet = cookie_key(key)
        self.meta: AuthServerMetadata | None = None
        #: Sign-ins on their way, by `state`: the PKCE verifier and the flow they are for.
        self.pending: OrderedDict[str, tuple[Pkce, str]] = OrderedDict()

    # -- the cookie -----------------------------------------------------------------------
    def who(self, header: bytes | None) -> str | None:
        """The user the request's cookie names, if it is ours and fresh."""
        value = _cookie(header, COOKIE)
        try:
            return self.fernet.decrypt(value.encode(), ttl=COOKIE_TTL_S).decode()
        except (InvalidToken, UnicodeError):
            return None

    def cookie(self, principal: str, name: str = COOKIE) -> str:
        """`Set-Cookie`: `principal` encrypted, for this gateway's pages only."""
        value = self.fernet.encrypt(principal.encode()).decode()
        secure = "; Secure" if self.secure else ""
        return (
            f"{name}={value}; Max-Age={COOKIE_TTL_S}; Path={self.cookie_path}; "
            f"HttpOnly; SameSite=Lax{secure}"
        )

    # -- the round trip -------------------------------------------------------------------
    async def begin(self, flow_id: str) -> tuple[str, str]:
        """Where the browser goes to sign in at the front for flow `flow_id`, and the cookie
        that ties that sign-in to this browser."""
        meta = await self._metadata()
        pkce, state = Pkce.generate(), secrets.token_urlsafe(24)
        self.pending[state] = (pkce, flow_id)
        while len(self.pending) > MAX_PENDING:
            self.pending.popitem(last=False)
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": pkce.challenge,
            "code_challenge_method": pkce.method,
            "state": state,
            "resource": self.auth.resource,
        }
        location = f"{meta.authorization_endpoint}?{urlencode(query)}"
        return location, self.cookie(state, STARTED)

    async def finish(self, query: Mapping[str, str], cookies: bytes | None) -> tuple[str, str]:
        """(the signed-in user, the flow id) from the front's answer, in the browser that
        started it: the code redeemed with its PKCE verifier, the token verified as the MCP
        endpoint verifies it."""
        state = query.get("state") or ""
        try:
            mine = self.fernet.decrypt(_cookie(cookies, STARTED).encode(), ttl=COOKIE_TTL_S)
        except InvalidToken:
            mine = b""
        if not (state and secrets.compare_digest(mine, state.encode())):
            raise SignInFailed("this sign-in was not started in this browser")
        started = self.pending.pop(state, None)
        if started is None:
            raise SignInFailed("unknown or finished sign-in")
        pkce, flow_id = started
        meta = await self._metadata()
        try:
            check_authorization_response(dict(query), meta.issuer, meta.iss_parameter_supported)
        except AuthorizationError as exc:
            raise SignInFailed(str(exc)) from None
        if "code" not in query:
            raise SignInFailed(f"the sign-in was refused ({query.get('error', 'no code')})")
        form = {
            "grant_type": "authorization_code",
            "code": query["code"],
            "redirect_uri": self.redirect_uri,
            "code_verifier": pkce.verifier,
            "client_id": self.client_id,
            "resource": self.auth.resource,
        }
        if self.client_secret:
            form["client_secret"] = str(self.client_secret)
        token = await self._redeem(meta, form)
        try:
            access = await self.auth.authenticate(f"Bearer {token}")
        except AuthFailure as exc:
            raise SignInFailed(f"the front's token was not accepted ({exc})") from None
        if access.principal is None:
            raise SignInFailed("the front's token names no user")
        return access.principal, flow_id

    async def _redeem(self, meta: AuthServerMetadata, form: dict[str, str]) -> str:
        try:
            async with (
                aiohttp.ClientSession() as http,
                http.post(str(meta.token_endpoint), data=form) as answer,
            ):
                body = await answer.json(content_type=None)
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise SignInFailed(f"the front's token endpoint failed ({exc})") from None
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str):
            raise SignInFailed(f"the front's token endpoint answered {answer.status}")
        return token

    async def _metadata(self) -> AuthServerMetadata:
        if self.meta is None:
            try:
                async with aiohttp.ClientSession() as http:
                    self.meta = await discover_auth_server(http, self.issuer)
            except Exception as exc:  # metadata missing or invalid: one line to the page
                raise SignInFailed(f"no metadata for {self.issuer} ({exc})") from None
        return self.meta


def _cookie(header: bytes | None, name: str) -> str:
    """The value of cookie `name` in a `Cookie` header ("" when absent or unreadable)."""
    if not header:
        return ""
    try:
        morsel = SimpleCookie(header.decode("latin-1")).get(name)
    except CookieError:
        return ""
    return morsel.value if morsel is not None else ""
