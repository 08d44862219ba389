"""Where the client keeps credentials between runs, keyed by authorization server `issuer`.

One record per issuer (AUTH-DISC-02, AUTH-REG-07): the client identity registered there and the
tokens it issued, per resource. Stores are pluggable (`TokenStore`); `MemoryTokenStore` lives as
long as the process, `FileTokenStore` is a JSON file readable only by its owner, so a restarted
client can refresh without asking the user again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .tokens import ClientIdentity, TokenSet

__all__ = ["FileTokenStore", "IssuerRecord", "MemoryTokenStore", "TokenStore"]


@dataclass(slots=True)
class IssuerRecord:
    """Everything known about one authorization server."""

    client: ClientIdentity | None = None
    tokens: dict[str, TokenSet] = field(default_factory=dict)  # by resource

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client.to_json() if self.client else None,
            "tokens": {r: t.to_json() for r, t in self.tokens.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IssuerRecord:
        client = data.get("client")
        return cls(
            ClientIdentity.from_json(client) if isinstance(client, dict) else None,
            {r: TokenSet.from_json(t) for r, t in (data.get("tokens") or {}).items()},
        )


class TokenStore(Protocol):
    async def load(self, issuer: str) -> IssuerRecord | None: ...

    async def save(self, issuer: str, record: IssuerRecord) -> None: ...


class MemoryTokenStore:
    """Credentials for the life of the process."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}

    async def load(self, issuer: str) -> IssuerRecord | None:
        data = self._records.get(issuer)
        return IssuerRecord.from_json(data) if data is not None else None

    async def save(self, issuer: str, record: IssuerRecord) -> None:
        self._records[issuer] = record.to_json()


class FileTokenStore:
    """A JSON file (mode 0600, replaced atomically) holding one record per issuer."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = asyncio.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-")
        try:
            os.fchmod(fd, 0o600)  # AUTH-SEC-01: refresh tokens stay confidential
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def load(self, issuer: str) -> IssuerRecord | None:
        async with self._lock:
            entry = (await asyncio.to_thread(self._read)).get(issuer)
        return IssuerRecord.from_json(entry) if isinstance(entry, dict) else None

    async def save(self, issuer: str, record: IssuerRecord) -> None:
        async with self._lock:
            data = await asyncio.to_thread(self._read)
            data[issuer] = record.to_json()
            await asyncio.to_thread(self._write, data)
