"""The cassette file: JSON lines, a header first, then one line per message in the order it
crossed the recorder (the client's and the server's, redacted):

    {"cassette": "mcpkit", "version": 1, "recorded": "2026-12-02T01:50:00Z",
     "server": {"command": ["mcp-server-filesystem", "/srv"]}, "env": {"API_TOKEN": "[REDACTED]"},
     "era": "2025-11-25", "serverInfo": {"name": "secure-filesystem-server", "version": "..."},
     "redact": ["authorization", "cookie", ...]}
    {"from": "client", "at": 0.004, "message": {"jsonrpc": "2.0", "id": 1, "method": "initialize", ...}}
    {"from": "server", "at": 0.031, "message": {"jsonrpc": "2.0", "id": 1, "result": {...}}}

`era` and `serverInfo` are learnt from the server's first answers; the writer appends each line
as it goes (a recorder killed outright leaves what it saw) and rewrites the header on close.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson

from ..protocol.versions import META_PROTOCOL_VERSION, META_SERVER_INFO

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "Entry",
    "new_header",
    "read_cassette",
]

FORMAT = "mcpkit"
VERSION = 1
Side = Literal["client", "server"]


class CassetteError(ValueError):
    """A cassette that cannot be read or written; the message names the file (and line)."""


@dataclass(frozen=True, slots=True)
class Entry:
    side: Side
    message: dict[str, Any]


@dataclass(slots=True)
class Cassette:
    header: dict[str, Any]
    entries: list[Entry]
    path: str = "<cassette>"


def new_header(
    server: dict[str, Any], env: dict[str, str], rules: tuple[str, ...]
) -> dict[str, Any]:
    recorded = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "cassette": FORMAT,
        "version": VERSION,
        "recorded": recorded,
        "server": server,
        "env": env,
        "era": None,
        "serverInfo": None,
        "redact": list(rules),
    }


def read_cassette(path: str | os.PathLike[str]) -> Cassette:
    where = str(path)
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise CassetteError(
            f"cannot read the cassette {where}: {exc.strerror or exc}; "
            f"record one with `mcpkit record --out {where} -- <server command>`"
        ) from None
    header = _line(lines[0], where, 1) if lines else {}
    if header.get("cassette") != FORMAT:
        raise CassetteError(
            f'{where} is not an mcpkit cassette (its first line has no "cassette": "mcpkit"); '
            "record one with `mcpkit record`"
        )
    if header.get("version") != VERSION:
        raise CassetteError(
            f"{where}: cassette format {header.get('version')!r}, this mcpkit reads {VERSION}; "
            "upgrade mcpkit or record the server again"
        )
    entries = []
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        item = _line(raw, where, number)
        side, message = item.get("from"), item.get("message")
        if side not in ("client", "server") or not isinstance(message, dict):
            raise CassetteError(
                f'{where}:{number}: an entry has "from" (client or server) and a "message" object'
            )
        entries.append(Entry(side, message))
    return Cassette(header, entries, where)


def _line(raw: bytes, where: str, number: int) -> dict[str, Any]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise CassetteError(f"{where}:{number}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CassetteError(f"{where}:{number}: a line is a JSON object")
    return value


class CassetteWriter:
    """Appends each message as it passes; `close()` rewrites the header with what was learnt."""

    def __init__(self, path: str | os.PathLike[str], header: dict[str, Any]) -> None:
        self.path = Path(path)
        self.header = header
        self.count = 0
        self._started = time.monotonic()
        self._asked: dict[str, tuple[str, Any]] = {}  # client request id → (method, params)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("wb")
        except OSError as exc:
            raise CassetteError(
                f"cannot write the cassette {self.path}: {exc.strerror or exc}; "
                "choose another --out"
            ) from None
        self._write(header)

    def add(
        self, side: Side, message: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._learn(side, message)
        item = {"from": side, "at": round(time.monotonic() - self._started, 3), "message": message}
        if headers:
            item["headers"] = headers  # HTTP only, redacted: what the message came with
        self._write(item)
        self.count += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.close()
        lines = self.path.read_bytes().splitlines(keepends=True)
        lines[0] = orjson.dumps(self.header) + b"\n"
        spare = self.path.with_name(self.path.name + ".tmp")
        spare.write_bytes(b"".join(lines))
        os.replace(spare, self.path)

    def _write(self, item: dict[str, Any]) -> None:
        self._file.write(orjson.dumps(item) + b"\n")
        self._file.flush()

    def _learn(self, side: Side, message: dict[str, Any]) -> None:
        """The era and the server's name, from `initialize` (2025-11-25) or a request of the
        2026-07-28 wire that the server answered."""
        key = orjson.dumps(message.get("id")).decode()
        if side == "client":
            if "method" in message and "id" in message:
                self._asked[key] = (str(message["method"]), message.get("params"))
            return
        if "method" in message or key not in self._asked:
            return
        method, params = self._asked.pop(key)
        result = message.get("result")
        if not isinstance(result, dict):
            return
        meta = result.get("_meta")
        info = result.get("serverInfo") or (
            meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        )
        if isinstance(info, dict) and not self.header.get("serverInfo"):
            self.header["serverInfo"] = info
        if self.header.get("era"):
            return
        if method == "initialize":
            self.header["era"] = result.get("protocolVersion")
        elif isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            self.header["era"] = params["_meta"].get(META_PROTOCOL_VERSION)
