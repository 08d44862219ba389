"""`OAuth`: the MCP authorization client plugged into the HTTP transport.

    auth = OAuth(AuthorizationCode(LoopbackAuthorizer()), store=FileTokenStore("~/.mcpkit/tokens.json"))
    async with Client("https://mcp.example.com/mcp", auth=auth) as client:
        ...

On a 401 it discovers the protected resource metadata (AUTH-DISC-04/05), checks its `resource`,
discovers the authorization server (AUTH-DISC-06/07), reuses stored tokens for that issuer or
refreshes them, and otherwise runs its grant; on a 403 `insufficient_scope` it steps up to the
union of scopes (AUTH-31). Authorizations per failing request are capped (AUTH-32). Tokens go
in the `Authorization` header only (AUTH-20/21), as DPoP-bound tokens when the authorization
server supports DPoP (RFC 9449).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import aiohttp

from ...protocol.auth_challenge import Challenge, parse_challenges
from ...protocol.auth_metadata import (
    AuthServerMetadata,
    MetadataError,
    MetadataNotFound,
    canonical_resource,
    origin_of,
    resource_matches,
)
from ..errors import AuthorizationError
from .discovery import discover_auth_server, discover_resource
from .grants import AuthorizationCode, Flow, Grant
from .token_endpoint import request_token
from .token_store import IssuerRecord, MemoryTokenStore, TokenStore
from .tokens import TokenSet

if TYPE_CHECKING:
    from .dpop import DPoPKey

__all__ = ["OAuth", "RetryState"]

log = logging.getLogger("mcpkit.auth")


@dataclass(slots=True)
class RetryState:
    """Per HTTP request: how many authorizations and DPoP nonce retries it has caused."""

    authorizations: int = 0
    nonce_retries: int = 0


class OAuth:
    """OAuth 2.1 for one MCP server URL (bound by the transport)."""

    def __init__(
        self,
        grant: Grant | None = None,
        *,
        store: TokenStore | None = None,
        dpop: bool | Literal["auto"] = "auto",
        max_authorizations: int = 3,
    ) -> None:
        self.grant: Grant = grant if grant is not None else AuthorizationCode()
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.dpop = dpop
        self.max_authorizations = max_authorizations
        self.server_url: str | None = None
        self.tokens: TokenSet | None = None
        self.meta: AuthServerMetadata | None = None
        self.resource: str | None = None
        self.scopes: tuple[str, ...] = ()  # accumulated across step-ups (AUTH-10)
        self._dpop_key: DPoPKey | None = None
        self._lock = asyncio.Lock()
        self._http: aiohttp.ClientSession | None = None

    def bind(self, server_url: str) -> None:
        if self.server_url is not None and self.server_url != server_url:
            raise ValueError("an OAuth object serves one MCP server URL")
        self.server_url = server_url

    def cache_key(self) -> str:
        """Keys private cache entries to the credential in use (CACHE-11)."""
        token = self.tokens.access_token if self.tokens is not None else ""
        return hashlib.sha256(token.encode()).hexdigest()[:16]

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.close()
        await self.grant.close()

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        return self._http

    # -- what the transport calls --------------------------------------------------------------
    async def headers(self, method: str, url: str) -> dict[str, str]:
        """`Authorization` (and `DPoP`) for one request; an expired token is refreshed first."""
        tokens = self.tokens
        if tokens is None:
            return {}
        if tokens.expired() and tokens.refresh_token and self.meta is not None:
            async with self._lock:
                if self.tokens is tokens:
                    try:
                        await self._refresh(tokens)
                    except (AuthorizationError, aiohttp.ClientError, OSError) as exc:
                        log.info("refreshing the access token failed: %s", exc)
                tokens = self.tokens or tokens
        if tokens.is_dpop and self._dpop_key is not None:
            proof = self._dpop_key.proof(method, url, access_token=tokens.access_token)
            return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}
        return {"Authorization": f"Bearer {tokens.access_token}"}

    async def on_response(
        self,
        status: int,
        headers: Mapping[str, str],
        challenges: list[str],
        sent: Mapping[str, str],
        state: RetryState,
    ) -> bool:
        """Act on the MCP server's answer; True means: send the request again."""
        url = self.server_url or ""
        nonce_fresh = self._dpop_key is not None and self._dpop_key.remember_nonce(
            url, headers.get("DPoP-Nonce")
        )
        if status not in (401, 403):
            return False
        parsed = parse_challenges(challenges)
        challenge = _pick(parsed)
        if challenge is not None and challenge.error == "use_dpop_nonce":
            if nonce_fresh and state.nonce_retries < 2:  # RFC 9449 §9
                state.nonce_retries += 1
                return True
            return False
        step_up = status == 403
        if step_up and (challenge is None or challenge.error != "insufficient_scope"):
            return False  # a plain 403: more authorization will not help
        if state.authorizations >= self.max_authorizations:
            log.warning("giving up after %d authorizations for one request", state.authorizations)
            raise AuthorizationError(
                f"still HTTP {status} after {state.authorizations} authorizations",
                status=status,
            )
        sent_token = _token_of(sent.get("Authorization"))
        async with self._lock:
            current = self.tokens.access_token if self.tokens is not None else None
            if not step_up and current is not None and current != sent_token:
                return True  # another request already got a new token
            state.authorizations += 1
            await self._authorize(challenge, sent_token, step_up)
        return True

    async def authorize(self, rejected: str | None = None) -> None:
        """Get a token now rather than on a 401: a stored one (not `rejected`, a token the
        server refused), refreshed if need be, else the grant's (the gateway's `perUser`
        backends ask before the first call)."""
        async with self._lock:
            await self._authorize(None, rejected, False)

    # -- the flow ------------------------------------------------------------------------------
    async def _authorize(
        self, challenge: Challenge | None, rejected: str | None, step_up: bool
    ) -> None:
        server_url = self.server_url
        if server_url is None:
            raise AuthorizationError("OAuth is not bound to a server URL")
        http = self._session()
        header_url = challenge.resource_metadata if challenge is not None else None
        prm = await discover_resource(http, server_url, header_url)
        if prm is not None:
            if not resource_matches(prm.resource, server_url):
                raise AuthorizationError(  # RFC 9728 §3.3, RFC 8707
                    f"the protected resource metadata names {prm.resource!r}, which is not "
                    f"{server_url!r}: refusing to authorize"
                )
            if not prm.authorization_servers:
                raise AuthorizationError(
                    "the protected resource metadata names no authorization server"
                )
            issuer, resource = prm.authorization_servers[0], prm.resource
            try:
                meta = await discover_auth_server(http, issuer)
            except MetadataError as exc:
                raise AuthorizationError(str(exc)) from exc
        else:  # a 2025-03-26 server: it is its own authorization server
            resource = canonical_resource(server_url)
            try:
                meta = await discover_auth_server(http, origin_of(server_url))
            except MetadataNotFound:
                meta = AuthServerMetadata.fallback(server_url)
            except MetadataError as exc:
                raise AuthorizationError(str(exc)) from exc
        if self.meta is not None and self.meta.issuer != meta.issuer:
            log.info("authorization server changed: %s -> %s", self.meta.issuer, meta.issuer)
            self.tokens, self.scopes = None, ()  # AUTH-DISC-02: nothing carries over
        self.meta, self.resource = meta, resource
        if self._dpop_key is None and self._wants_dpop(meta, challenge):
            from .dpop import DPoPKey  # joserfc loads only when DPoP is used

            self._dpop_key = DPoPKey()
        record = await self.store.load(meta.issuer) or IssuerRecord()
        wanted = challenge.scope if challenge is not None else []
        if step_up:
            scopes = tuple(dict.fromkeys([*self.scopes, *wanted]))  # AUTH-31: union
        elif wanted:
            scopes = tuple(wanted)
        elif prm is not None and prm.scopes_supported:
            scopes = prm.scopes_supported
        else:
            scopes = ()
        if not step_up and await self._reuse(record, resource, rejected):
            return
        flow = Flow(http, meta, resource, scopes, record, self._dpop_key)
        tokens = await self.grant.obtain(flow)
        self.scopes = flow.scopes
        if flow.identity is not None:
            record.client = flow.identity
        await self._keep(record, tokens)

    async def _reuse(self, record: IssuerRecord, resource: str, rejected: str | None) -> bool:
        """Stored tokens for this issuer and resource: use them, or refresh them (a restarted
        client needs no user interaction while its refresh token is good)."""
        stored = record.tokens.get(resource)
        if stored is None:
            return False
        if stored.access_token != rejected and not stored.expired():
            self.tokens, self.scopes = stored, stored.scope
            return True
        if stored.refresh_token is None:
            return False
        try:
            await self._refresh(stored, record)
        except (AuthorizationError, aiohttp.ClientError, OSError) as exc:
            log.info("the stored refresh token was not accepted: %s", exc)
            return False
        return True

    async def _refresh(self, tokens: TokenSet, record: IssuerRecord | None = None) -> None:
        meta, resource = self.meta, self.resource
        assert meta is not None and resource is not None and tokens.refresh_token is not None
        if record is None:
            record = await self.store.load(meta.issuer) or IssuerRecord()
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": resource,
        }
        identity = self.grant.client_identity(meta) or record.client
        fresh = await request_token(
            self._session(),
            meta,
            identity,
            form,
            dpop=self._dpop_key if tokens.is_dpop else None,
            requested_scope=tokens.scope,
            resource=resource,
        )
        self.scopes = fresh.scope or tokens.scope
        await self._keep(record, tokens.refreshed(fresh))

    async def _keep(self, record: IssuerRecord, tokens: TokenSet) -> None:
        assert self.meta is not None and self.resource is not None
        self.tokens = tokens
        record.tokens[self.resource] = tokens
        await self.store.save(self.meta.issuer, record)  # AUTH-REG-07: keyed by issuer

    def _wants_dpop(self, meta: AuthServerMetadata, challenge: Challenge | None) -> bool:
        if self.dpop is True:
            return True
        if self.dpop is False:
            return False
        algs = meta.dpop_signing_alg_values_supported or ()
        return "ES256" in algs or (
            challenge is not None and challenge.scheme.lower() == "dpop" and not algs
        )


def _pick(challenges: list[Challenge]) -> Challenge | None:
    """The DPoP or Bearer challenge (DPoP first: it carries `use_dpop_nonce`)."""
    for scheme in ("dpop", "bearer"):
        for c in challenges:
            if c.scheme.lower() == scheme:
                return c
    return challenges[0] if challenges else None


def _token_of(header: str | None) -> str | None:
    if not header:
        return None
    _, _, token = header.partition(" ")
    return token.strip() or None
