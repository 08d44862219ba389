"""`async with` for what is opened and must be closed: a client, a session, a listen stream,
the host."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self


class AsyncResource:
    """`async with x:` opens `x` (`await x.open()`) and closes it on the way out, whatever
    happened (`await x.close()`). An `open()` that fails closes what it had opened before the
    error propagates."""

    async def open(self) -> Any:
        return None

    async def close(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        try:
            await self.open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
