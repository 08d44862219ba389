"""Prompts (PRM-*): arguments from the signature, messages from the return value."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Unpack

from pydantic_core import ValidationError

from ..protocol.errors import InvalidParams
from .context import Context
from .handlers import invoke
from .registered import Described, Registered
from .results import prompt_messages
from .signature import format_validation_error


class Prompt(Registered):
    __slots__ = ("name",)

    def __init__(
        self, fn: Callable[..., Any], *, name: str | None = None, **described: Unpack[Described]
    ) -> None:
        self.name = name or fn.__name__
        # PRM-12: prompt argument values are strings on the wire.
        super().__init__(
            fn, described, model_name=f"{self.name}_prompt_arguments", all_strings=True
        )
        self.refuse_principal(f"prompt {self.name!r}: FromPrincipal is for tools; read ctx.auth")
        args = []
        props = self.signature.schema.get("properties", {})
        required = set(self.signature.schema.get("required", []))
        for arg in self.signature.names:
            a: dict[str, Any] = {"name": arg}
            prop_desc = props.get(arg, {}).get("description")
            if prop_desc:
                a["description"] = prop_desc
            if arg in required:
                a["required"] = True
            args.append(a)
        body: dict[str, Any] = {"arguments": args} if args else {}
        self.definition = self.describe(described, {"name": self.name}, body)

    async def get(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        try:
            kwargs = self.signature.validate(arguments)
        except ValidationError as exc:
            # PRM-08: missing required argument → -32602
            raise InvalidParams(
                f"Invalid arguments for prompt '{self.name}': {format_validation_error(exc)}"
            ) from exc
        value = await invoke(self.fn, self.is_async, kwargs, self.context_param, ctx)
        result: dict[str, Any] = {"resultType": "complete", "messages": prompt_messages(value)}
        if self.description:
            result["description"] = self.description
        return result


class GivenPrompt(Prompt):
    """A prompt whose definition is given rather than derived from a function (another
    server's behind a proxy): served as it is; its subclass answers `get(arguments, ctx)`."""

    __slots__ = ()

    def __init__(self, definition: dict[str, Any], *, scopes: Iterable[str] = ()) -> None:
        name = definition.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a prompt definition needs a name: {definition!r:.200}")
        self.name = name
        self.given(definition, scopes, "ctx")

    async def get(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} answers its prompts itself")
