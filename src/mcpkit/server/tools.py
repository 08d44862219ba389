"""Tool definitions: schema and validation from type hints, calls, results (TOOL-*)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, Unpack, get_type_hints

from pydantic_core import ValidationError

from ..protocol.errors import MCPError
from ..protocol.headers import HeaderParam, find_header_params
from ..protocol.jsonschema import compile_schema, first_errors
from .auth.access import current_access
from .auth.principal import PrincipalMissing
from .context import Context
from .failures import failure_text
from .handlers import invoke
from .inputs import InputRequired
from .registered import Registered, TaskStart, TaskSupport, ToolOptions
from .results import OutputSpec, error_result, tool_result
from .signature import format_validation_error

# TOOL-13: 1-128 characters of A-Z a-z 0-9 _ - .
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


class ToolError(Exception):
    """Raise from a tool to return `isError: true` with exactly this message."""


class ToolTimeout(ToolError):
    """A tool ran past its `timeout`: the handler was cancelled."""


class Tool(Registered):
    """One registered tool. `definition` is the wire object, built once."""

    __slots__ = (
        "_validator",
        "header_params",
        "mask_errors",
        "name",
        "output",
        "principal_params",
        "task",
        "task_start",
        "timeout",
    )

    def __init__(
        self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> None:
        self._entry(name or fn.__name__, options)
        super().__init__(fn, options, model_name=f"{self.name}_arguments")
        self.principal_params = self.signature.principal_params
        self._validator: Any = None
        input_schema = options.get("input_schema")
        if input_schema is not None:
            if input_schema.get("type") != "object":
                raise ValueError(
                    f"tool {self.name!r}: inputSchema must have type 'object' (TOOL-10)"
                )
            self._validator = compile_schema(input_schema)
            schema = input_schema
        else:
            schema = self.signature.schema
        # Rejects invalid x-mcp-header annotations at registration (TR-XMH-03..06).
        self.header_params: list[HeaderParam] = find_header_params(schema)
        try:
            ret = get_type_hints(fn).get("return")
        except Exception:
            ret = None
        self.output = OutputSpec(ret, options.get("structured_output"))
        body: dict[str, Any] = {"inputSchema": schema}
        if self.output.schema is not None:
            body["outputSchema"] = self.output.schema
        annotations = options.get("annotations")
        if annotations is not None:
            body["annotations"] = annotations.to_wire()
        self.definition = self.describe(options, {"name": self.name}, body)

    def _entry(self, name: str, options: ToolOptions, *, own_name: bool = True) -> None:
        """What every tool has, function or given definition: its name and task options and
        timeout, checked (a given definition's name only for being there: it is another
        server's choice, TOOL-13 is a SHOULD)."""
        task = options.get("task")
        task_start = options.get("task_start", "call")
        timeout = options.get("timeout")
        self.name = name
        if not (TOOL_NAME_RE.match(name) if own_name else name):
            raise ValueError(
                f"invalid tool name {name!r}: use 1-128 characters of A-Z a-z 0-9 _ - . (TOOL-13)"
            )
        if task not in (None, "optional", "required"):
            raise ValueError(f"tool {name!r}: task must be 'optional' or 'required'")
        if task_start not in ("call", "handler"):
            raise ValueError(f"tool {name!r}: task_start must be 'call' or 'handler'")
        #: Whether calls may run as tasks (the tasks extension): "optional" runs synchronously
        #: for clients without it, "required" refuses them (-32021, TASK-05).
        self.task: TaskSupport | None = task
        self.task_start: TaskStart = task_start
        if timeout is not None and not timeout > 0:
            raise ValueError(f"tool {name!r}: timeout must be a number of seconds above 0")
        #: Seconds the handler may run before it is cancelled (None: no limit).
        self.timeout = timeout
        #: Unexpected exceptions reach the client as a generic error with a reference id (the
        #: traceback is logged under it). `Server` sets this from its `mask_errors`.
        self.mask_errors = True

    async def call(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        try:
            if self._validator is not None:
                errors = first_errors(self._validator, arguments)
                if errors:
                    return error_result(
                        f"Invalid arguments for tool '{self.name}': {'; '.join(errors)}"
                    )
                kwargs = dict(arguments)
                for param in self.principal_params:
                    if param in kwargs:  # never from arguments, whatever the schema says
                        return error_result(
                            f"Invalid arguments for tool '{self.name}': unexpected argument "
                            f"'{param}'"
                        )
            else:
                kwargs = self.signature.validate(arguments)
            if self.principal_params:
                access = current_access.get()
                for param, marker in self.principal_params.items():
                    kwargs[param] = marker.resolve(access)  # identity from the token only
        except PrincipalMissing as exc:
            return error_result(f"Tool '{self.name}': {exc}")
        except ValidationError as exc:
            return error_result(
                f"Invalid arguments for tool '{self.name}': {format_validation_error(exc)}"
            )
        try:
            if self.timeout is None:
                value = await invoke(self.fn, self.is_async, kwargs, self.context_param, ctx)
            else:
                value = await self._call_with_timeout(kwargs, ctx, self.timeout)
        except (MCPError, InputRequired):
            raise
        except ToolError as exc:
            return error_result(str(exc))
        except Exception as exc:
            return self.failed(exc)
        return tool_result(value, self.output)

    async def _call_with_timeout(
        self, kwargs: dict[str, Any], ctx: Context | None, seconds: float
    ) -> Any:
        """The handler, cancelled after `seconds` (a sync handler's thread cannot be stopped:
        its result is discarded)."""
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                return await invoke(self.fn, self.is_async, kwargs, self.context_param, ctx)
        except TimeoutError:
            if not deadline.expired():
                raise  # the handler's own TimeoutError: an ordinary failure
            raise ToolTimeout(
                f"Tool '{self.name}' did not finish within {seconds:g} s and was stopped. "
                "Try again with a smaller request, or later."
            ) from None

    def failed(self, exc: BaseException) -> dict[str, Any]:
        """The result of an unexpected exception: one log record with the traceback and a
        reference id; the client sees the id (and, unmasked, the exception's text)."""
        return error_result(failure_text("Tool", self.name, exc, self.mask_errors)[0])


class GivenTool(Tool):
    """A tool whose wire definition is given rather than derived from a function: another
    server's tool behind a proxy, a generated one. The definition is served as it is (its
    `x-mcp-header` annotations read, TR-XMH-03..06); nothing here validates arguments or
    shapes results: a subclass answers `call`, with a `Context`. Its name must be there, not
    follow TOOL-13's characters (a backend's name is its own). `options` as `Tool`'s, of
    which `scopes`, `task`, `task_start` and `timeout` apply."""

    __slots__ = ()

    def __init__(
        self,
        definition: dict[str, Any],
        *,
        header_params: list[HeaderParam] | None = None,
        **options: Unpack[ToolOptions],
    ) -> None:
        name = definition.get("name")
        self._entry(name if isinstance(name, str) else "", options, own_name=False)
        self.given(definition, options.get("scopes", ()), "ctx")
        self.principal_params = {}
        if header_params is None:
            schema = definition.get("inputSchema")
            header_params = find_header_params(schema) if isinstance(schema, dict) else []
        self.header_params = header_params

    async def call(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} answers its calls itself")
