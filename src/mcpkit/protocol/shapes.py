"""The shape of everything a client may send, per revision, from the published JSON Schemas.

`shapes.json` (beside this module) holds, for each revision served, the `params` schema of
every client request and notification and the definitions they use, taken verbatim from the
revision's `schema.json` (and the tasks extension's, for 2026-07-28) by `tests/test_shapes.py`,
which also proves it current. Validators are compiled once per method on first use
(jsonschema-rs, which validates Python objects in place: well under a microsecond for a
`tools/call`). No I/O after the file is read once.

    shapes_for("2026-07-28").check_request("tools/call", params)   # or InvalidParams
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson

from .errors import InvalidParams

PACKAGED = Path(__file__).with_name("shapes.json")
#: Where the spec's own rules are looser than its schema. `inputResponses`: a map of objects
#: at the door; the entries a handler asked for are parsed when it asks (MRTR-23, -32602),
#: and unknown or extra ones are ignored, whatever they hold (MRTR-25, TASK-13).
OVERRIDES: dict[str, Any] = {
    "InputResponses": {"type": "object", "additionalProperties": {"type": "object"}},
}


@cache
def _published() -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(PACKAGED.read_bytes())
    return data


class Shapes:
    """The client-sent shapes of one revision. Methods it does not define are not checked
    here (the dispatcher answers them -32601)."""

    __slots__ = (
        "_defs",
        "_notifications",
        "_requests",
        "_validators",
        "_with_meta",
        "revision",
    )

    def __init__(self, revision: str) -> None:
        data = _published()[revision]
        self.revision = revision
        self._defs: dict[str, Any] = _lean({**data["$defs"], **OVERRIDES})
        self._requests: dict[str, Any] = data["requests"]
        self._notifications: dict[str, Any] = data["notifications"]
        self._validators: dict[tuple[str, str], Any] = {}
        self._with_meta: dict[str, tuple[Any, bool]] = {}

    def request_known(self, method: str) -> bool:
        return method in self._requests

    def notification_known(self, method: str) -> bool:
        return method in self._notifications

    def request(self, method: str) -> tuple[Any, bool]:
        """`(validator, checks_meta)` for `method`'s params: the compiled validator (None for
        a method this revision does not define), and whether a params object it accepts
        carries a well-formed request `_meta` (RequestMetaObject, required)."""
        found = self._with_meta.get(method)
        if found is None:
            validator = self._validators.get(("r", method)) or self._compile(
                "r", method, self._requests
            )
            if validator is None:
                return None, False
            found = self._with_meta[method] = (validator, self._requires_meta(method))
        return found

    def _requires_meta(self, method: str) -> bool:
        schema = self._requests[method]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            schema = self._defs[ref.rsplit("/", 1)[1]]
        meta = schema.get("properties", {}).get("_meta")
        return "_meta" in schema.get("required", ()) and meta == {
            "$ref": "#/$defs/RequestMetaObject"
        }

    def refuse(self, method: str, params: dict[str, Any]) -> InvalidParams:
        """The -32602 for params its validator refused (the first error, with its path)."""
        validator = self._validators[("r", method)]
        return _invalid(method, validator, params)

    def check_request(self, method: str, params: dict[str, Any] | None) -> None:
        """-32602 unless `params` has the shape this revision gives `method` (when it gives
        one)."""
        validator = self.request(method)[0]
        instance = params if params is not None else {}
        if validator is not None and not validator.is_valid(instance):
            raise _invalid(method, validator, instance)

    def check_notification(self, method: str, params: dict[str, Any] | None) -> None:
        """-32602 unless a notification this revision defines has its shape (unknown
        notifications pass: receivers ignore them)."""
        self._check("n", method, self._notifications, params)

    def _check(
        self, kind: str, method: str, table: dict[str, Any], params: dict[str, Any] | None
    ) -> None:
        validator = self._validators.get((kind, method)) or self._compile(kind, method, table)
        instance = params if params is not None else {}
        if validator is not None and not validator.is_valid(instance):
            raise _invalid(method, validator, instance)

    def _compile(self, kind: str, method: str, table: dict[str, Any]) -> Any:
        schema = table.get(method)
        if schema is None:
            return None
        import jsonschema_rs

        validator = jsonschema_rs.validator_for(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                **schema,
                "$defs": self._defs,
            }
        )
        self._validators[(kind, method)] = validator
        return validator


def _lean(node: Any) -> Any:
    """The same schema without `additionalProperties: {}` / `true` (which allow what an absent
    keyword allows): the validator then need not visit every tool argument."""
    if isinstance(node, dict):
        return {
            k: _lean(v)
            for k, v in node.items()
            if not (k == "additionalProperties" and (v == {} or v is True))
        }
    if isinstance(node, list):
        return [_lean(v) for v in node]
    return node


def _invalid(method: str, validator: Any, instance: Any) -> InvalidParams:
    error = next(iter(validator.iter_errors(instance)), None)
    if error is None:  # pragma: no cover - is_valid and iter_errors agree
        return InvalidParams(f"Invalid params for {method}")
    where = "/".join(str(p) for p in error.instance_path) or "params"
    return InvalidParams(f"Invalid params for {method}: {where}: {error.message}")


@cache
def shapes_for(revision: str) -> Shapes:
    """The shapes of one revision ("2026-07-28" for every modern version served, or
    "2025-11-25" for every session-era one)."""
    return Shapes(revision)
