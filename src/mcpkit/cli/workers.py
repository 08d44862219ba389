"""`mcpkit run --workers N`: N processes serving one HTTP port, for one host's cores.

Each worker is `mcpkit run` itself, binding the port with SO_REUSEPORT: the kernel spreads
new connections over the workers (Linux balances them; elsewhere use one instance per port
behind a proxy). This process only starts them, restarts one that dies, and passes SIGTERM /
Ctrl-C on: each worker drains (see `serve_http`) and the whole exits when they all have.

What several processes must share, they share as several instances would:
- sealed `requestState`: one key set for every worker (`MCPKIT_STATE_KEYS`, made for this run
  when it is not set), so an MRTR retry may land on any worker;
- tasks, state handles, single-use requestState, change events: through Redis (`--redis` or
  `MCPKIT_REDIS_URL`). A server that keeps any of them in process memory is refused at start
  with the list, rather than failing later on the wrong worker;
- 2025-11-25 sessions cannot move between processes, and a connection may reach any worker:
  the workers serve the stateless 2026-07-28 wire only, and `initialize` gets -32022 saying
  so (for legacy clients, run one instance per port behind a proxy that routes
  `Mcp-Session-Id`: see deploy/nginx).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from .errors import CLIError

#: Set in each worker's environment: "INDEX/COUNT".
WORKER_ENV = "MCPKIT_WORKER"
#: A worker that exits with an error sooner than this after it started failed to start (its
#: server file, its port): all stop. One killed by a signal, or later, is started again.
_EARLY = 2.0

LEGACY_REFUSAL = (
    "2025-11-25 sessions are not served by mcpkit run --workers: a session cannot move "
    "between worker processes; use protocol version 2026-07-28, or run one instance per "
    "port behind a proxy that routes Mcp-Session-Id (see deploy/nginx)"
)


def _end_with_parent() -> None:
    """In a worker, before it runs: SIGTERM (a drain) when the supervisor dies, however it
    dies (Linux PR_SET_PDEATHSIG), so that no worker outlives it."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def worker_index() -> tuple[int, int] | None:
    """(index, count) in a worker started by `serve_workers`, else None."""
    value = os.environ.get(WORKER_ENV)
    if not value:
        return None
    index, _, count = value.partition("/")
    return int(index), int(count)


def check_workers(server: Any, count: int, transport: str, reload: bool) -> None:
    """One line on why these workers cannot serve this server, if they cannot."""
    if transport != "http":
        raise CLIError("--workers needs the HTTP transport: add -T http")
    if reload:
        raise CLIError("--workers and --reload do not go together: choose one")
    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        raise CLIError(
            "--workers spreads connections with SO_REUSEPORT, which only Linux balances; "
            "run one instance per port behind a proxy instead (see deploy/)"
        )
    from ..server import Server
    from ..server.redis_parts import unshared

    if not isinstance(server, Server):
        raise CLIError("--workers serves mcpkit servers only; run one process per port instead")
    parts = unshared(server)
    if parts:
        raise CLIError(
            f"--workers {count}: this server keeps {', '.join(parts)} in process memory, which "
            "workers do not share; give --redis URL (or MCPKIT_REDIS_URL), or run one worker"
        )


def serve_workers(argv: list[str], count: int) -> None:
    """Run `count` workers (`argv` is each one's `mcpkit run` command) until told to stop."""
    env = dict(os.environ)
    from ..server.request_state import KEYS_ENV, generate_key

    env.setdefault(KEYS_ENV, generate_key())  # one key set for every worker (MRTR)
    workers = _Workers(argv, count, env)
    previous = {sig: signal.signal(sig, workers.stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for first in range(count):
            workers.start(first)
        workers.watch()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if workers.failure is not None:
        raise CLIError(workers.failure)
    if workers.stopping and workers.stopping[0] == signal.SIGINT:
        raise KeyboardInterrupt


class _Workers:
    """The worker processes of one `serve_workers`: started, restarted, stopped."""

    def __init__(self, argv: list[str], count: int, env: dict[str, str]) -> None:
        self.argv, self.count, self.env = argv, count, env
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.started: dict[int, float] = {}
        #: The signals told to stop, first first (none while serving).
        self.stopping: list[int] = []
        #: Why serving ended on its own (a worker that exited at start), else None.
        self.failure: str | None = None

    def start(self, index: int) -> None:
        self.procs[index] = subprocess.Popen(
            self.argv,
            env={**self.env, WORKER_ENV: f"{index}/{self.count}"},
            preexec_fn=_end_with_parent,
        )
        self.started[index] = time.monotonic()

    def stop(self, signum: int, _frame: Any) -> None:
        if self.stopping:  # a second signal: no more waiting
            for proc in self.procs.values():
                if proc.poll() is None:
                    proc.kill()
        self.stopping.append(signum)
        for proc in self.procs.values():
            if proc.poll() is None:
                # SIGTERM either way: after the Ctrl-C a terminal sent the whole group, a
                # second SIGINT would make uvicorn skip its drain.
                proc.send_signal(signal.SIGTERM)

    def watch(self) -> None:
        """Wait until every worker has exited, restarting those that die while serving."""
        while self.procs:
            pid, status = os.wait()
            index = next((i for i, p in self.procs.items() if p.pid == pid), None)
            if index is not None:
                self.exited(index, os.waitstatus_to_exitcode(status))

    def exited(self, index: int, code: int) -> None:
        self.procs[index].returncode = code
        if self.stopping:
            del self.procs[index]
        elif code > 0 and time.monotonic() - self.started[index] < _EARLY:
            self.failure = (
                f"worker {index} exited at start (status {code}); run without --workers to see why"
            )
            del self.procs[index]
            self.stop(signal.SIGTERM, None)
        else:
            print(
                f"mcpkit: worker {index} exited (status {code}); restarting it",
                file=sys.stderr,
                flush=True,
            )
            self.start(index)
