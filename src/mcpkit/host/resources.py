"""Which resources the model may read, and from which server: those a server listed
(`resources/list`) or linked to in one of its own results (`resource_link`, embedded
`resource`). A URI is read only from the server that offered it, never from another."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from .connections import Fleet, ServerLink
from .lazy import LazyLink, declared


class ResourceIndex:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.offered: dict[str, set[str]] = {}  # server → URIs it listed or linked
        self._listed = False

    async def refresh(self) -> None:
        """Learn the listed resources of every connected server that has any (once)."""
        if self._listed:
            return
        self._listed = True
        for link in self.fleet.links.values():
            if isinstance(link, LazyLink) and link.client is None and link.record is not None:
                for listed in link.record.resources:  # not running: its record's
                    if isinstance(listed.get("uri"), str):
                        self.offered.setdefault(link.name, set()).add(listed["uri"])
                continue
            client = link.client
            if client is None or client.info is None or "resources" not in client.info.capabilities:
                continue
            with contextlib.suppress(MCPError, ClientError):
                for resource in await client.list_resources():
                    self.offered.setdefault(link.name, set()).add(resource.uri)

    def note(self, server: str, blocks: Iterable[dict[str, Any]]) -> None:
        """Remember the URIs a server's result linked to or embedded."""
        for block in blocks:
            uri = block.get("uri") if block.get("type") == "resource_link" else None
            if block.get("type") == "resource":
                uri = (block.get("resource") or {}).get("uri")
            if isinstance(uri, str):
                self.offered.setdefault(server, set()).add(uri)

    def readable(self) -> bool:
        return any(self.offered.values())

    def could_read(self) -> bool:
        """A resource could be read in this conversation: one was offered, or a server
        declares resources (read_resource is then offered from the first round)."""
        links = self.fleet.links.values()
        return self.readable() or any("resources" in declared(link) for link in links)

    def owner(self, uri: str, server: str | None = None) -> ServerLink:
        """The server to read `uri` from; LookupError (a sentence) when none may be used."""
        owners = [name for name, uris in self.offered.items() if uri in uris]
        if server is not None:
            if server not in owners:
                raise LookupError(
                    f"server {server!r} did not list or link {uri}; a resource is read only "
                    "from the server that offered it"
                )
            owners = [server]
        if not owners:
            raise LookupError(
                f"no server listed or linked {uri}; only resources a server offered can be read"
            )
        if len(owners) > 1:
            raise LookupError(f"{uri} was offered by {', '.join(sorted(owners))}: name the server")
        return self.fleet.links[owners[0]]
