"""mcpkit: a complete, fast Model Context Protocol implementation (server, client, host).

`import mcpkit` is cheap: names load on first use. The public names are those of
`__init__.pyi`, the one list (see `mcpkit._lazy`).
"""

from ._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
