"""One attempt on the server's link: a retry first waits (within the call's overall deadline)
for a lost link to be back; the link hears how each attempt went (a lost connection takes it
down); `call.unsure` remembers an attempt that may have reached the server. An idle server
(`"start": "lazy"`) is started by the first attempt; a definition found changed then is
withheld as `Pins` would have."""

from __future__ import annotations

import asyncio

from ...client import Client, ClientError
from ...client.errors import ConnectFailed
from ...protocol.errors import MCPError
from ..deadlines import DeadlineExceeded
from ..link import ServerLink
from ..retry import Failure, classify
from ..supervision import LinkState
from .pins import withheld
from .record import Call, Next, Outcome, failed


class NotBack(ConnectFailed):
    """A retry found the server's link still down when its time ran out: never sent."""


class Attempt:
    async def __call__(self, call: Call, next: Next) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        loop = asyncio.get_running_loop()
        if call.attempt == 0:
            call.give_up = loop.time() + link.config.deadline(tool.name).overall
            if link.idle:
                await link.wake()
                if not link.up:
                    return failed(link.unavailable())
                refused = withheld(call)
                if refused is not None:
                    return refused
        else:
            await until_back(link, call.give_up - loop.time())
        call.attempt += 1
        try:
            with link.in_use():
                outcome = await next(call)
        except MCPError:
            link.healthy()
            raise
        except (ClientError, DeadlineExceeded) as exc:
            link.report(exc)
            call.unsure = call.unsure or classify(exc) in (Failure.UNKNOWN, Failure.TIMED_OUT)
            raise
        link.healthy()
        return outcome


async def until_back(link: ServerLink, seconds: float) -> Client:
    """The link's client for a retry: once the link is up again (its supervisor reconnects
    a lost connection), within `seconds`."""
    if not link.up and seconds > 0:
        try:
            async with asyncio.timeout(seconds):
                await link.until(LinkState.READY, LinkState.DEGRADED)
        except TimeoutError:
            pass
    if link.client is None or not link.up:
        raise NotBack(f"the {link.name!r} server was not back in time to repeat the call")
    return link.client
