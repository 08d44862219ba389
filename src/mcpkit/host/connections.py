"""The host's MCP servers: one supervised `ServerLink` each, all connected in parallel,
failures isolated, tool catalogues refreshed between model rounds (cache per `ttlMs`,
invalidated by list_changed). `Fleet.start` returns after the start-up deadline with the
servers that are ready; late ones join the catalogue at the next model round. A server that
goes down keeps its tools in the catalogue while it restarts: a call to one is answered with
when to try again (`ServerLink.unavailable`), not "no tool of that name".
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..client import Tool
from .apps import for_model
from .backoff import Backoff
from .config import HostConfig
from .consent import ConsentPolicy
from .conversation import ToolSpec
from .events import EventBus, to_ui
from .lazy import LazyLink
from .link import ClientFeatures, ServerLink
from .models.base import ModelAdapter
from .naming import ToolNames
from .pins import PinChange, ToolPins
from .quarantine import batches, model_note
from .records import RecordStore
from .retry import RetryPolicy

if TYPE_CHECKING:
    from ..telemetry.config import Telemetry
from .schemas import AdaptedSchema, adapt, without
from .screening import Screening
from .screening.catalogue import DefinitionScreen, OtherNames
from .supervision import LinkState, StateChange
from .ui import HostUI

__all__ = ["Fleet", "ServerLink", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    link: ServerLink
    tool: Tool
    schema: AdaptedSchema


class Fleet:
    """All the servers one agent uses."""

    def __init__(
        self,
        config: HostConfig,
        ui: HostUI,
        policy: ConsentPolicy,
        *,
        model: ModelAdapter | None = None,
        pins: ToolPins | None = None,
        servers: list[str] | None = None,
        restart: Backoff | None = None,
        retry: RetryPolicy | None = None,
        features: ClientFeatures | None = None,
        telemetry: Telemetry | None = None,
        records: RecordStore | None = None,
    ) -> None:
        """`records`: where lazy servers' records are kept (None: nowhere, `--no-cache`)."""
        names = servers if servers is not None else list(config.servers)
        unknown = [n for n in names if n not in config.servers]
        if unknown:
            raise ValueError(
                f"unknown servers {unknown}; the configuration has {sorted(config.servers)}"
            )
        options: dict[str, Any] = dict(
            restart=restart,
            retry=retry,
            on_change=self._changed,
            features=features,
            telemetry=telemetry,
        )
        self.links: dict[str, ServerLink] = {
            n: LazyLink(config.servers[n], ui, policy, model, pins, store=records, **options)
            if config.servers[n].start == "lazy"
            else ServerLink(config.servers[n], ui, policy, model, pins, **options)
            for n in names
        }
        self.ui = ui
        #: Servers going down, coming back, joining late (`StateChange`), for whoever listens;
        #: the UI always does.
        self.events = EventBus()
        self.events.subscribe(to_ui(ui))
        self.pins = pins
        self.names = ToolNames([])
        self._targets: dict[str, Target] = {}
        #: What each server offered at the last rebuild (its alias, its tools' definitions).
        self._generation: dict[str, tuple[str | None, list[dict[str, Any]]]] | None = None
        #: How many times the catalogue was rebuilt (a round with no change rebuilds nothing).
        self.rebuilds = 0
        self._built: dict[str, tuple[list[str], list[Screening], dict[str, Target]]] = {}
        self._started = False
        self._shown: dict[str, tuple[LinkState, str | None]] = {}
        #: Content checks of each definition (`host.screening`), reported once each.
        self.screen = DefinitionScreen(ui.warn)

    def _changed(self, link: ServerLink, change: StateChange) -> None:
        """Show the user transitions, not the churn of retries: connection attempts are
        quiet, and a server that stays down for the same reason is reported once."""
        shown = (change.state, change.detail)
        if change.state is LinkState.CONNECTING:
            return
        if self._started and self._shown.get(link.name) != shown:
            self.events.publish(change)
        self._shown[link.name] = shown

    async def start(self, startup_timeout: float | None = None, *, announce: bool = True) -> None:
        """Connect to every enabled server at once; one failure never stops the others.
        Returns when all have answered or failed, or after `startup_timeout` seconds with
        those ready (None: wait for all); the others join when they answer. `announce`: say
        which servers failed or are still starting (`ui.warn`/`ui.info`); a caller with its
        own account (`mcpkit tools`) turns it off."""
        if self.pins is not None and self.pins.error is not None:
            self.ui.warn(
                f"cannot read the tool pin file ({self.pins.error}); pins hold for this session "
                "only, and the file is left as it is until you fix or move it"
            )
        for link in self.links.values():
            link.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(startup_timeout):
                await asyncio.gather(*(link.settled() for link in self.links.values()))
        self._started = True
        for link in self.links.values() if announce else ():
            if link.up or link.state in (LinkState.DISABLED, LinkState.IDLE):
                continue
            if link.tried:  # it failed (and may be trying again by now): say why it failed
                self.ui.warn(f"server {link.name!r} is unavailable: {self.failure(link.name)}")
            else:
                self.ui.info(f"server {link.name!r} is still starting; its tools join when ready")
        self._rebuild()

    def failure(self, name: str) -> str | None:
        """Why the server last went down (kept while it reconnects), or None."""
        state, detail = self._shown.get(name, (None, None))
        link = self.links[name]
        if state is LinkState.DOWN:
            return detail
        return link.detail if link.state is LinkState.DOWN else None

    async def refresh(self) -> None:
        """Between rounds: re-list tools, drop the tools of servers that went down, add those
        of servers that came up."""
        await asyncio.gather(*(link.refresh() for link in self.links.values()))
        self._rebuild()

    async def reconnect(self, name: str) -> None:
        """Reconnect one server now and wait until it is up (or has failed again)."""
        link = self.links[name]
        link.reconnect_now()
        await link.until(LinkState.CONNECTING)
        await link.until(LinkState.READY, LinkState.DEGRADED, LinkState.DOWN)
        self._rebuild()

    async def wait_state(self, name: str, *states: LinkState) -> None:
        await self.links[name].until(*states)

    def _rebuild(self) -> None:
        """The model's names and each tool's target, from what each server offers now. Only
        when that changed since the last rebuild (a server's tools, or whether they are
        offered); a definition is screened again only when it, or the other servers' names
        it mentions or looks like, changed (`OtherNames`): a round with no change costs one
        comparison per server, a server that comes up one screening per tool it brings."""
        # Up, or restarting after it was: the tools it last offered stay known.
        # Idle (a lazy server not running): the tools of its record, or of its last listing.
        up = [link for link in self.links.values() if link.up or link.idle or _restarting(link)]
        # MCP Apps: a tool whose visibility lacks "model" is for its server's app only.
        offered = {
            link.name: [
                t for t in (link.tools if link.up or link.idle else link.known) if for_model(t.raw)
            ]
            for link in up
        }
        generation = {
            link.name: (link.config.alias, [t.raw for t in offered[link.name]]) for link in up
        }
        if generation == self._generation:
            return
        self._generation = generation
        self.rebuilds += 1
        self.names = ToolNames(
            [(name, t.name) for name, tools in offered.items() for t in tools],
            {link.name: link.config.alias for link in up if link.config.alias},  # readable prefixes
        )
        index = OtherNames(
            {
                server: [n for t in tools for n in (t.name, self.names.alias(server, t.name))]
                for server, tools in offered.items()
            }
        )
        self._targets = {}
        for link in up:
            self._targets.update(self._targets_of(link, offered[link.name], index))

    def _targets_of(
        self, link: ServerLink, tools: list[Tool], index: OtherNames
    ) -> dict[str, Target]:
        """One server's tools by the model's names; those of the last rebuild when neither
        their screenings nor their names changed."""
        screened = self.screen.screen(link.name, [t.raw for t in tools], index)
        aliases = [self.names.alias(link.name, t.name) for t in tools]
        last = self._built.get(link.name)
        # equal aliases: as many tools as last time, so the screenings pair one to one
        if last is not None and last[0] == aliases and all(map(operator.is_, last[1], screened)):
            return last[2]
        owned = set(link.config.host_owned)
        targets = {}
        for tool, alias, screening in zip(tools, aliases, screened, strict=True):
            if screening.hidden:
                tool = Tool.from_wire(screening.offered)
            targets[alias] = Target(link, tool, adapt(without(tool.input_schema, owned)))
        self._built[link.name] = (aliases, screened, targets)
        return targets

    def catalog(self) -> list[ToolSpec]:
        return [
            ToolSpec(alias, t.tool.description or t.tool.title or t.tool.name, t.schema.schema)
            for alias, t in self._targets.items()
        ]

    def lookup(self, alias: str) -> Target | None:
        return self._targets.get(alias)

    def notes(self) -> list[str]:
        """What the model should know about tools it no longer (or not yet) has. Never the
        server's own error text: it may carry anything the server printed."""
        out = []
        for link in self.links.values():
            if link.state is LinkState.DISABLED:
                continue
            if link.idle:  # offered from its record; its first call starts it
                continue
            if not link.up and not link.tried:
                out.append(
                    f"The {link.name!r} server is still starting; its tools will be offered "
                    "when it is ready."
                )
            elif _restarting(link):
                out.append(
                    f"The {link.name!r} server is restarting; calls to its tools fail until "
                    "it is back (each says when to try again)."
                )
            elif not link.up:
                out.append(
                    f"The {link.name!r} server is unavailable (the host keeps reconnecting); "
                    "its tools are withdrawn until it is back."
                )
        note = model_note(self.pending_changes())
        return [*out, note] if note else out

    def pending_changes(self) -> list[PinChange]:
        """Changed tool definitions withheld now, awaiting the user's approval."""
        return [c for link in self.links.values() for c in link.withheld]

    def approve(self, change: PinChange) -> bool:
        """Approve one change the user reviewed; the tool is offered from the next round."""
        return self.pins is not None and bool(
            self.pins.approve(change.server, change.tool, change.digest)
        )

    def pins_approved(self, server: str) -> bool:
        """Whether any tool of `server` was ever approved (False: seen for the first time)."""
        return self.pins is None or self.pins.approved(server)

    def questions(self) -> list[list[PinChange]]:
        """What to ask the user about: a new server's whole catalogue at once (`batches`)."""
        return batches(self.pending_changes(), self.pins_approved)

    async def close(self) -> None:
        self._started = False
        await asyncio.gather(*(link.close() for link in self.links.values()))


def _restarting(link: ServerLink) -> bool:
    """Down (or reconnecting) after it was up: its last tools stay known to the model."""
    return not link.up and link.state not in _STOPPED and bool(link.known)


_STOPPED = (LinkState.DISABLED, LinkState.IDLE)
