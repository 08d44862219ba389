"""Per-server credentials for the host, from configuration only (never from the model).

    "auth": {"oauth": true}                                    # authorization code, loopback
    "auth": {"clientCredentials": {"clientId": "...", "clientSecret": "${SECRET}"}}

Without "auth", an HTTP server that answers 401 is authorized interactively, like the CLI does,
unless the entry already sends an Authorization header. Tokens are kept per authorization
server in MCPKIT_TOKEN_FILE (default ~/.config/mcpkit/tokens.json).
"""

from __future__ import annotations

import os
from typing import Any

from .config import ConfigError, ServerConfig


def oauth_for(server: ServerConfig, *, interactive: bool = True) -> Any:
    if server.transport != "http":
        return None
    settings = dict(server.auth)
    if any(name.lower() == "authorization" for name in server.headers) and not settings:
        return None  # a static credential from the configuration
    if settings.get("oauth") is False:
        return None
    from ..client.auth import (
        AuthorizationCode,
        ClientCredentials,
        ClientMetadata,
        FileTokenStore,
        LoopbackAuthorizer,
        OAuth,
    )

    store = FileTokenStore(os.environ.get("MCPKIT_TOKEN_FILE") or "~/.config/mcpkit/tokens.json")
    creds = settings.get("clientCredentials")
    if creds is not None:
        if not isinstance(creds, dict) or not isinstance(creds.get("clientId"), str):
            raise ConfigError(f'server {server.name!r}: auth.clientCredentials needs "clientId"')
        return OAuth(
            ClientCredentials(
                creds["clientId"],
                creds.get("clientSecret"),
                private_key_pem=creds.get("privateKeyPem"),
            ),
            store=store,
        )
    if not interactive:
        return None
    grant = AuthorizationCode(
        LoopbackAuthorizer(), metadata=ClientMetadata(client_name="mcpkit host")
    )
    return OAuth(grant, store=store)
