"""One supervised server link: connect, watch the connection (a stdio process exit, a broken
change stream, a call whose connection failed), and after a loss reconnect with capped
exponential backoff, re-listing the tools and re-checking them against their pins (the states
are in `supervision.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..client import Client, ClientError, Tool
from ..client.errors import AuthorizationError
from ..client.inputs import Elicitation
from ..client.stdio import StdioTransport
from ..protocol.errors import MCPError
from .auth_config import oauth_for
from .backoff import Backoff
from .config import ServerConfig
from .consent import ConsentPolicy
from .deadlines import Clocks
from .features import ClientFeatures as ClientFeatures
from .launch import REFUSED, Launch
from .models.base import ModelAdapter
from .pins import PinChange, PinReview, ToolPins
from .quarantine import held_warnings
from .retry import RetryPolicy
from .sampling import answer_sampling
from .supervision import LinkState, Restarts, StateChange, connection_lost, describe
from .ui import HostUI

if TYPE_CHECKING:
    from ..telemetry.config import Telemetry

log = logging.getLogger("mcpkit.host")

#: How often a stdio server's process is checked while idle (the client has no exit event).
PROCESS_CHECK_S = 0.5


class ServerLink:
    """One configured server, its connection and its supervisor."""

    def __init__(
        self,
        config: ServerConfig,
        ui: HostUI,
        policy: ConsentPolicy,
        model: ModelAdapter | None,
        pins: ToolPins | None,
        *,
        restart: Backoff | None = None,
        retry: RetryPolicy | None = None,
        on_change: Callable[[ServerLink, StateChange], None] | None = None,
        features: ClientFeatures | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.config = config
        self.features = features or ClientFeatures()
        #: The client's telemetry: baggage only where the config allows it (and the host's
        #: `Telemetry(baggage=False)` keeps it from every server).
        self.telemetry = (
            replace(telemetry, baggage=telemetry.baggage and config.forwards_baggage)
            if telemetry is not None
            else False
        )
        self.name = config.name
        self.ui = ui
        self.policy = policy
        self.model = model
        self.pins = pins
        #: Provenance check and sandbox, before each spawn (`launch.py`).
        self.launch = Launch(config, pins.writable if pins is not None else None, ui.warn)
        self.restart = restart or Backoff()
        #: How a failed call to this server is tried again, when that is safe (pipeline `Retry`).
        self.retry = retry or RetryPolicy()
        self.on_change = on_change
        self.client: Client | None = None
        #: The tools offered to the model (a changed, unapproved definition is withheld).
        self.tools: list[Tool] = []
        #: The tools last offered, kept while the link is down (their calls say it restarts).
        self.known: list[Tool] = []
        self.restarts = Restarts()
        self.withheld: list[PinChange] = []
        self.state = LinkState.DISABLED if config.disabled else LinkState.CONNECTING
        #: Why the link is down or degraded (for the user, never the model).
        self.detail: str | None = None
        self.retry_in: float | None = None
        self.stale = False
        #: Set whenever the server announces a tool list change (for callers that must see it).
        self.changed = asyncio.Event()
        self._waiters: list[tuple[frozenset[LinkState], asyncio.Future[LinkState]]] = []
        self._settled = asyncio.Event()
        self._wake = asyncio.Event()
        self._lost: asyncio.Future[str] | None = None
        self._watchers: list[asyncio.Task[None]] = []
        #: Its calls' deadlines (`timing`), paused while the user answers the server.
        self.clocks = Clocks()
        self.timing = self.clocks.timing
        self._task: asyncio.Task[None] | None = None
        #: Ask the server for its log messages at this level (shown through `ui.info`).
        self.log_level: str | None = None

    @property
    def up(self) -> bool:
        return self.state.up

    @property
    def idle(self) -> bool:
        """A lazy server not running: offered from its record, started by `wake` (`lazy.py`)."""
        return self.state is LinkState.IDLE

    async def wake(self) -> None:
        """Start a server that starts on first use (an eager one is started already)."""

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """A call or read runs on this link (a lazy one is not stopped meanwhile)."""
        yield

    @property
    def tried(self) -> bool:
        """The first connection attempt has ended (in success or failure)."""
        return self._settled.is_set()

    # -- state ------------------------------------------------------------------------
    def _set(
        self,
        state: LinkState,
        detail: str | None = None,
        retry_in: float | None = None,
        *,
        announce: bool = True,
    ) -> None:
        self.state, self.detail, self.retry_in = state, detail, retry_in
        change = StateChange(self.name, state, detail, retry_in)
        log.info("%s", change.describe())
        if announce and self.on_change is not None:
            self.on_change(self, change)
        for wanted, waiter in self._waiters:
            if state in wanted and not waiter.done():
                waiter.set_result(state)
        self._waiters = [(w, f) for w, f in self._waiters if not f.done()]

    async def until(self, *states: LinkState) -> LinkState:
        """Wait until the link is in one of `states` (now, or on entering one: a state it
        passes through while the caller sleeps still counts)."""
        if self.state in states:
            return self.state
        waiter: asyncio.Future[LinkState] = asyncio.get_running_loop().create_future()
        self._waiters.append((frozenset(states), waiter))
        return await waiter

    async def settled(self) -> None:
        """Wait until the first connection attempt has succeeded or failed."""
        await self._settled.wait()

    def report(self, exc: BaseException) -> None:
        """A request failed: a lost connection takes the link down, anything else degrades it."""
        if not self.up:
            return
        if connection_lost(exc):
            self.lose(describe(exc))
        elif self.state is LinkState.READY:
            self._set(LinkState.DEGRADED, describe(exc))

    def healthy(self) -> None:
        """A request succeeded."""
        if self.state is LinkState.DEGRADED:
            self._set(LinkState.READY, _count(self.tools))

    def lose(self, reason: str) -> None:
        """The connection is gone: withdraw the tools now; the supervisor reconnects."""
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)
            # Announced by the supervisor a moment later, with the delay before reconnecting.
            self._set(LinkState.DOWN, reason, announce=False)

    # -- supervision ------------------------------------------------------------------
    def start(self) -> None:
        if self.state is not LinkState.DISABLED and self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcpkit-link-{self.name}")
        else:
            self._settled.set()

    def reconnect_now(self) -> None:
        """Skip the rest of the backoff (or drop a live connection and connect again)."""
        if self.up:
            self.lose("reconnect requested")
        self._wake.set()

    def unavailable(self) -> str:
        """The model's answer to a call of this server's tools while the link is not up."""
        if self.known:
            return self.restarts.note(self.name, asyncio.get_running_loop().time())
        return (
            f"The {self.name!r} server is unavailable right now (it is reconnecting); "
            "its tools are back once it is."
        )

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            if self.state is not LinkState.CONNECTING:
                self._set(LinkState.CONNECTING, "reconnecting")
            self.restarts.trying()
            retry, began = True, loop.time()
            try:
                # Its own deadline, spawn to first list: `timeout` bounds each request only.
                async with asyncio.timeout(self.config.start_deadline):
                    await self._open()
            except AuthorizationError as exc:
                reason, retry = f"authorization failed: {describe(exc)}", False
                await self._drop()
            except REFUSED as exc:  # the user must act first
                reason, retry = str(exc), False
                await self._drop()
            except Exception as exc:
                reason = describe(exc)
                if isinstance(exc, TimeoutError) and not isinstance(exc, ClientError):  # ours
                    reason = f"not started within {self.config.start_deadline:g} s (startTimeout)"
                await self._drop()
            else:
                self.restarts.started(loop.time() - began)
                self._set(LinkState.READY, _count(self.tools))
                self._settled.set()
                since = loop.time()
                assert self._lost is not None
                reason = await self._lost
                await self._drop()
                if loop.time() - since > self.restart.cap:
                    failures = 0  # it stayed up a good while: start the backoff afresh
            self._settled.set()
            # Authorization needs the user: no automatic attempts until asked (reconnect_now).
            delay = self.restart.delay(failures) if retry else None
            failures += 1
            self.restarts.failed(None if delay is None else loop.time() + delay)
            self._set(LinkState.DOWN, reason, delay)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            self._wake.clear()

    def _log(self, level: str, data: Any, logger: str | None) -> None:
        text = data if isinstance(data, str) else repr(data)
        source = f"{self.name}/{logger}" if logger else self.name
        self.ui.info(f"{source} {level}: {text}")

    async def _open(self) -> None:
        sampling = (
            self._sample if self.policy.may_sample(self.name) and self.model is not None else None
        )
        client = Client(
            await self.launch.target(),
            elicitation=self._elicit,
            sampling=sampling,
            timeout=self.config.timeout,
            connect_timeout=self.config.start_deadline,
            stderr="capture",
            auth=oauth_for(self.config),
            extensions=self.features.extensions,
            url_elicitation=self.features.url_elicitation,
            trace=self._trace if self.features.trace is not None else None,
            log_level=self.log_level,
            on_log=self._log if self.log_level is not None else None,
            telemetry=self.telemetry,
        )
        self.client = client
        await client.__aenter__()
        await self._list()
        self._lost = asyncio.get_running_loop().create_future()
        caps = client.info.capabilities if client.info is not None else {}
        if (caps.get("tools") or {}).get("listChanged"):
            self._watchers.append(asyncio.create_task(self._listen(client)))
        if isinstance(client.transport, StdioTransport):
            self._watchers.append(asyncio.create_task(self._watch_process(client.transport)))

    def _trace(self, direction: str, message: dict[str, Any]) -> None:
        assert self.features.trace is not None
        self.features.trace(self.name, direction, message)

    async def _drop(self) -> None:
        watchers, self._watchers = self._watchers, []
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        client, self.client = self.client, None
        self.tools, self.withheld = [], []
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        self.launch.release()  # the process is gone: its sandbox's scratch goes too
        if client is not None and isinstance(client.transport, StdioTransport):
            for line in client.transport.stderr_tail:  # the server's noise goes to the log
                log.info("server %r stderr: %s", self.name, line)

    async def _listen(self, client: Client) -> None:
        """The change stream: list_changed marks the catalogue stale; its end is checked."""
        try:
            # The link supervises itself: a broken stream is a lost connection, not re-opened.
            async with client.subscribe(tools=True, reopen=False) as sub:
                async for _ in sub:
                    self.stale = True  # refreshed before the next model round
                    self.changed.set()
        except asyncio.CancelledError:
            raise
        except (MCPError, ClientError) as exc:
            if self.lost_to(exc):
                return
        # The stream ended (the server closed it, or refused it): is the server still there?
        try:
            await client.request("tools/list", use_cache=False)
        except (MCPError, ClientError) as exc:
            self.lost_to(exc)

    def lost_to(self, exc: MCPError | ClientError) -> bool:
        """Whether `exc` means the connection is gone; if so, the link is lost (it says why)."""
        if connection_lost(exc):
            self.lose(describe(exc))
            return True
        return False

    async def _watch_process(self, transport: StdioTransport) -> None:
        """A stdio server without a change stream (or a legacy one, whose stream outlives the
        process) exits silently: check its return code, which costs no I/O."""
        while transport.returncode is None:  # noqa: ASYNC110 - the client exposes no exit event
            await asyncio.sleep(PROCESS_CHECK_S)
        self.lose(f"the process exited with code {transport.returncode}")

    # -- tools ------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Between rounds: re-list (cached per ttlMs unless list_changed) and re-check pins."""
        if not self.up:
            return
        try:
            await self._list()
        except (MCPError, ClientError) as exc:
            self.report(exc)

    async def _list(self) -> None:
        assert self.client is not None
        self._offer(await self.client.list_tools())

    def _offer(self, tools: list[Tool]) -> None:
        """Offer the tools that pass their pins; withhold (and say so) the changed ones."""
        self.stale = False
        if self.pins is None:
            self.tools = self.known = tools
            self.withheld = []
            return
        review = self.review([t.raw for t in tools])
        offered = {t["name"] for t in review.offered}
        self.tools = self.known = [t for t in tools if t.name in offered]

    def review(self, tools: list[dict[str, Any]]) -> PinReview:
        """Check the listed tools against the pins (`withheld` keeps what awaits approval);
        warn once per change (one line for a server seen for the first time)."""
        assert self.pins is not None
        first = not self.pins.approved(self.name)
        review = self.pins.review(self.name, tools, trust_new=self.config.trust_new_tools)
        self.withheld = review.withheld
        for line in held_warnings(self.name, review.fresh, first=first):
            self.ui.warn(line)
        return review

    async def _elicit(self, request: Elicitation) -> dict[str, Any]:
        with self.clocks.paused():
            return await self.ui.elicit(self.name, request)

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """The host's model answers a server's sampling request (policy allowed it)."""
        assert self.model is not None
        with self.clocks.paused():
            return await answer_sampling(self.model, params)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._drop()


def _count(tools: list[Tool]) -> str:
    return f"{len(tools)} tool{'' if len(tools) == 1 else 's'}"
