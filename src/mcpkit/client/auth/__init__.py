"""The OAuth client (MCP basic/authorization), used by `Client(url, auth=...)`:

    OAuth                  answers 401/403 from an MCP server: discovery, registration, tokens
    AuthorizationCode      user authorization with PKCE (LoopbackAuthorizer / HeadlessAuthorizer)
    ClientCredentials, JwtBearer, EnterpriseManaged   non-interactive grants
    FileTokenStore, MemoryTokenStore                  credentials keyed by issuer
    AuthorizationError, OAuthError                    what fails (`OAuthError` carries the
                                                      server's `error` code)

The discovery documents and `WWW-Authenticate` challenges it reads are sans-IO, in
`mcpkit.protocol.auth_metadata` and `mcpkit.protocol.auth_challenge`. Names load on first use.
"""

from ..._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
