"""What a lazy server said at its last start, kept across runs: its discover answer
(name, capabilities, instructions) and its lists (tools, resources, templates, prompts), with
the narrowest caching hint they carried (CACHE-01).

A record is fresh while `now < saved + ttlMs` (CACHE-07; a result without hints counts as 0:
stale at once, CACHE-06); a stale one is still offered as the server's catalogue, marked so,
until the server's first start refreshes it. A `private` record (CACHE-11) holds the principal
it was listed for and is never served to another. Tool results carry no hints: never stored.

One file per server, named by the server's name and its config identity (a changed command,
url, headers or env is another server, never served this one's record), written atomically;
a private record listed for a principal (a gateway's caller) has a file of its own beside it,
named by a digest of the principal, so that one principal's never replaces another's.
The file holds what the server returned and nothing of the config (its headers or env may
carry secrets: only their digest names the file).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..client.pages import collect, read_page
from ..protocol.errors import MethodNotFound
from .config import ServerConfig
from .paths import state_path, write_atomic

if TYPE_CHECKING:
    from ..client import Client
    from .settings import HostSettings

log = logging.getLogger("mcpkit.host")

#: Bumped when the file's shape changes: an older record is ignored (the server is listed again).
VERSION = 1
#: (method, result key, capability) of each list a record holds.
LISTS = (
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "resources"),
    ("prompts/list", "prompts", "prompts"),
)


@dataclass(frozen=True, slots=True)
class Record:
    #: Wall-clock seconds (`time.time()`) when the lists were received.
    saved: float
    #: The narrowest `ttlMs` of the results held (0: stale at once).
    ttl_ms: int
    #: "public" only when every result held said so.
    scope: str
    #: Each list's items by result key ("tools", "resources", "resourceTemplates", "prompts").
    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Whose record a private one is (None: the host's own user).
    principal: str | None = None
    #: What `server/discover` said (or `initialize`, from a 2025-11-25 server).
    name: str | None = None
    instructions: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.lists.get("tools", [])

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.lists.get("resources", [])

    def fresh(self, now: float) -> bool:
        """CACHE-07: fresh while now < received + ttlMs."""
        return now < self.saved + self.ttl_ms / 1000.0

    def age(self, now: float) -> float:
        return max(0.0, now - self.saved)


def identity(config: ServerConfig) -> str:
    """A digest of what makes a server the same server: how it is reached and with what."""
    salient = [
        config.transport,
        config.command,
        list(config.args),
        sorted(config.env.items()),
        config.cwd,
        config.url,
        sorted(config.headers.items()),
    ]
    return hashlib.sha256(orjson.dumps(salient)).hexdigest()


class RecordStore:
    """The records of one host, one JSON file per server under `directory`."""

    def __init__(self, directory: Path, clock: Callable[[], float] = time.time) -> None:
        self.directory = directory
        self.clock = clock

    def path(self, config: ServerConfig, principal: str | None = None) -> Path:
        """The file of this server's record: its own (`principal` None), or the private one
        of a principal it was listed for (named by a digest of the principal)."""
        own = "" if principal is None else "." + _digest(principal)[:16]
        return self.directory / f"{config.name}.{identity(config)[:24]}{own}.json"

    def load(self, config: ServerConfig, principal: str | None = None) -> Record | None:
        """The record of this server (as configured now) that `principal` may be served: the
        principal's own, else the server's own when it is public or theirs; None otherwise
        (missing, unreadable, of an older shape, another's)."""
        paths = [self.path(config)]
        if principal is not None:
            paths.insert(0, self.path(config, principal))
        for path in paths:
            record = _read(path)
            if record is None:
                continue
            if record.scope != "public" and record.principal != principal:
                continue  # CACHE-11: a private record is its principal's alone
            return record
        return None

    def save(self, config: ServerConfig, record: Record) -> None:
        """Write the record atomically (a reader never sees half a file); failures are logged.
        A private record listed for a principal goes to that principal's file."""
        path = self.path(config, record.principal if record.scope != "public" else None)
        try:
            write_atomic(path, orjson.dumps({"version": VERSION, **asdict(record)}))
        except OSError as exc:
            log.warning("cannot save the record of server %r: %s", config.name, exc)


def store_for(settings: HostSettings) -> RecordStore | None:
    """The store of lazy servers' records the settings ask for (None: `cache` is off)."""
    return RecordStore(settings.records or state_path("servers")) if settings.cache else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read(path: Path) -> Record | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    data.pop("version")
    try:
        return Record(**data)
    except TypeError:
        return None


class _Narrowest:
    """The narrowest hint of the results seen (absent hints: 0 and private, CACHE-06)."""

    def __init__(self) -> None:
        self.ttl_ms, self.public = 2**31, True

    def see(self, result: dict[str, Any]) -> None:
        ttl = result.get("ttlMs")
        self.ttl_ms = min(self.ttl_ms, ttl if type(ttl) is int and ttl >= 0 else 0)
        self.public = self.public and result.get("cacheScope") == "public"


async def snapshot(client: Client, now: float, principal: str | None = None) -> Record:
    """What the connected server says now: discover's answer and every list it serves."""
    info = client.info
    caps = dict(info.capabilities) if info is not None else {}
    hint = _Narrowest()
    if info is not None:
        hint.see(info.raw if info.era == "modern" else {})
    lists: dict[str, list[dict[str, Any]]] = {}
    for method, key, capability in LISTS:
        if capability not in caps:
            continue

        async def page(cursor: str | None, method: str = method, key: str = key) -> Any:
            # Never the client's cache: another principal's answer may be in it (CACHE-11).
            params = {"cursor": cursor} if cursor is not None else None
            result = await client.request(method, params, use_cache=False)
            hint.see(result)
            return read_page(method, key, result)

        with contextlib.suppress(MethodNotFound):  # declared, not served: none
            lists[key] = await collect(method, page)
    scope = "public" if hint.public else "private"
    return Record(
        saved=now,
        ttl_ms=hint.ttl_ms,
        scope=scope,
        principal=None if scope == "public" else principal,
        name=info.name if info is not None else None,
        instructions=info.instructions if info is not None else None,
        capabilities=caps,
        lists=lists,
    )
