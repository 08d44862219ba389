"""The gateway's settings: a `"gateway"` object beside `mcpServers` (and `"host"`, whose
`startupTimeout`, `restart`, `audit`, `log` and `pins` it shares), plus a few keys per server:

    "gateway": {
      "name": "northwind",
      "consent": {"deny": ["warehouse__cancel_*"]},       # front names, like an agent's rules
      "auth": {
        "resource": "https://mcp.example.com/mcp",        # default: the URL being served
        "authorizationServers": ["https://auth.example.com"],
        "jwt": {"issuer": "https://auth.example.com", "jwksUri": "https://auth.example.com/jwks"},
        "requiredScopes": ["mcp"]
      }
    },
    "mcpServers": {
      "returns": {"url": "...", "scopes": ["returns"], "toolScopes": {"create_*": ["returns:write"]},
                  "userHeaders": {"Authorization": "Bearer tok-{sub}"},
                  "hostOwned": {"customer_id": "{sub}"}}}

- `auth`: who may use the front (Streamable HTTP): `jwt` (`issuer`, `jwksUri` or `jwks`,
  `audience` defaulting to `resource`), `introspection` (`endpoint`, `clientId`,
  `clientSecret`), or `tokens` (a fixed list `[{"token": "${ALICE_TOKEN}", "sub": ...,
  "scopes": [...], "claims": {...}}]`, for development). Without `auth` the front is open
  (loopback only).
- `scopes` (per server): scopes a caller's token needs to see and use the server at all;
  `toolScopes`: more, per tool name pattern.
- `userHeaders` (per HTTP server): headers sent with each call, made from the caller's token
  (`{sub}`, `{client_id}`, `{claim.NAME}`); the front's own credential never goes through.
  `listPerUser: true` sends them with the server's lists too: each caller sees the tools the
  server listed for them (`per_caller.py`), never another caller's.
- `hostOwned` values may be such templates too: the caller's own identity, per call.
- `handles` (per server, default true): scope the server's state handles per caller.
- `perUser` (per HTTP server): each front user's own OAuth token, `true` or `{"clientId",
  "clientSecret", "tokenExchange": true}` (`per_user.py`); the gateway's
  `userTokens` (`{"key": Fernet key, "redis": URL, "prefix": ...}`, `user_tokens.py`) and
  `callbackUrl` (where the backend's authorization server sends the user back) go with it.
- `retry` (off by default): `true` or `{"attempts": 3, "initial": 0.2, "max": 2}` repeats a
  failed call when that is certainly harmless (as the host does); `outputBudget`: tokens a
  tool result is cut to (off by default).
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..host.config import ConfigError, HostConfig, expand
from ..host.pipeline import ConsentRules
from ..host.retry import RetryPolicy
from ..server.auth.access import AccessToken, InvalidToken

_KEYS = {
    "name",
    "consent",
    "auth",
    "handleTtl",
    "retry",
    "outputBudget",
    "userTokens",
    "callbackUrl",
}
_PER_USER_KEYS = {"clientId", "clientSecret", "tokenExchange"}
_AUTH_KEYS = {
    "clientId",
    "clientSecret",
    "resource",
    "authorizationServers",
    "jwt",
    "introspection",
    "tokens",
    "requiredScopes",
    "scopesSupported",
    "resourceName",
}


@dataclass(frozen=True, slots=True)
class BackendRules:
    """What the gateway adds to one `mcpServers` entry."""

    scopes: frozenset[str] = frozenset()
    tool_scopes: tuple[tuple[str, frozenset[str]], ...] = ()
    user_headers: Mapping[str, str] = field(default_factory=dict)
    handles: bool = True
    #: Each front user's own OAuth token for this backend (`"perUser"`), or None.
    per_user: PerUser | None = None
    #: Listed per caller with their `userHeaders` (`"listPerUser"`): each sees their own tools.
    list_per_user: bool = False


@dataclass(frozen=True, slots=True)
class PerUser:
    """`"perUser"`: the gateway's client at the backend's authorization server (registered
    dynamically when `client_id` is None; the scopes asked for are those the backend
    publishes), and whether it exchanges the front token (RFC 8693) instead of sending the
    user to authorize."""

    client_id: str | None = None
    client_secret: str | None = None
    token_exchange: bool = False


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    name: str = "mcpkit-gateway"
    consent: ConsentRules = field(default_factory=ConsentRules)
    auth: Mapping[str, Any] | None = None
    handle_ttl: float = 24 * 3600.0
    backends: Mapping[str, BackendRules] = field(default_factory=dict)
    #: Repeat a failed call when that is certainly harmless (off by default: a client that
    #: retries itself would multiply attempts).
    retry: RetryPolicy | None = None
    #: Cut each tool result to this many tokens (off by default).
    output_budget: int | None = None
    #: Where per-user tokens are kept (`"userTokens"`) and the OAuth callback's public URL.
    user_tokens: Mapping[str, Any] = field(default_factory=dict)
    callback_url: str | None = None

    @classmethod
    def from_config(cls, config: HostConfig) -> GatewaySettings:
        source = config.source or "<config>"
        where = f'{source}: "gateway"'
        raw = expand(config.raw.get("gateway") or {}, config.env or os.environ, where)
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where} must be an object")
        unknown = set(raw) - _KEYS
        if unknown:
            raise ConfigError(f"{where} has unknown keys {sorted(unknown)} ({', '.join(_KEYS)})")
        try:
            consent = ConsentRules.parse(raw.get("consent"))
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        auth = raw.get("auth")
        if auth is not None:
            _check_auth(auth, f"{where}.auth")
        ttl = raw.get("handleTtl", 24 * 3600.0)
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
            raise ConfigError(f'{where}: "handleTtl" is a number of seconds above 0')
        entries = config.raw.get("mcpServers") or {}
        env = config.env or os.environ
        backends = {}
        for name in config.servers:
            at = f"{source}: server {name!r}"
            backends[name] = _backend(expand(entries.get(name) or {}, env, at), at)
        return cls(
            str(raw.get("name") or "mcpkit-gateway"),
            consent,
            auth,
            float(ttl),
            backends,
            _retry(raw.get("retry"), where),
            _budget(raw.get("outputBudget"), where),
            *_user_tokens(raw, backends, where),
        )


def _retry(value: Any, where: str) -> RetryPolicy | None:
    if value is None or value is False:
        return None
    try:
        return RetryPolicy() if value is True else RetryPolicy.parse(value)
    except ValueError as exc:
        raise ConfigError(f'{where}: "retry": {exc}') from None


def _budget(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < 1:
        raise ConfigError(f'{where}: "outputBudget" is a whole number of tokens above 0')
    return value


def _user_tokens(
    raw: Mapping[str, Any], backends: Mapping[str, BackendRules], where: str
) -> tuple[Mapping[str, Any], str | None]:
    tokens = raw.get("userTokens") or {}
    if not isinstance(tokens, Mapping) or set(tokens) - {"key", "redis", "prefix", "flowTimeout"}:
        raise ConfigError(f'{where}: "userTokens" is {{"key", "redis", "prefix", "flowTimeout"}}')
    if tokens.get("redis") and not tokens.get("key"):
        raise ConfigError(
            f'{where}: "userTokens" in Redis need a "key" (a Fernet key, the same on every '
            "instance) to encrypt them at rest"
        )
    callback = raw.get("callbackUrl")
    if callback is not None and not (isinstance(callback, str) and "://" in callback):
        raise ConfigError(f'{where}: "callbackUrl" is the absolute URL of the OAuth callback')
    flows = [n for n, b in backends.items() if b.per_user and not b.per_user.token_exchange]
    if flows and callback is None:
        raise ConfigError(
            f'{where}: servers {flows} are perUser: give "callbackUrl", the gateway\'s public '
            "URL of its OAuth callback (e.g. https://gateway.example.com/oauth/callback)"
        )
    return tokens, callback


def _per_user(value: Any, where: str) -> PerUser | None:
    if value is None or value is False:
        return None
    if value is True:
        return PerUser()
    if not isinstance(value, Mapping) or set(value) - _PER_USER_KEYS:
        raise ConfigError(f'{where}: "perUser" is true or an object of {sorted(_PER_USER_KEYS)}')
    return PerUser(
        value.get("clientId"),
        value.get("clientSecret"),
        value.get("tokenExchange") is True,
    )


def _strings(value: Any, where: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return frozenset(value)


def _backend(entry: Mapping[str, Any], where: str) -> BackendRules:
    tool_scopes = entry.get("toolScopes") or {}
    if not isinstance(tool_scopes, Mapping):
        raise ConfigError(f'{where}: "toolScopes" maps tool name patterns to scope lists')
    headers = entry.get("userHeaders") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise ConfigError(f'{where}: "userHeaders" maps header names to template strings')
    if headers and "url" not in entry:
        raise ConfigError(f'{where}: "userHeaders" is for HTTP servers (give "url")')
    handles = entry.get("handles", True)
    if not isinstance(handles, bool):
        raise ConfigError(f'{where}: "handles" must be true or false')
    per_user = _per_user(entry.get("perUser"), where)
    if per_user is not None and "url" not in entry:
        raise ConfigError(f'{where}: "perUser" is for HTTP servers (give "url")')
    per_caller = entry.get("listPerUser", False)
    if not isinstance(per_caller, bool) or (per_caller and not headers):
        raise ConfigError(
            f'{where}: "listPerUser" is true or false, and lists the server with each '
            'caller\'s "userHeaders" (give them)'
        )
    return BackendRules(
        _strings(entry.get("scopes"), f'{where}: "scopes"'),
        tuple(
            (pattern, _strings(scopes, f'{where}: "toolScopes.{pattern}"'))
            for pattern, scopes in tool_scopes.items()
        ),
        dict(headers),
        handles,
        per_user,
        per_caller,
    )


def _check_auth(auth: Any, where: str) -> None:
    if not isinstance(auth, Mapping):
        raise ConfigError(f"{where} must be an object")
    unknown = set(auth) - _AUTH_KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys {sorted(unknown)}")
    kinds = [k for k in ("jwt", "introspection", "tokens") if k in auth]
    if len(kinds) != 1:
        raise ConfigError(f'{where} needs exactly one of "jwt", "introspection" or "tokens"')
    if kinds == ["tokens"]:
        tokens = auth["tokens"]
        if not isinstance(tokens, list) or not all(
            isinstance(t, Mapping)
            and isinstance(t.get("token"), str)
            and t["token"]
            and isinstance(t.get("sub"), str)
            for t in tokens
        ):
            raise ConfigError(
                f'{where}.tokens is a list of {{"token": ..., "sub": ..., "scopes": [...]}}'
            )


class StaticTokens:
    """A fixed token table (`"tokens"`): for development and tests, not for production."""

    def __init__(self, table: list[Mapping[str, Any]]) -> None:
        self._table = [(str(entry["token"]).encode(), dict(entry)) for entry in table]

    async def verify(self, token: str) -> AccessToken:
        given = token.encode()
        found: dict[str, Any] | None = None
        for known, entry in self._table:  # every entry compared, in constant time each
            if hmac.compare_digest(known, given):
                found = entry
        if found is None:
            raise InvalidToken("unknown token")
        return AccessToken(
            subject=found["sub"],
            scopes=frozenset(found.get("scopes") or ()),
            client_id=found.get("clientId"),
            claims={**dict(found.get("claims") or {}), "sub": found["sub"]},
            token=token,
        )


def front_auth(settings: GatewaySettings, resource: str) -> Any:
    """The `BearerAuth` guarding the front, or None when the config has no `auth`."""
    auth = settings.auth
    if auth is None:
        return None
    from ..server.auth import BearerAuth, IntrospectionVerifier, JWTVerifier

    resource = str(auth.get("resource") or resource)
    servers = list(auth.get("authorizationServers") or [])
    verifier: Any
    if "jwt" in auth:
        jwt = dict(auth["jwt"])
        verifier = JWTVerifier(
            issuer=jwt["issuer"],
            audience=jwt.get("audience") or resource,
            jwks_uri=jwt.get("jwksUri"),
            jwks=jwt.get("jwks"),
        )
        servers = servers or [jwt["issuer"]]
    elif "introspection" in auth:
        spec = dict(auth["introspection"])
        verifier = IntrospectionVerifier(
            spec["endpoint"],
            audience=spec.get("audience") or resource,
            client_id=spec.get("clientId"),
            client_secret=spec.get("clientSecret"),
        )
    else:
        verifier = StaticTokens(auth["tokens"])
    return BearerAuth(
        verifier,
        resource=resource,
        authorization_servers=servers or [resource],
        required_scopes=auth.get("requiredScopes") or (),
        scopes_supported=auth.get("scopesSupported"),
        resource_name=auth.get("resourceName") or settings.name,
    )
