"""The MCP server as an OAuth resource server (MCP basic/authorization), used by
`server.http_app(auth=...)` and `server.run(auth=...)`:

    BearerAuth             token check, Protected Resource Metadata, 401/403 challenges
    EnvironmentAuth        stdio: credentials from the environment (BASE-31)
    JWTVerifier            JWT access tokens against a JWKS (iss, aud, exp, nbf)
    IntrospectionVerifier  opaque tokens via RFC 7662
    AccessToken            what a verified token says; `ctx.auth` in handlers
    FromPrincipal          a tool parameter filled from the token, never from arguments

Names load on first use (the verifiers bring joserfc and aiohttp).
"""

from ..._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
