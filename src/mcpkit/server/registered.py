"""What tools, resources, resource templates and prompts share: the function and how it is
called, its `Context` parameter, the scopes a caller needs, the description from its docstring,
and the wire definition, built once at registration (never per call)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, TypedDict

from ..protocol.content import Annotations, Icon, ToolAnnotations
from .docstrings import parse_doc
from .handlers import is_async_callable
from .signature import Signature

TaskSupport = Literal["optional", "required"]
TaskStart = Literal["call", "handler"]


class Described(TypedDict, total=False):
    """The options every registration takes (`server.tool`, `server.resource`, `server.prompt`)."""

    #: A human-readable name (the definition's `title`).
    title: str | None
    #: What it is for; by default the function's docstring (its parameter sections removed).
    description: str | None
    icons: list[Icon] | None
    #: The definition's `_meta`.
    meta: dict[str, Any] | None
    #: Only callers whose token holds all of them see and use it (403 otherwise, AUTH-29).
    scopes: Iterable[str]


class ResourceOptions(Described, total=False):
    """What `server.resource` takes besides the URI and the name."""

    #: The contents' MIME type (when the handler's value does not say).
    mime_type: str | None
    annotations: Annotations | None


class ToolOptions(Described, total=False):
    """What `server.tool` takes besides the name."""

    #: The input schema as written (an object schema), instead of the one from the signature.
    input_schema: dict[str, Any] | None
    #: Structured content and an output schema from the return annotation (None: where the
    #: annotation allows it).
    structured_output: bool | None
    annotations: ToolAnnotations | None
    #: "optional": calls may run as tasks for clients that declare the tasks extension;
    #: "required": clients without it are refused (-32021, TASK-05).
    task: TaskSupport | None
    #: "call": a task from the start; "handler": once the handler awaits `ctx.run_as_task()`.
    task_start: TaskStart
    #: Seconds a call may run before it is cancelled and answered as a tool error.
    timeout: float | None


class Registered:
    """The base of `Tool`, `Resource`, `ResourceTemplate` and `Prompt`."""

    __slots__ = (
        "context_param",
        "definition",
        "description",
        "fn",
        "is_async",
        "scopes",
        "signature",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        described: Described,
        *,
        model_name: str,
        all_strings: bool = False,
    ) -> None:
        doc = parse_doc(fn)
        self.fn = fn
        self.is_async = is_async_callable(fn)
        self.scopes = frozenset(described.get("scopes", ()))
        self.signature = Signature(
            fn, model_name=model_name, all_strings=all_strings, param_docs=doc.params
        )
        self.context_param = self.signature.context_param
        description = described.get("description")
        self.description = description if description is not None else doc.description
        self.definition: dict[str, Any] = {}

    def given(
        self, definition: dict[str, Any], scopes: Iterable[str], context_param: str | None
    ) -> None:
        """The fields of an entry whose definition is given rather than derived from a
        function (`GivenTool`, `GivenPrompt`, `GivenResource`, `GivenTemplate`): no function,
        signature or validation of its own; its subclass answers."""
        self.definition = definition
        description = definition.get("description")
        self.description = description if isinstance(description, str) else None
        self.scopes = frozenset(scopes)
        self.context_param = context_param

    def describe(
        self, described: Described, head: dict[str, Any], body: dict[str, Any]
    ) -> dict[str, Any]:
        """The wire definition: `head` (name or URI), title, description, `body` (what the
        kind adds), icons, `_meta`, in that order."""
        d = dict(head)
        title = described.get("title")
        if title:
            d["title"] = title
        if self.description:
            d["description"] = self.description
        d.update(body)
        icons = described.get("icons")
        if icons:
            d["icons"] = [i.to_wire() for i in icons]
        meta = described.get("meta")
        if meta:
            d["_meta"] = meta
        return d

    def refuse_principal(self, message: str) -> None:
        """`FromPrincipal` fills tool parameters only."""
        if self.signature.principal_params:
            raise TypeError(message)
