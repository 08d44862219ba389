"""`Context`: what a handler may ask for about the request it is serving."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import MissingRequiredClientCapability
from ..protocol.meta import LOG_LEVEL_RANK, RequestMeta
from .inputs import (
    InputCall,
    InputChannel,
    elicitation_call,
    roots_call,
    sampling_call,
    sampling_params,
    url_elicitation_call,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .admission import ServerRequest
    from .auth.access import AccessToken
    from .server import Server
    from .tasks.run import Launcher
    from .tasks.store import TaskRecord

#: Sends one notification (method, params) on the stream of the request being served.
Emit = Callable[[str, dict[str, Any]], Awaitable[None]]


class Context:
    """Per-request handle given to handlers that declare a parameter annotated `Context`.

    Cancellation reaches the handler as `asyncio.CancelledError` (client disconnect on HTTP,
    `notifications/cancelled` on stdio); let it propagate.

    Input from the client (`elicit`, `sample`, `list_roots`): on the 2026-07-28 wire a missing
    answer stops the handler and the client retries the whole request with the answers, so the
    handler runs again from the top. Work done before the first question runs again on every
    round: keep it cheap and idempotent, or save its outcome in `ctx.state` (a JSON-serialisable
    dict carried, sealed, in `requestState`) and skip it when it is already there.
    """

    __slots__ = (
        "_counters",
        "_emit",
        "_inputs",
        "_last_progress",
        "_launcher",
        "_outbox",
        "_state",
        "_task",
        "auth",
        "meta",
        "method",
        "principal",
        "request_id",
        "server",
    )

    def __init__(
        self,
        server: Server,
        request: ServerRequest,
        inputs: InputChannel | None = None,
        principal: str | None = None,
        auth: AccessToken | None = None,
    ) -> None:
        self.server = server
        self.request_id = request.id
        self.method = request.method
        self.meta: RequestMeta = request.meta
        #: The caller, from the verified token (never from arguments); None unauthenticated.
        self.principal = principal
        #: The verified access token: `auth.scopes`, `auth.claims`, `auth.client_id`.
        self.auth = auth
        self._emit = request.emit
        self._outbox = request.outbox
        self._inputs = inputs
        self._last_progress: float | None = None
        self._counters: dict[str, int] = {}
        self._state: dict[str, Any] | None = None
        self._task: TaskRecord | None = None
        self._launcher: Launcher | None = None

    @property
    def lifespan(self) -> Any:
        """What the server's `lifespan` yielded (a database pool, a client...): shared by every
        request while the server runs. An error if the server has a lifespan that was never
        entered (mounted in an ASGI app that was not given `lifespan=mcp_app.lifespan`)."""
        return lifespan_state(self.server)

    # -- what the client said about itself -------------------------------------------------
    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.meta.client_info

    @property
    def request_meta(self) -> dict[str, Any]:
        return self.meta.raw

    @property
    def session_id(self) -> str | None:
        """The 2025-11-25 session the request came on; None on the stateless 2026-07-28
        wire (and in a task), where nothing ties two requests of one client together."""
        return self._inputs.session_id if self._inputs is not None else None

    def has_capability(self, name: str) -> bool:
        return self.meta.has_capability(name)

    def require_capability(self, *names: str) -> None:
        """Fail the request with -32021 unless it declared every named capability (BASE-49)."""
        missing: dict[str, Any] = {n: {} for n in names if not self.meta.has_capability(n)}
        if missing:
            raise MissingRequiredClientCapability(missing)

    # -- notifications on this request's stream ---------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` if the request carried a `progressToken`.

        Progress must increase (PROG-04): a value not above the last one sent is dropped.
        """
        token = self.meta.progress_token
        if token is None or self._emit is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._emit("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` only when the request asked for logs at this level."""
        wanted = self.meta.log_level
        if wanted is None or self._emit is None:
            return
        rank = LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}")
        if rank < LOG_LEVEL_RANK[wanted]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._emit("notifications/message", params)

    def close_sse_stream(self) -> None:
        """2025-11-25 HTTP sessions (SEP-1699): end this request's SSE connection now; the client
        reconnects with `Last-Event-ID` and receives the rest. The handler keeps running.
        A no-op on stdio and on the 2026-07-28 wire (closing a stream there cancels the request).
        """
        if self._outbox is not None:
            self._outbox.release()

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)

    # -- tasks (the io.modelcontextprotocol/tasks extension) ---------------------------------
    @property
    def task_id(self) -> str | None:
        """The task this call runs as, or None while it is an ordinary request."""
        return self._task.id if self._task is not None else None

    async def run_as_task(self, status_message: str | None = None) -> bool:
        """In a tool registered with `task_start="handler"`: answer the request now with a
        `CreateTaskResult` and go on in the background. True when the call is (now) a task;
        False where it cannot be one (the client did not declare the extension, a legacy
        session): then the handler simply goes on inside the request."""
        launcher, self._launcher = self._launcher, None
        if launcher is not None:
            await launcher.detach(self, status_message)
            await asyncio.sleep(0)  # let the request send its CreateTaskResult first
        return self._task is not None

    def become_task(self, task: TaskRecord, inputs: InputChannel) -> None:
        """Turn the call this context serves into `task` (the tasks machinery does, see
        `mcpkit.server.tasks.run`): `task_id` and `set_status` speak of it, questions go to
        `inputs` (answered through `tasks/update`), and progress and logs stop, as there is no
        request stream any more."""
        self._task = task
        self._inputs = inputs
        self._emit = None

    def offer_task(self, launcher: Launcher | None) -> None:
        """`task_start="handler"`: `run_as_task()` turns the call into a task through `launcher`
        (None: it can no longer)."""
        self._launcher = launcher

    def set_status(self, message: str) -> None:
        """A task's `statusMessage` (what `tasks/get` shows); ignored outside a task."""
        if self._task is not None:
            self._task.set_message(message)

    # -- input from the client (MRTR on 2026-07-28, real requests on legacy sessions) --------
    @property
    def state(self) -> dict[str, Any]:
        """Handler data that survives re-execution across input rounds (sealed, not stored)."""
        if self._state is None:
            carried = self._inputs.state if self._inputs is not None else None
            self._state = carried if carried is not None else {}
        return self._state

    def _key(self, kind: str, key: str | None) -> str:
        if key is not None:
            return key
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{kind}-{n}"

    def _bind(self, call: InputCall) -> InputCall:
        call.channel = self._inputs
        return call

    def elicit(
        self, message: str, schema: type[BaseModel] | dict[str, Any], *, key: str | None = None
    ) -> InputCall:
        """Ask the user to fill a form. Await it: an `ElicitResult` (accept, decline or cancel)."""
        return self._bind(elicitation_call(self._key("elicitation", key), message, schema))

    def elicit_url(self, message: str, url: str, *, key: str | None = None) -> InputCall:
        """Send the user to a URL (secrets, OAuth to third parties: ELIC-02). Await it."""
        return self._bind(url_elicitation_call(self._key("elicitation", key), message, url))

    def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> InputCall:
        """Ask the client's model (sampling, deprecated in 2026-07-28). Await: a `SamplingResult`."""
        params = sampling_params(
            messages,
            max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            include_context=include_context,
            metadata=metadata,
            tools=tools,
            tool_choice=tool_choice,
        )
        return self._bind(sampling_call(self._key("sampling", key), params))

    def list_roots(self, *, key: str | None = None) -> InputCall:
        """The client's roots (deprecated in 2026-07-28). Await: a list of `Root`."""
        return self._bind(roots_call(self._key("roots", key)))

    async def gather(self, *calls: InputCall) -> list[Any]:
        """Ask several questions in one round; answers in the same order."""
        if self._inputs is None:
            raise RuntimeError(
                "input can only be requested in tools/call, prompts/get and resources/read"
            )
        return await self._inputs.resolve(list(calls))


def lifespan_state(server: Server) -> Any:
    """What `server.lifespan` yielded; a `RuntimeError` saying how to enter it when the server
    has one that is not entered (never a silent None)."""
    if server.lifespan_stack is None and server.lifespan is not None:
        raise RuntimeError(
            f"server {server.info.name!r}: its lifespan was never entered; mounted in another "
            "ASGI app, pass lifespan=mcp_app.lifespan to that app (docs/deployment.md), or "
            "await server.startup() before serving it in process"
        )
    return server.lifespan_state
