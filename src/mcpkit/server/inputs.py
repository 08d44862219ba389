"""Input a handler asks the client for: elicitation, sampling, roots (MRTR; CHECKLIST MRTR-*).

`ctx.elicit(...)`, `ctx.sample(...)` and `ctx.list_roots()` build `InputCall`s; awaiting one (or
`ctx.gather(...)` for several at once) asks the request's `InputChannel`. On the 2026-07-28 wire
that channel is `ModernInputs`: answers come from `inputResponses` and the sealed `requestState`;
a missing answer stops the handler with `InputRequired`, which the dispatcher turns into an
`InputRequiredResult`. Legacy sessions use a channel that sends real requests instead.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import orjson
from pydantic_core import ValidationError

from ..protocol.errors import InvalidParams, MissingRequiredClientCapability
from ..protocol.jsonschema import compile_schema, first_errors

if TYPE_CHECKING:
    from pydantic import BaseModel
from ..protocol.meta import RequestMeta

ElicitAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer. `data` is the parsed model when the schema was a pydantic model."""

    action: ElicitAction
    content: dict[str, Any] | None = None
    data: Any = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class SamplingResult:
    role: str
    content: Any
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(
            b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        )


@dataclass(frozen=True, slots=True)
class Root:
    uri: str
    name: str | None = None


class InputRequired(Exception):
    """Raised out of a handler when answers are missing; carries what to ask for."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


@dataclass(slots=True)
class InputCall:
    """One question for the client. Await it, or pass several to `ctx.gather`."""

    key: str
    capability: dict[str, Any]  # what the request must have declared (MRTR-13)
    request: dict[str, Any]  # {"method": ..., "params": ...}
    parse: Callable[[Any], Any]
    channel: InputChannel | None = field(default=None, repr=False)

    def __await__(self) -> Generator[Any, None, Any]:
        if self.channel is None:
            raise RuntimeError(
                "input can only be requested in tools/call, prompts/get and resources/read"
            )
        results = yield from self.channel.resolve([self]).__await__()
        return results[0]


class InputChannel(Protocol):
    """Where a handler's questions go: MRTR answers, a session's client, a task's updates."""

    @property
    def state(self) -> dict[str, Any] | None:
        """Handler data carried across input rounds (`ctx.state`); None when nothing is."""
        ...

    @property
    def session_id(self) -> str | None:
        """The 2025-11-25 session the questions go over; None where there is none."""
        ...

    async def resolve(self, calls: list[InputCall]) -> list[Any]: ...


def check_capability(meta: RequestMeta, call: InputCall) -> None:
    """MRTR-13 / ELIC-09 / SAMP-04: never ask for what this request did not declare."""
    caps = meta.client_capabilities
    for name, sub in call.capability.items():
        have = caps.get(name)
        if not isinstance(have, dict):
            raise MissingRequiredClientCapability({name: sub})
        for mode in sub:
            if name == "elicitation" and mode == "form" and not ({"form", "url"} & set(have)):
                continue  # `elicitation: {}` means form mode (ELIC-08)
            if not isinstance(have.get(mode), dict):
                raise MissingRequiredClientCapability({name: sub})


class ModernInputs:
    """Answers for one stateless request: earlier rounds (sealed) plus this retry's responses."""

    def __init__(self, meta: RequestMeta, answers: dict[str, Any], state: dict[str, Any]) -> None:
        self.meta = meta
        self.answers = answers
        self.state = state

    #: The stateless wire: no session ties one request to the next.
    session_id: None = None

    async def resolve(self, calls: list[InputCall]) -> list[Any]:
        missing: dict[str, dict[str, Any]] = {}
        out: list[Any] = []
        for call in calls:
            check_capability(self.meta, call)
            if call.key in self.answers:
                out.append(parse_answer(call, self.answers[call.key]))
            else:
                missing[call.key] = call.request
        if missing:
            raise InputRequired(missing)
        return out


def parse_answer(call: InputCall, raw: Any, where: str | None = None) -> Any:
    """The answer to one call, parsed; a malformed one is -32602 (MRTR-23: a protocol error),
    saying `where` the answer came from (default: the request's `inputResponses`)."""
    try:
        return call.parse(raw)
    except (ValueError, TypeError, KeyError, ValidationError) as exc:
        where = where or f"Invalid params: inputResponses[{call.key!r}] is not valid"
        raise InvalidParams(f"{where}: {exc}") from None


# -- building calls ---------------------------------------------------------------------------
def _model_class(schema: Any) -> type[BaseModel] | None:
    if not isinstance(schema, type):
        return None
    from pydantic import BaseModel  # only for a class: a model class means pydantic is loaded

    return schema if issubclass(schema, BaseModel) else None


def elicitation_call(key: str, message: str, schema: type[BaseModel] | dict[str, Any]) -> InputCall:
    model = _model_class(schema)
    requested = (
        _flat_schema(model.model_json_schema()) if model is not None else dict(schema)  # type: ignore[arg-type]
    )
    if requested.get("type") != "object" or not isinstance(requested.get("properties"), dict):
        raise ValueError("an elicitation schema is a flat object of primitive properties (ELIC-12)")
    validator = _validator_for(requested)

    def parse(raw: Any) -> ElicitResult:
        if not isinstance(raw, dict) or raw.get("action") not in ("accept", "decline", "cancel"):
            raise ValueError("expected an ElicitResult with action accept, decline or cancel")
        action = raw["action"]
        content = raw.get("content")
        if action != "accept":
            return ElicitResult(action, content if isinstance(content, dict) else None)
        if not isinstance(content, dict):
            raise ValueError("an accepted form elicitation carries a content object")
        errors = first_errors(validator, content)  # ELIC-31
        if errors:
            raise ValueError("; ".join(errors))
        data = model.model_validate(content) if model is not None else content
        return ElicitResult("accept", content, data)

    params = {"mode": "form", "message": message, "requestedSchema": requested}
    return InputCall(
        key,
        {"elicitation": {"form": {}}},
        {"method": "elicitation/create", "params": params},
        parse,
    )


def url_elicitation_call(key: str, message: str, url: str) -> InputCall:
    def parse(raw: Any) -> ElicitResult:
        if not isinstance(raw, dict) or raw.get("action") not in ("accept", "decline", "cancel"):
            raise ValueError("expected an ElicitResult with action accept, decline or cancel")
        return ElicitResult(raw["action"])  # ELIC-15: accept is consent only

    params = {"mode": "url", "message": message, "url": url}
    return InputCall(
        key, {"elicitation": {"url": {}}}, {"method": "elicitation/create", "params": params}, parse
    )


def sampling_call(key: str, params: dict[str, Any]) -> InputCall:
    def parse(raw: Any) -> SamplingResult:
        if not isinstance(raw, dict):
            raise ValueError("expected a CreateMessageResult object")
        role, content, model = raw.get("role"), raw.get("content"), raw.get("model")
        if role not in ("user", "assistant") or not isinstance(model, str):
            raise ValueError("a CreateMessageResult needs role and model")
        if not isinstance(content, dict | list):
            raise ValueError("a CreateMessageResult needs content")
        stop = raw.get("stopReason")
        return SamplingResult(role, content, model, stop if isinstance(stop, str) else None)

    cap: dict[str, Any] = {"sampling": {"tools": {}} if params.get("tools") else {}}
    return InputCall(key, cap, {"method": "sampling/createMessage", "params": params}, parse)


def roots_call(key: str) -> InputCall:
    def parse(raw: Any) -> list[Root]:
        roots = raw.get("roots") if isinstance(raw, dict) else None
        if not isinstance(roots, list):
            raise ValueError("expected a ListRootsResult with a roots array")
        out = []
        for r in roots:
            if not isinstance(r, dict) or not isinstance(r.get("uri"), str):
                raise ValueError("every root has a uri")
            out.append(Root(r["uri"], r.get("name") if isinstance(r.get("name"), str) else None))
        return out

    return InputCall(key, {"roots": {}}, {"method": "roots/list", "params": {}}, parse)


def call_from_wire(key: str, request: Any) -> InputCall | None:
    """The question `request` (an `inputRequests` entry as sent) asks, rebuilt to check its
    answer where the handler that asked is not (a task running on another instance). None for
    a request this server never sends."""
    if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
        return None
    method, params = request.get("method"), request["params"]
    if method == "elicitation/create" and params.get("mode") == "url":
        return url_elicitation_call(key, str(params.get("message", "")), str(params.get("url")))
    if method == "elicitation/create" and isinstance(params.get("requestedSchema"), dict):
        return elicitation_call(key, str(params.get("message", "")), params["requestedSchema"])
    if method == "sampling/createMessage":
        return sampling_call(key, params)
    if method == "roots/list":
        return roots_call(key)
    return None


def sampling_params(
    messages: str | list[dict[str, Any]], max_tokens: int, **options: Any
) -> dict[str, Any]:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
    names = {
        "system_prompt": "systemPrompt",
        "temperature": "temperature",
        "stop_sequences": "stopSequences",
        "model_preferences": "modelPreferences",
        "include_context": "includeContext",
        "metadata": "metadata",
        "tools": "tools",
        "tool_choice": "toolChoice",
    }
    for name, value in options.items():
        if value is not None:
            params[names[name]] = value
    return params


_VALIDATORS: dict[bytes, Any] = {}


def _validator_for(schema: dict[str, Any]) -> Any:
    """Compiled once per distinct schema: a handler asks the same question on every round."""
    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    validator = _VALIDATORS.get(key)
    if validator is None:
        if len(_VALIDATORS) > 512:
            _VALIDATORS.clear()
        validator = _VALIDATORS[key] = compile_schema(schema)
    return validator


def _flat_schema(schema: dict[str, Any]) -> dict[str, Any]:
    if "$defs" in schema:
        raise ValueError("elicitation schemas cannot nest models (ELIC-12)")
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
