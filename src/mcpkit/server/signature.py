"""Turn a handler's type-hinted signature into a JSON Schema and a fast validator.

Done once at registration: the per-call path is one pydantic-core validation plus a dict zip.
Signatures of plain `str` / `int` / `float` / `bool` parameters (the common case) get their
pydantic-core schema and JSON Schema built here, exactly as pydantic builds them, without
importing pydantic (about 50 ms and 6 MB at start-up); anything else goes through a pydantic
model, imported on first need.
"""

from __future__ import annotations

import inspect
import math
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic_core import SchemaValidator, ValidationError, core_schema

from .auth.principal import FromPrincipal, principal_marker
from .context import Context

_NONE_TYPES = (type(None), None)
#: Annotations validated by pydantic-core directly: the JSON type and the core schema that
#: pydantic itself generates for them (default config: lax mode).
_SCALARS: dict[Any, tuple[str, Callable[[], Any]]] = {
    str: ("string", core_schema.str_schema),
    int: ("integer", core_schema.int_schema),
    float: ("number", core_schema.float_schema),
    bool: ("boolean", core_schema.bool_schema),
}
Param = tuple[str, Any, Any]  # wire name, annotation, default (... when required)


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
        "names",
        "principal_params",
        "schema",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        model_name: str,
        all_strings: bool = False,
        param_docs: Mapping[str, str] | None = None,
    ) -> None:
        """`param_docs` (from the docstring) describe parameters that carry no
        `Field(description=...)` of their own."""
        sig = inspect.signature(fn)
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:  # unresolvable forward references
            raise TypeError(f"cannot read the type hints of {fn.__qualname__}: {exc}") from exc
        self.context_param: str | None = None
        #: Parameters filled from the caller's token, never from arguments (FromPrincipal).
        self.principal_params: dict[str, FromPrincipal] = {}
        self.has_var_kwargs = False
        params: list[Param] = []
        for name, p in sig.parameters.items():
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
            params.append((name, ann, default))
        self.names = tuple(name for name, _, _ in params)
        if not self.has_var_kwargs and all(_plain(ann, default) for _, ann, default in params):
            self._validate, self.schema = scalar_signature(params)
        else:
            self._validate, self.schema = model_signature(model_name, params, self.has_var_kwargs)
        if param_docs:
            _describe(self.schema, param_docs)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments; raises pydantic-core's ValidationError."""
        return self._validate(arguments)


def _describe(schema: dict[str, Any], docs: Mapping[str, str]) -> None:
    """Add each documented parameter's `description`; an explicit one wins."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return
    for name, text in docs.items():
        prop = props.get(name)
        if isinstance(prop, dict) and "description" not in prop:
            prop["description"] = text


def _plain(annotation: Any, default: Any) -> bool:
    """A `str`/`int`/`float`/`bool` parameter whose default (if any) has exactly that type."""
    if annotation not in _SCALARS or type(annotation) is not type:
        return False
    if default is ...:
        return True
    if type(default) is not annotation:
        return False
    return not (type(default) is float and not math.isfinite(default))


def _pydantic_title(name: str) -> str:
    return (
        name.title().replace("_", " ").strip()
    )  # pydantic's GenerateJsonSchema.get_title_from_name


def scalar_signature(
    params: list[Param],
) -> tuple[Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any]]:
    """The validator and JSON Schema pydantic would give a model of these fields, built directly."""
    fields: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, ann, default in params:
        json_type, make = _SCALARS[ann]
        inner = make()
        prop: dict[str, Any] = {}
        if default is ...:
            fields[name] = core_schema.typed_dict_field(inner, required=True)
            required.append(name)
        else:
            fields[name] = core_schema.typed_dict_field(
                core_schema.with_default_schema(inner, default=default), required=False
            )
            prop["default"] = default
        title = _pydantic_title(name)
        if title != _auto_title(name):  # as `_clean_schema` leaves it
            prop["title"] = title
        prop["type"] = json_type
        properties[name] = prop
    validator = SchemaValidator(core_schema.typed_dict_schema(fields, extra_behavior="forbid"))
    schema: dict[str, Any] = {"additionalProperties": False}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    schema["type"] = "object"
    return validator.validate_python, schema


def model_signature(
    model_name: str, params: list[Param], var_kwargs: bool
) -> tuple[Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any]]:
    """Any other signature: a pydantic model (pydantic is imported here, on first need)."""
    from pydantic import ConfigDict, Field, create_model

    # Internal field names never clash with BaseModel attributes; the alias is the wire name.
    fields: dict[str, Any] = {
        f"a{i}": (Annotated[ann, Field(alias=name)], default)
        for i, (name, ann, default) in enumerate(params)
    }
    config = ConfigDict(extra="allow" if var_kwargs else "forbid")
    model = create_model(model_name, __config__=config, **fields)
    validate_model = model.__pydantic_validator__.validate_python
    names = [name for name, _, _ in params]

    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        inst = validate_model(arguments)
        kwargs = dict(zip(names, inst.__dict__.values(), strict=False))
        if var_kwargs and inst.__pydantic_extra__:
            kwargs.update(inst.__pydantic_extra__)
        return kwargs

    return validate, _clean_schema(model.model_json_schema(by_alias=True), names)


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
