"""Authorization (MCP basic/authorization), both sides under one name:

    client side (`mcpkit.client.auth`)   OAuth, the grants, authorizers and token stores
    server side (`mcpkit.server.auth`)   BearerAuth, the verifiers, AccessToken, FromPrincipal

The two halves live with the side that uses them; this package re-exports both (the
examples and README import from here). Names load on first use: `import mcpkit.auth` stays
cheap.
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
