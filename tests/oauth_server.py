"""A minimal OAuth 2.1 authorization server for tests (aiohttp.web on a loopback socket).

It approves every authorization request as `user` (no browser; a `user` cookie names another
signed-in user), checks PKCE S256, `resource` and redirect URIs, issues ES256 JWT access tokens
for the requested resource and rotating refresh tokens, exchanges tokens signed by the issuers
it `trusts` (RFC 8693), and counts what it was asked, so tests can prove what a client did.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"


def loopback_socket() -> socket.socket:
    """A listening socket on 127.0.0.1 with a free port: servers get it before they start, so
    clients can connect at once (no waiting for start-up)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


@dataclass
class Grant:
    client_id: str
    scope: str
    resource: str
    sub: str


@dataclass
class LocalAuthServer:
    user: str = "alice"
    scopes: tuple[str, ...] = ("orders:read", "orders:write", "offline_access")
    token_ttl: int = 3600
    issuer: str = ""
    calls: Counter[str] = field(default_factory=Counter)
    requests: list[dict[str, str]] = field(default_factory=list)
    clients: dict[str, list[str]] = field(default_factory=dict)
    codes: dict[str, tuple[Grant, str, str]] = field(default_factory=dict)
    refresh: dict[str, Grant] = field(default_factory=dict)
    #: Issuers whose access tokens it exchanges for its own (RFC 8693), with their keys.
    trusts: dict[str, ECKey] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.key = ECKey.generate_key("P-256", parameters={"kid": "k1", "alg": "ES256"})
        self.sock = loopback_socket()
        self.issuer = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.runner: web.AppRunner | None = None

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks.json"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-authorization-server", self.metadata)
        app.router.add_get("/jwks.json", self.jwks)
        app.router.add_post("/register", self.register)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, self.sock).start()

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def sign(self, grant: Grant, ttl: int | None = None) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": grant.resource,
            "sub": grant.sub,
            "client_id": grant.client_id,
            "scope": grant.scope,
            "iat": now,
            "nbf": now,
            "exp": now + (self.token_ttl if ttl is None else ttl),
        }
        header = {"alg": "ES256", "kid": "k1", "typ": "at+jwt"}
        return jwt.encode(header, claims, self.key, algorithms=["ES256"])

    async def metadata(self, request: web.Request) -> web.Response:
        self.calls["metadata"] += 1
        base = self.issuer
        return web.json_response(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "jwks_uri": self.jwks_uri,
                "scopes_supported": list(self.scopes),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def jwks(self, request: web.Request) -> web.Response:
        self.calls["jwks"] += 1
        return web.json_response({"keys": [self.key.as_dict(private=False)]})

    async def register(self, request: web.Request) -> web.Response:
        self.calls["register"] += 1
        body = await request.json()
        client_id = f"client-{len(self.clients) + 1}"
        self.clients[client_id] = list(body.get("redirect_uris") or [])
        return web.json_response(
            {"client_id": client_id, "token_endpoint_auth_method": "none", **body}, status=201
        )

    async def authorize(self, request: web.Request) -> web.Response:
        self.calls["authorize"] += 1
        q = dict(request.query)
        self.requests.append(q)
        redirect = q["redirect_uri"]
        if redirect not in self.clients.get(q.get("client_id", ""), []):
            return web.Response(status=400, text="unknown client or redirect_uri")
        assert q["code_challenge_method"] == "S256"
        code = secrets.token_urlsafe(8)
        user = request.cookies.get("user") or self.user  # who is signed in here
        grant = Grant(q["client_id"], q.get("scope", ""), q["resource"], user)
        self.codes[code] = (grant, q["code_challenge"], redirect)
        query = urlencode({"code": code, "state": q["state"], "iss": self.issuer})
        raise web.HTTPFound(f"{redirect}?{query}")

    async def token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        kind = form.get("grant_type", "")
        self.calls[f"token:{kind}"] += 1
        if kind == "authorization_code":
            grant, challenge, redirect = self.codes.pop(form["code"])
            verifier = form["code_verifier"].encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if digest.decode() != challenge or form.get("redirect_uri") != redirect:
                return web.json_response({"error": "invalid_grant"}, status=400)
            if form.get("resource") != grant.resource:
                return web.json_response({"error": "invalid_target"}, status=400)
        elif kind == "refresh_token":
            old = self.refresh.pop(form.get("refresh_token", ""), None)
            if old is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
            grant = old
        elif kind == TOKEN_EXCHANGE:
            exchanged = self.exchange(form)
            if exchanged is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
            grant = exchanged
        else:
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        body: dict[str, Any] = {
            "access_token": self.sign(grant),
            "token_type": "Bearer",
            "expires_in": self.token_ttl,
            "scope": grant.scope,
        }
        if "offline_access" in grant.scope.split():
            refresh = secrets.token_urlsafe(16)  # rotated on every use
            self.refresh[refresh] = grant
            body["refresh_token"] = refresh
        return web.json_response(body)

    def exchange(self, form: dict[str, Any]) -> Grant | None:
        """RFC 8693: a trusted issuer's unexpired access token becomes a grant for the same
        subject at the requested `resource`; anything else is refused."""
        if form.get("subject_token_type") != ACCESS_TOKEN or not form.get("resource"):
            return None
        token = str(form.get("subject_token", ""))
        try:
            payload = token.split(".")[1]
            unverified = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            claims = jwt.decode(token, self.trusts[unverified["iss"]], algorithms=["ES256"]).claims
        except (JoseError, KeyError, ValueError, IndexError, TypeError):
            return None
        if int(claims.get("exp", 0)) <= time.time():
            return None
        scope = str(form.get("scope") or "")
        return Grant(
            str(form.get("client_id") or "exchanged"), scope, form["resource"], claims["sub"]
        )
