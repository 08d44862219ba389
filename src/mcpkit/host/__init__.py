"""The host: several MCP servers behind one agent, with consent.

    config = load_config("mcp.json")
    async with Host(config, model=make_model("anthropic:claude-sonnet-4-5")) as host:
        answer = await host.agent(system="You help Northwind customers.").ask("Where is NW-1042?")

Names load on first use (`__init__.pyi` lists them): the terminal UI, the model SDKs and the
search rankers only when asked for.
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
