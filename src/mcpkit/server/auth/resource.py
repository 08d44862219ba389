"""The MCP server as an OAuth resource server (basic/authorization, RFC 9728, RFC 6750).

    auth = BearerAuth(
        JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp",
                    jwks_uri="https://auth.example.com/jwks.json"),
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["mcp:read"],
    )
    server.run(transport="http", auth=auth)        # or server.http_app(auth=auth)

`BearerAuth` is transport-agnostic and does no I/O of its own (its verifier may): the HTTP app
calls `authenticate()` per request, after the Origin check and before parsing (TR-HDR-19),
serves `metadata_body` at `metadata_paths`, and turns `InsufficientScope` into a 403 with the
challenge from `challenge()`. On stdio, `EnvironmentAuth` reads the token from the environment
once (BASE-31, AUTH-01).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import orjson

from ...protocol.auth_challenge import build_challenge
from ...protocol.auth_metadata import PRM_WELL_KNOWN
from .access import AccessToken, InvalidToken, TokenVerifier, expand_scopes

__all__ = ["AuthFailure", "BearerAuth", "EnvironmentAuth"]


class AuthFailure(Exception):
    """An HTTP answer to a request that may not proceed: 401 or 403 with its challenge."""

    def __init__(self, status: int, challenge: str, error: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.challenge = challenge
        self.error = error
        self.description = description

    def body(self) -> bytes:
        return orjson.dumps({"error": self.error, "error_description": self.description})


class BearerAuth:
    """Bearer tokens checked by `verifier` for the resource `resource`."""

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Iterable[str],
        scopes_supported: Iterable[str] | None = None,
        required_scopes: Iterable[str] = (),
        scope_implies: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        servers = list(authorization_servers)
        if not servers:
            raise ValueError("name at least one authorization server (AUTH-DISC-01)")
        self.verifier = verifier
        self.resource = resource
        self.required_scopes = frozenset(required_scopes)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else None
        if self.scopes_supported and "offline_access" in self.scopes_supported:
            raise ValueError("offline_access is not a resource scope (AUTH-27)")
        self.scope_implies = dict(scope_implies or {})
        parts = urlsplit(resource)
        path = parts.path.rstrip("/")
        well_known = PRM_WELL_KNOWN + path
        #: Where this app answers with the metadata: path-inserted, and the root for a root
        #: resource (AUTH-DISC-03).
        self.metadata_paths = frozenset({well_known})
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{well_known}"
        doc: dict[str, Any] = {
            "resource": resource,
            "authorization_servers": servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        if resource_name:
            doc["resource_name"] = resource_name
        doc.update(metadata or {})
        self.metadata = doc
        self.metadata_body = orjson.dumps(doc)  # RFC 9728 §3.2, encoded once

    def served_at(self, endpoint: str) -> BearerAuth:
        """This auth for an ASGI app whose MCP endpoint is `endpoint` inside it. When the
        resource's path ends with `endpoint`, what comes before is where the app is mounted
        (`/weather` for `https://h/weather/mcp` and `/mcp`): the app answers the metadata
        inside its mount, at `<mount>/.well-known/oauth-protected-resource<resource path>`,
        and challenges point there (AUTH-DISC-03). Otherwise this auth, unchanged."""
        parts = urlsplit(self.resource)
        path = parts.path.rstrip("/")
        inner = endpoint.rstrip("/")
        mount = path[: len(path) - len(inner)] if path.endswith(inner) else ""
        if not mount:
            return self
        mounted = copy.copy(self)
        mounted.metadata_url = f"{parts.scheme}://{parts.netloc}{mount}{PRM_WELL_KNOWN}{path}"
        return mounted

    def challenge(
        self,
        *,
        error: str | None = None,
        description: str | None = None,
        scope: Iterable[str] | None = None,
    ) -> str:
        """`Bearer resource_metadata=..., scope=..., error=...` (AUTH-08, AUTH-29)."""
        wanted = list(scope) if scope is not None else self.default_scope()
        return build_challenge(
            "Bearer",
            {
                "error": error,
                "error_description": description,
                "scope": " ".join(sorted(wanted)) if wanted else None,
                "resource_metadata": self.metadata_url,
            },
        )

    def default_scope(self) -> list[str]:
        if self.required_scopes:
            return sorted(self.required_scopes)
        return list(self.scopes_supported or ())

    def insufficient(self, required: Iterable[str], description: str) -> AuthFailure:
        scope = sorted(set(required) | self.required_scopes)  # everything at once (AUTH-30)
        return AuthFailure(
            403,
            self.challenge(error="insufficient_scope", description=description, scope=scope),
            "insufficient_scope",
            description,
        )

    async def authenticate(self, authorization: str | None) -> AccessToken:
        """The verified token of one request, or `AuthFailure` (AUTH-22/23/28)."""
        if not authorization:
            msg = "Authorization required"
            raise AuthFailure(401, self.challenge(), "invalid_request", msg)
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            msg = "Use the Authorization: Bearer <token> header"
            raise AuthFailure(
                401,
                self.challenge(error="invalid_request", description=msg),
                "invalid_request",
                msg,
            )
        try:
            access = await self.verifier.verify(token)
        except InvalidToken as exc:
            raise AuthFailure(
                401,
                self.challenge(error="invalid_token", description=exc.description),
                "invalid_token",
                exc.description,
            ) from None
        if self.scope_implies:
            access = replace(access, scopes=expand_scopes(access.scopes, self.scope_implies))
        if not self.required_scopes <= access.scopes:
            raise self.insufficient(self.required_scopes, "The access token lacks a required scope")
        return access


class EnvironmentAuth:
    """stdio: the credential comes from the environment, checked once at start (BASE-31)."""

    def __init__(
        self, verifier: TokenVerifier, *, env_var: str = "MCP_ACCESS_TOKEN", required: bool = True
    ) -> None:
        self.verifier = verifier
        self.env_var = env_var
        self.required = required

    async def authenticate(self, environ: Mapping[str, str] | None = None) -> AccessToken | None:
        token = (environ if environ is not None else os.environ).get(self.env_var)
        if not token:
            if self.required:
                raise InvalidToken(f"set {self.env_var} to an access token")
            return None
        return await self.verifier.verify(token)
