"""`proxy(target)`: a server that forwards everything to one MCP server.

    backend = proxy("https://mcp.example.com/mcp")          # or a command, an mcpServers entry,
    backend.run("stdio")                                    # or an in-process Server

The backend may speak either era over either transport; the proxy serves both eras on
whatever transport it runs on. Tools, prompts, resources and templates keep their names and
URIs; calls, reads, prompts and completions are forwarded with input requests (MRTR both
ways, a legacy backend's real requests included), progress, cancellation and tasks; list
changes and resource updates reach the proxy's listeners; the backend is supervised
(reconnected with backoff when it goes away, its tools withdrawn meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..client.target import HttpTarget, parse_target
from ..host.backoff import Backoff
from ..host.config import ServerConfig, parse_config
from ..server.server import Server
from .front import Front


def backend_config(
    target: Any,
    name: str = "backend",
    *,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> tuple[ServerConfig, Any]:
    """(config, in-process target or None) of what `proxy` and `Front.add_backend` accept."""
    if isinstance(target, ServerConfig):
        return target, None
    if hasattr(target, "http_app") and hasattr(target, "handle"):  # an mcpkit Server
        return ServerConfig(name, "memory", timeout=timeout), target
    if isinstance(target, Mapping):
        entry = {"timeout": timeout, **dict(target)}
        return parse_config({"mcpServers": {name: entry}}).servers[name], None
    if not isinstance(target, str | Sequence):
        raise TypeError(f"cannot proxy {target!r}: give a URL, a command or an mcpServers entry")
    parsed = parse_target(target)
    if isinstance(parsed, HttpTarget):
        return ServerConfig(
            name, "http", url=parsed.url, headers=dict(headers or {}), timeout=timeout
        ), None
    command, *args = parsed.command
    return ServerConfig(
        name, "stdio", command=command, args=tuple(args), env=dict(env or {}), timeout=timeout
    ), None


def proxy(
    target: Any,
    *,
    name: str = "mcpkit-proxy",
    version: str = "0.1.0",
    era: str = "auto",
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    restart: Backoff | None = None,
    startup_timeout: float | None = 5.0,
    **server_options: Any,
) -> Front:
    """A server forwarding to `target` (URL, command, `mcpServers` entry or `Server`).
    `era` forces the backend's era ("modern", "legacy"; default: detected). `headers` (HTTP)
    and `env` (stdio) are the backend's credentials: the front's never go through."""
    front = Front(name, version, startup_timeout=startup_timeout, **server_options)
    config, inprocess = backend_config(target, headers=headers, env=env, timeout=timeout)
    front.add_backend(config, target=inprocess, restart=restart, era=era)
    return front


# The deprecated `Server.proxy` alias calls this (the server does not import the gateway).
Server.proxy_factory = proxy
