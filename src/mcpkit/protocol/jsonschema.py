"""JSON Schema 2020-12 validation on jsonschema-rs, never fetching a network `$ref` (BASE-36)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_SUPPORTED_DIALECTS = {
    DIALECT_2020_12,
    DIALECT_2020_12 + "#",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-07/schema#",
}


class SchemaError(ValueError):
    """A schema that cannot be used: unknown dialect (BASE-34), invalid, or an external `$ref`."""


def _no_remote(uri: str) -> Any:
    raise SchemaError(f"refusing to resolve external $ref {uri!r} (BASE-36)")


def compile_schema(schema: Mapping[str, Any]) -> Any:
    """A validator for `schema` (2020-12 unless `$schema` names another supported dialect)."""
    dialect = schema.get("$schema")
    if dialect is not None and dialect not in _SUPPORTED_DIALECTS:
        raise SchemaError(f"JSON Schema dialect not supported: {dialect!r}")
    import jsonschema_rs  # loaded on first use: `import mcpkit.server` stays light

    try:
        return jsonschema_rs.validator_for(dict(schema), retriever=_no_remote)
    except SchemaError:
        raise
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"invalid JSON Schema: {exc}") from exc


def first_errors(validator: Any, instance: Any, limit: int = 5) -> list[str]:
    """Readable messages for the first few errors (`at /path: message`)."""
    out: list[str] = []
    for err in validator.iter_errors(instance):
        path = "/" + "/".join(str(p) for p in err.instance_path)
        out.append(f"at {path}: {err.message}")
        if len(out) >= limit:
            break
    return out
