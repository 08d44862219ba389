"""The one transport factory: what the user passed to `Client` or `ClientSession` becomes a
transport here, and nowhere else. No protocol logic."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .stdio import StderrMode
from .target import HttpTarget, parse_target
from .transport import NotificationHandler, Transport, TransportSource

__all__ = ["Era", "make_transport"]

Era = Literal["modern", "legacy"]


def make_transport(
    target: Any,
    *,
    on_notification: NotificationHandler | None = None,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrMode = "inherit",
    auth: Any = None,
) -> Transport:
    """A URL → `HttpTransport` (with `headers` and `auth`); a command, as a string or an argv
    list → `StdioTransport` (with `env`, `cwd`, `stderr`); an `mcpServers` entry
    (`{"command", "args", "env", "cwd", "name"}` or `{"type": "http", "url", "headers"}`) → either,
    the arguments given here winning over the entry's; an in-process mcpkit `Server` → its
    memory transport; a ready transport (anything implementing `Transport`) as it is."""
    if isinstance(target, TransportSource):  # an mcpkit Server: it makes the transport
        return target.memory_transport(on_notification)
    if isinstance(target, Transport):
        deliver = target.capabilities.notifications
        if deliver is not None and on_notification is not None:
            deliver(on_notification)  # the client's handler, besides the transport's own
        return target
    url: str | None = None
    command: Sequence[str] = ()
    label: str | None = None
    if isinstance(target, Mapping):
        if "url" in target:
            if target.get("type", "http") not in ("http", "streamable-http", "streamableHttp"):
                raise ValueError(f"unsupported server type {target.get('type')!r} (use 'http')")
            url = str(target["url"])
            headers = {**dict(target.get("headers") or {}), **dict(headers or {})}
        else:
            name = target.get("command")
            if not isinstance(name, str) or not name:
                raise ValueError("an mcpServers entry needs 'command' (stdio) or 'url' (http)")
            command = [name, *(str(a) for a in target.get("args") or [])]
            env = {**dict(target.get("env") or {}), **dict(env or {})} or None
            cwd = target.get("cwd") or cwd
            label = target.get("name")  # the entry's name in its mcpServers, when given
    elif isinstance(target, str | Sequence):
        parsed = parse_target(target)
        if isinstance(parsed, HttpTarget):
            url = parsed.url
        else:
            command = parsed.command
    else:
        raise TypeError(
            f"cannot connect to a {type(target).__name__}: pass a URL, a command, an mcpServers "
            f"entry, a Server or a transport (one with capabilities, start, request and close; "
            f"see 'Writing a transport' in docs/client.md)"
        )
    if url is not None:
        from .http import HttpTransport  # aiohttp is imported only when needed

        return HttpTransport(url, headers=headers, on_notification=on_notification, auth=auth)
    return _stdio(target, command, env, cwd, stderr, on_notification, label)


def _stdio(
    target: Any,
    command: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    stderr: StderrMode,
    on_notification: NotificationHandler | None,
    label: str | None,
) -> Transport:
    """The stdio transport; an entry's `"inheritEnv": false` makes its `env` the whole one."""
    from .stdio import StdioTransport

    transport = StdioTransport(
        command, env=env, cwd=cwd, stderr=stderr, on_notification=on_notification, label=label
    )
    transport.inherit_env = not (isinstance(target, Mapping) and target.get("inheritEnv") is False)
    return transport
