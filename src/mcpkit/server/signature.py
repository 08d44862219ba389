"""Turn a handler's type-hinted signature into a JSON Schema and a fast validator.

Done once at registration: the per-call path is one pydantic-core validation plus a dict zip.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..auth.principal import FromPrincipal, principal_marker
from .context import Context

_NONE_TYPES = (type(None), None)


def _is_context(annotation: Any) -> bool:
    """`Context`, `Annotated[Context, ...]` or `Context | None`."""
    annotation = strip_annotated(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a not in _NONE_TYPES]
        return len(args) == 1 and _is_context(args[0])
    return isinstance(annotation, type) and issubclass(annotation, Context)


class Signature:
    """The arguments a handler takes over the wire (everything except its `Context`)."""

    __slots__ = (
        "_validate",
        "context_param",
        "has_var_kwargs",
        "model",
        "names",
        "principal_params",
        "schema",
    )

    def __init__(
        self, fn: Callable[..., Any], *, model_name: str, all_strings: bool = False
    ) -> None:
        sig = inspect.signature(fn)
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:  # unresolvable forward references
            raise TypeError(f"cannot read the type hints of {fn.__qualname__}: {exc}") from exc
        self.context_param: str | None = None
        #: Parameters filled from the caller's token, never from arguments (FromPrincipal).
        self.principal_params: dict[str, FromPrincipal] = {}
        self.has_var_kwargs = False
        fields: dict[str, Any] = {}
        names: list[str] = []
        for i, (name, p) in enumerate(sig.parameters.items()):
            ann = hints.get(name, str if all_strings else Any)
            if _is_context(ann):
                self.context_param = name
                continue
            marker = principal_marker(ann)
            if marker is not None:
                self.principal_params[name] = marker
                continue
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                self.has_var_kwargs = True
                continue
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                raise TypeError(f"{fn.__qualname__}: *args cannot be passed over MCP")
            default = ... if p.default is inspect.Parameter.empty else p.default
            # Internal field names never clash with BaseModel attributes; the alias is the wire name.
            fields[f"a{i}"] = (Annotated[ann, Field(alias=name)], default)
            names.append(name)
        config = ConfigDict(extra="allow" if self.has_var_kwargs else "forbid")
        self.model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
        self.names = tuple(names)
        self._validate = self.model.__pydantic_validator__.validate_python
        self.schema = _clean_schema(self.model.model_json_schema(by_alias=True), names)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments; raises pydantic's ValidationError."""
        inst = self._validate(arguments)
        kwargs = dict(zip(self.names, inst.__dict__.values(), strict=False))
        if self.has_var_kwargs and inst.__pydantic_extra__:
            kwargs.update(inst.__pydantic_extra__)
        return kwargs


def _auto_title(name: str) -> str:
    return name.replace("_", " ").title()


def _clean_schema(schema: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """Drop pydantic's auto titles; `X | None = None` becomes plain optional `X`."""
    schema.pop("title", None)
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            if not isinstance(prop, dict):
                continue
            if prop.get("title") == _auto_title(name):
                del prop["title"]
            any_of = prop.get("anyOf")
            if (
                "default" in prop
                and prop["default"] is None
                and isinstance(any_of, list)
                and len(any_of) == 2
                and {"type": "null"} in any_of
            ):
                (other,) = [s for s in any_of if s != {"type": "null"}]
                del prop["anyOf"]
                del prop["default"]
                for k, v in other.items():
                    prop.setdefault(k, v)
    if schema.get("type") == "object" and "properties" in schema and not schema["properties"]:
        del schema["properties"]
    schema.setdefault("type", "object")
    return schema


def format_validation_error(exc: ValidationError) -> str:
    """One line naming each bad argument and what to change."""
    parts: list[str] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ()))
        kind = err.get("type")
        if kind == "missing":
            parts.append(f"missing required argument '{loc}'")
        elif kind == "extra_forbidden":
            parts.append(f"unexpected argument '{loc}'")
        else:
            got = err.get("input")
            shown = repr(got)
            if len(shown) > 60:
                shown = shown[:57] + "..."
            parts.append(f"'{loc}': {err.get('msg')} (got {shown})")
    return "; ".join(parts)


def is_optional(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return any(a in _NONE_TYPES for a in get_args(annotation))
    return False


def strip_annotated(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


__all__ = ["Signature", "format_validation_error", "is_optional", "strip_annotated"]
