"""`mcpkit gateway`: the servers of an `mcpServers` file served as one MCP server."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from .errors import CLIError
from .runtime import ConfigOpt, HostOpt, PortOpt, QuietOpt


class FrontTransport(StrEnum):
    http = "http"
    stdio = "stdio"


def gateway(
    config: ConfigOpt = None,
    transport: Annotated[
        FrontTransport, typer.Option("--transport", "-T", help="How to serve the front.")
    ] = FrontTransport.http,
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Serve over stdio (same as --transport stdio).")
    ] = False,
    host: HostOpt = None,
    port: PortOpt = None,
    log_level: Annotated[
        str | None,
        typer.Option("--log-level", "-l", help="Log level on stderr (debug ... error)."),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Serve every server of an mcpServers file as one MCP server (both eras): namespaced
    tools, resources and prompts, the config's consent rules, host-owned arguments, pins and
    audit for every call, and the front guarded by the config's "gateway.auth"."""
    from ..gateway import Gateway, GatewaySettings, front_auth
    from ..host import ConfigError, HostSettings, load_config
    from ..server.settings import Settings, SettingsError
    from .serve import _configure_logging, check_port

    try:
        cfg = load_config(config)
        settings = GatewaySettings.from_config(cfg)
        front = Gateway(cfg, settings=settings, host=HostSettings.from_config(cfg))
        env = Settings.from_env()
    except (ConfigError, SettingsError) as exc:
        raise CLIError(str(exc)) from None
    mode = "stdio" if stdio else transport.value
    level = log_level or env.log_level or "warning"
    _configure_logging(level)
    names = ", ".join(front.links) or "none"
    if mode == "stdio":
        auth = front_auth(settings, "stdio")
        if not quiet:
            print(f"mcpkit: gateway {settings.name} ({names}) over stdio", file=sys.stderr)
        environment = None
        if auth is not None:
            from ..server.auth import EnvironmentAuth

            environment = EnvironmentAuth(auth.verifier)  # MCP_ACCESS_TOKEN (BASE-31)
        front.run("stdio", auth=environment)
        return
    bind, number = env.pick("host", host), env.pick("port", port)
    check_port(bind, number)
    shown = f"[{bind}]" if ":" in bind else bind
    url = f"http://{shown}:{number}/mcp"
    auth = front_auth(settings, url)
    if not quiet:
        guard = "token required" if auth is not None else "no auth: loopback only"
        print(
            f"mcpkit: gateway {settings.name} ({names}) at {url} ({guard}; Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )
    front.run("http", host=bind, port=number, auth=auth, log_level=level)
