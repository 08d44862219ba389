"""Checking `structuredContent` against a tool's `outputSchema` (TOOL-17/18), jsonschema-rs."""

from __future__ import annotations

import logging
from typing import Any

from ..protocol.jsonschema import SchemaError, compile_schema, first_errors
from .errors import InvalidResponse
from .types import Tool

log = logging.getLogger("mcpkit.client")


class OutputValidator:
    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}

    def check(self, tool: Tool, structured: Any) -> None:
        assert tool.output_schema is not None
        key = f"{tool.name}:{id(tool.raw)}"
        validator = self._validators.get(key)
        if validator is None:
            try:
                validator = compile_schema(tool.output_schema)
            except SchemaError as exc:
                log.warning("tool %r: outputSchema not usable (%s); not validating", tool.name, exc)
                validator = False
            self._validators[key] = validator
        if validator is False:
            return
        if structured is None:
            raise InvalidResponse(
                f"tool {tool.name!r} declares an outputSchema but sent no structuredContent"
            )
        errors = first_errors(validator, structured)
        if errors:
            raise InvalidResponse(
                f"tool {tool.name!r}: structuredContent does not match its outputSchema: {'; '.join(errors)}"
            )
