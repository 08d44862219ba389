"""Streamable HTTP request checks that need no I/O: Host and Origin (DNS rebinding).

The mirrored MCP headers are checked by the front door (`mcpkit.server.admission`, with
`mcpkit.protocol.mirroring`)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


class HostPolicy:
    """DNS-rebinding defence (TR-HTTP-02/03): allowed `Host` names and `Origin`s."""

    def __init__(
        self, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None
    ) -> None:
        hosts = list(allowed_hosts) if allowed_hosts is not None else list(LOOPBACK_HOSTS)
        self.any_host = "*" in hosts
        self.hosts = frozenset(h.lower() for h in hosts if h != "*")
        origins = list(allowed_origins) if allowed_origins is not None else []
        self.any_origin = "*" in origins
        self.origins = frozenset(o.lower().rstrip("/") for o in origins if o != "*")
        self._hosts_seen: dict[bytes, bool] = {}  # Host header → allowed, for the few seen

    def raw_host_ok(self, raw: bytes | None) -> bool:
        """`host_ok` of a Host header as it arrived; the answers for recent values are kept
        (a bounded few: the header is the client's to choose)."""
        if raw is None:
            return self.any_host
        ok = self._hosts_seen.get(raw)
        if ok is None:
            ok = self.host_ok(raw.decode("latin-1"))
            if len(self._hosts_seen) >= 64:
                self._hosts_seen.clear()
            self._hosts_seen[raw] = ok
        return ok

    def host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if not host:
            return False
        return _strip_port(host.lower()) in self.hosts

    def origin_ok(self, origin: str) -> bool:
        if self.any_origin:
            return True
        o = origin.lower().rstrip("/")
        if o in self.origins:
            return True
        try:
            parts = urlsplit(o)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False
        return _strip_port(parts.netloc) in self.hosts


def _strip_port(host: str) -> str:
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    name, _, port = host.rpartition(":")
    if name and port.isdigit():
        return name
    return host
