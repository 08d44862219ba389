"""`mcpkit ui`: the host behind a local web page (chat with consent and forms, an inspector,
MCP Apps), on 127.0.0.1 with a random access token in the address it prints."""

from __future__ import annotations

import typer

from .errors import CLIError
from .host import (
    AgentOpt,
    AuditOpt,
    BaseUrlOpt,
    ConfigOpt,
    ModelOpt,
    NoCacheOpt,
    OpenOpt,
    ServersOpt,
    SystemOpt,
    WebHostOpt,
    WebPortOpt,
    _prepare,
    optional_model,
)


def ui(
    config: ConfigOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    agent: AgentOpt = None,
    servers: ServersOpt = None,
    system: SystemOpt = None,
    host: WebHostOpt = "127.0.0.1",
    port: WebPortOpt = 0,
    audit: AuditOpt = None,
    open_browser: OpenOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Chat with an agent over the configured servers in your browser, inspect the servers,
    and use their MCP Apps."""
    import asyncio

    cfg, chosen, agent_system, settings = _prepare(config, agent, servers, audit, no_cache)
    llm = optional_model(model, base_url, cfg)

    async def work() -> None:
        from ..host.web import WebHost

        try:
            web = WebHost(
                cfg,
                model=llm,
                agent=agent,
                system=system or agent_system,
                servers=chosen,
                settings=settings,
                bind=host,
                port=port,
            )
        except OSError as exc:
            raise CLIError(
                f"cannot listen on {host}:{port}: {exc.strerror} (pick another --port, or 0)"
            ) from None
        async with web:
            typer.echo(f"mcpkit ui: open {web.url}")
            typer.echo(f"  model: {llm.name}; server logs: {settings.log}; Ctrl-C to stop")
            if open_browser:
                import webbrowser

                webbrowser.open(web.url)
            await web.wait_closed()

    asyncio.run(work())
