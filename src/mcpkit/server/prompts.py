"""Prompts (PRM-*): arguments from the signature, messages from the return value."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic_core import ValidationError

from ..protocol.content import Icon
from ..protocol.errors import InvalidParams
from .context import Context
from .docstrings import parse_doc
from .handlers import invoke, is_async_callable
from .results import prompt_messages
from .signature import Signature, format_validation_error


class Prompt:
    __slots__ = (
        "context_param",
        "definition",
        "description",
        "fn",
        "is_async",
        "name",
        "scopes",
        "signature",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        self.name = name or fn.__name__
        self.scopes = frozenset(scopes)
        self.fn = fn
        self.is_async = is_async_callable(fn)
        # PRM-12: prompt argument values are strings on the wire.
        doc = parse_doc(fn)
        self.signature = Signature(
            fn,
            model_name=f"{self.name}_prompt_arguments",
            all_strings=True,
            param_docs=doc.params,
        )
        self.context_param = self.signature.context_param
        if self.signature.principal_params:
            raise TypeError(f"prompt {self.name!r}: FromPrincipal is for tools; read ctx.auth")
        self.description = description if description is not None else doc.description
        d: dict[str, Any] = {"name": self.name}
        if title:
            d["title"] = title
        if self.description:
            d["description"] = self.description
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
        if args:
            d["arguments"] = args
        if icons:
            d["icons"] = [i.to_wire() for i in icons]
        if meta:
            d["_meta"] = meta
        self.definition: dict[str, Any] = d

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
