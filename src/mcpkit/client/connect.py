"""Turn what the user passed to `Client` into a transport. No protocol logic."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .target import HttpTarget, parse_target
from .transport import NotificationHandler, Transport

Era = Literal["modern", "legacy"]


def era_cache_key(target: Any) -> str:
    return repr(target)


def make_client_transport(
    target: Any,
    *,
    headers: Mapping[str, str] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
    stderr: Literal["inherit", "capture", "discard"],
    on_notification: NotificationHandler,
    auth: Any = None,
) -> tuple[Transport, str]:
    """A URL, a command (string or argv), an `mcpServers` entry, an in-process `Server`, or a
    ready transport → (transport, key under which the detected era is cached)."""
    if hasattr(target, "memory_transport"):  # an mcpkit Server: it makes the transport
        return target.memory_transport(on_notification), f"memory:{id(target)}"
    if hasattr(target, "request") and hasattr(target, "start"):
        return target, f"transport:{id(target)}"
    if isinstance(target, Mapping):
        return _from_entry(target, headers, env, cwd, stderr, on_notification, auth)
    parsed = parse_target(target)
    if isinstance(parsed, HttpTarget):
        from .http import HttpTransport

        return HttpTransport(
            parsed.url, headers=headers, on_notification=on_notification, auth=auth
        ), parsed.url
    from .stdio import StdioTransport

    transport = StdioTransport(
        parsed.command, env=env, cwd=cwd, stderr=stderr, on_notification=on_notification
    )
    return transport, "stdio:" + " ".join(parsed.command)


def _from_entry(
    entry: Mapping[str, Any],
    headers: Mapping[str, str] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
    stderr: Literal["inherit", "capture", "discard"],
    on_notification: NotificationHandler,
    auth: Any = None,
) -> tuple[Transport, str]:
    """An `mcpServers` entry: `{"command", "args", "env", "cwd"}` or `{"type": "http", "url", "headers"}`."""
    if "url" in entry:
        if entry.get("type", "http") not in ("http", "streamable-http", "streamableHttp"):
            raise ValueError(f"unsupported server type {entry.get('type')!r} (use 'http')")
        from .http import HttpTransport

        merged = {**dict(entry.get("headers") or {}), **dict(headers or {})}
        url = str(entry["url"])
        return HttpTransport(url, headers=merged, on_notification=on_notification, auth=auth), url
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError("an mcpServers entry needs 'command' (stdio) or 'url' (http)")
    args = [str(a) for a in entry.get("args") or []]
    from .stdio import StdioTransport

    merged_env = {**dict(entry.get("env") or {}), **dict(env or {})}
    transport = StdioTransport(
        [command, *args],
        env=merged_env or None,
        cwd=entry.get("cwd") or cwd,
        stderr=stderr,
        on_notification=on_notification,
    )
    return transport, "stdio:" + " ".join([command, *args])
