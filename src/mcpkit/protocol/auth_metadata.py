"""Discovery documents and where to find them (RFC 9728, RFC 8414, OIDC Discovery). No I/O.

prm_urls(server_url, header_url)   where Protected Resource Metadata may be (AUTH-DISC-04)
as_metadata_urls(issuer)           where AS metadata may be, in the spec's order (AUTH-DISC-06)
resource_matches(resource, url)    does the PRM `resource` identify this server
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "AuthServerMetadata",
    "MetadataError",
    "MetadataNotFound",
    "ProtectedResourceMetadata",
    "as_metadata_urls",
    "canonical_resource",
    "origin_of",
    "prm_urls",
    "resource_matches",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


class MetadataError(ValueError):
    """A discovery document is malformed or not the one asked for."""


class MetadataNotFound(MetadataError):
    """No discovery document answered at any of the URLs tried."""


def _strip(url: str) -> tuple[str, str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc, parts.path


def origin_of(url: str) -> str:
    scheme, netloc, _ = _strip(url)
    return f"{scheme}://{netloc}"


def canonical_resource(url: str) -> str:
    """The server URL as a resource indicator: no query, no fragment, no trailing slash (AUTH-18)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def prm_urls(server_url: str, header_url: str | None = None) -> list[str]:
    """The header's `resource_metadata` alone, else path-inserted then root well-known URLs."""
    if header_url:
        return [header_url]
    scheme, netloc, path = _strip(server_url)
    path = path.rstrip("/")
    urls = []
    if path:
        urls.append(f"{scheme}://{netloc}{PRM_WELL_KNOWN}{path}")
    urls.append(f"{scheme}://{netloc}{PRM_WELL_KNOWN}")
    return urls


def as_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 path insertion, OIDC path insertion, OIDC path appending; never the root of a
    pathful issuer (AUTH-DISC-06)."""
    scheme, netloc, path = _strip(issuer)
    path = path.rstrip("/")
    base = f"{scheme}://{netloc}"
    if path:
        return [
            f"{base}{OAUTH_WELL_KNOWN}{path}",
            f"{base}{OIDC_WELL_KNOWN}{path}",
            f"{base}{path}{OIDC_WELL_KNOWN}",
        ]
    return [f"{base}{OAUTH_WELL_KNOWN}", f"{base}{OIDC_WELL_KNOWN}"]


def _same_authority(a: str, b: str) -> bool:
    """Scheme and host compared case-insensitively (AUTH-19)."""
    pa, pb = urlsplit(a), urlsplit(b)
    return pa.scheme.lower() == pb.scheme.lower() and pa.netloc.lower() == pb.netloc.lower()


def resource_matches(resource: str, server_url: str) -> bool:
    """True when the PRM `resource` is this server's URL or a path prefix of it, same origin."""
    if not _same_authority(resource, server_url):
        return False
    want = urlsplit(server_url).path.rstrip("/")
    have = urlsplit(resource).path.rstrip("/")
    return want == have or want.startswith(have + "/") or not have


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


@dataclass(frozen=True, slots=True)
class ProtectedResourceMetadata:
    """RFC 9728 §2. `resource` is kept byte for byte: it is what the client sends back."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    url: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, url: str | None = None) -> ProtectedResourceMetadata:
        if not isinstance(data, dict) or not isinstance(data.get("resource"), str):
            raise MetadataError("protected resource metadata has no 'resource'")
        servers = _strings(data.get("authorization_servers"))
        scopes = data.get("scopes_supported")
        return cls(
            data["resource"],
            servers,
            _strings(scopes) if isinstance(scopes, list) else None,
            url,
            data,
        )


@dataclass(frozen=True, slots=True)
class AuthServerMetadata:
    """RFC 8414 §2 / OIDC Discovery, the fields an MCP client uses."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str | None
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] = ("client_secret_basic",)
    grant_types_supported: tuple[str, ...] = ("authorization_code", "implicit")
    iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    url: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(
        cls, data: Any, expected_issuer: str, url: str | None = None
    ) -> AuthServerMetadata:
        """Validated: the `issuer` must be identical to the one the URL was built from
        (AUTH-DISC-07, RFC 8414 §3.3); no normalisation of any kind."""
        if not isinstance(data, dict):
            raise MetadataError("authorization server metadata is not a JSON object")
        issuer = data.get("issuer")
        if issuer != expected_issuer:
            raise MetadataError(
                f"authorization server metadata names issuer {issuer!r}, expected "
                f"{expected_issuer!r}: not used (AUTH-DISC-07)"
            )
        methods = data.get("token_endpoint_auth_methods_supported")
        grants = data.get("grant_types_supported")
        scopes = data.get("scopes_supported")
        pkce = data.get("code_challenge_methods_supported")
        dpop = data.get("dpop_signing_alg_values_supported")
        return cls(
            issuer=issuer,
            authorization_endpoint=_opt_str(data.get("authorization_endpoint")),
            token_endpoint=_opt_str(data.get("token_endpoint")),
            registration_endpoint=_opt_str(data.get("registration_endpoint")),
            scopes_supported=_strings(scopes) if isinstance(scopes, list) else None,
            code_challenge_methods_supported=_strings(pkce) if isinstance(pkce, list) else None,
            token_endpoint_auth_methods_supported=(
                _strings(methods) if isinstance(methods, list) else ("client_secret_basic",)
            ),
            grant_types_supported=(
                _strings(grants) if isinstance(grants, list) else ("authorization_code", "implicit")
            ),
            iss_parameter_supported=data.get("authorization_response_iss_parameter_supported")
            is True,
            client_id_metadata_document_supported=data.get("client_id_metadata_document_supported")
            is True,
            dpop_signing_alg_values_supported=_strings(dpop) if isinstance(dpop, list) else None,
            url=url,
            raw=data,
        )

    @classmethod
    def fallback(cls, server_url: str) -> AuthServerMetadata:
        """2025-03-26 servers without any metadata: default endpoints at the server's origin."""
        base = origin_of(server_url)
        return cls(
            issuer=base,
            authorization_endpoint=f"{base}/authorize",
            token_endpoint=f"{base}/token",
            registration_endpoint=f"{base}/register",
            code_challenge_methods_supported=("S256",),
        )


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
