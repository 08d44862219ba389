"""RFC 6570 URI templates for resource templates (RES-19), with safe matching (RES-16/18).

Supported expressions: simple string expansion ``{var}`` and reserved expansion
``{+var}``. Other operators, value modifiers (``:n``, ``*``) and variable lists
(``{a,b}``) raise `ValueError` at construction, and so do two expressions with no
literal between them and more than one ``{+var}`` (both ambiguous to match).

Matching is linear in the URI length (no regex backtracking blow-up on hostile URIs).

`UriTemplate.match` is anchored, percent-decodes the captured values and refuses
(returns None) values that could be used for path traversal: a ``..`` segment, a NUL,
a backslash, or -- for ``{var}`` -- a decoded ``/``. Values are decoded exactly once;
handlers must not decode them again.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote, unquote

__all__ = ["UriTemplate"]

_EXPRESSION_RE: Final = re.compile(r"\{([^{}]*)\}")
_TEMPLATE_RE: Final = re.compile(r"\{[^{}]+\}")
# RFC 6570 §2.3: varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded
_VARCHAR: Final = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARNAME_RE: Final = re.compile(rf"{_VARCHAR}+(?:\.{_VARCHAR}+)*")
_PCT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_BAD_PCT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNSUPPORTED_OPERATORS: Final = "#./;?&=,!@|"
# RFC 3986 reserved characters, kept verbatim by {+var}.
_RESERVED: Final = ":/?#[]@!$&'()*+,;="

# A {var} value character, before decoding: no "/", "?", "#" and no raw control
# characters (never valid in a URI, RFC 3986). {+var} only excludes the controls.
_SIMPLE_CHAR: Final = r"[^/?#\x00-\x1f\x7f]"
_RESERVED_VALUE_RE: Final = re.compile(r"[^\x00-\x1f\x7f]+")
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f]")
_NOTHING: Final = re.compile(r"(?!)")  # matches no URI


def _chain(literals: list[str], *, anchored: bool) -> re.Pattern[str]:
    """Regex for ``literals[0] {v} literals[1] {v} ... literals[-1]`` with {var}s only.

    Each variable but an anchored chain's last one ends at the first occurrence of the
    literal after it, inside an atomic group: no backtracking, so matching is linear.
    That loses no match because the next variable (or the {+var} after the chain)
    accepts whatever the earlier end leaves to it; only the split of an ambiguous
    template such as ``{name}.{ext}`` is fixed (``a.b.c`` -> ``a`` / ``b.c``). The
    part after a {+var} is matched by such a chain over the reversed URI.
    """
    parts = [re.escape(literals[0])]
    for i, literal in enumerate(literals[1:], start=1):
        if anchored and i == len(literals) - 1:
            parts.append(f"({_SIMPLE_CHAR}+){re.escape(literal)}")
        else:
            parts.append(f"(?>({_SIMPLE_CHAR}+?){re.escape(literal)})")
    return re.compile("".join(parts))


class UriTemplate:
    """A parsed resource URI template, e.g. ``file:///{+path}`` or ``db://{table}/rows``."""

    __slots__ = (
        "_literals",
        "_prefix",
        "_reserved",
        "_suffix",
        "_template",
        "_variables",
    )

    def __init__(self, template: str, *, matching: bool = True) -> None:
        """`matching=False`: a template known by its text only (as another server listed it,
        RFC 6570 operators mcpkit does not match included), which matches no URI."""
        if not matching:
            self._template = template
            self._literals: tuple[str, ...] = (template,)
            self._variables: tuple[str, ...] = ()
            self._reserved: tuple[bool, ...] = ()
            self._prefix = _NOTHING
            self._suffix: re.Pattern[str] | None = None
            return
        literals: list[str] = []
        variables: list[str] = []
        reserved: list[bool] = []
        pos = 0
        for m in _EXPRESSION_RE.finditer(template):
            literals.append(self._check_literal(template, template[pos : m.start()]))
            if variables and not literals[-1]:
                raise ValueError(
                    f"URI template {template!r}: adjacent expressions are ambiguous; "
                    "separate them with a literal"
                )
            name, is_reserved = self._parse_expression(template, m.group(1))
            if name in variables:
                raise ValueError(f"URI template {template!r} repeats variable {name!r}")
            if is_reserved and any(reserved):
                raise ValueError(f"URI template {template!r}: at most one {{+var}} is supported")
            variables.append(name)
            reserved.append(is_reserved)
            pos = m.end()
        literals.append(self._check_literal(template, template[pos:]))
        self._template = template
        self._literals = tuple(literals)
        self._variables = tuple(variables)
        self._reserved = tuple(reserved)
        # Without a {+var}: one anchored forward chain. With one: a forward chain for the
        # part before it and a chain over the reversed URI for the part after it; the
        # {+var} value is what lies between (the longest possible, like a greedy match).
        if not any(reserved):
            self._prefix = _chain(literals, anchored=True)
            self._suffix = None
        else:
            split = reserved.index(True)
            self._prefix = _chain(literals[: split + 1], anchored=False)
            after = literals[split + 1 :]
            self._suffix = _chain([lit[::-1] for lit in reversed(after)], anchored=False)

    @staticmethod
    def _check_literal(template: str, literal: str) -> str:
        if "{" in literal or "}" in literal:
            raise ValueError(f"URI template {template!r} has an unbalanced brace")
        if _CONTROL_RE.search(literal):
            raise ValueError(f"URI template {template!r} contains a control character")
        return literal

    @staticmethod
    def _parse_expression(template: str, body: str) -> tuple[str, bool]:
        if not body:
            raise ValueError(f"URI template {template!r} has an empty expression '{{}}'")
        is_reserved = body[0] == "+"
        if is_reserved:
            body = body[1:]
        elif body[0] in _UNSUPPORTED_OPERATORS:
            raise ValueError(
                f"URI template {template!r}: operator {body[0]!r} is not supported "
                "(only {var} and {+var})"
            )
        if "," in body:
            raise ValueError(
                f"URI template {template!r}: variable lists like {{{body}}} are not supported"
            )
        if body.endswith("*") or ":" in body:
            raise ValueError(
                f"URI template {template!r}: value modifiers in {{{body}}} are not supported"
            )
        if not _VARNAME_RE.fullmatch(body):
            raise ValueError(f"URI template {template!r}: invalid variable name {body!r}")
        return body, is_reserved

    @property
    def template(self) -> str:
        """The template text as given."""
        return self._template

    @property
    def variables(self) -> tuple[str, ...]:
        """Variable names in order of appearance."""
        return self._variables

    @staticmethod
    def is_template(s: str) -> bool:
        """True when `s` contains at least one ``{...}`` expression."""
        return _TEMPLATE_RE.search(s) is not None

    def match(self, uri: str) -> dict[str, str] | None:
        """Percent-decoded variable values if `uri` matches the whole template, else None.

        Also None when a value is unsafe (RES-16/18): raw control characters, malformed
        percent-encoding or invalid UTF-8, a NUL, a backslash, a ``..`` path segment,
        or (for ``{var}``) a ``/`` after decoding.
        """
        raw_values = self._split_uri(uri)
        if raw_values is None:
            return None
        result: dict[str, str] = {}
        for name, is_reserved, raw in zip(self._variables, self._reserved, raw_values, strict=True):
            value = _decode(raw)
            if value is None or not _is_safe(value, allow_slash=is_reserved):
                return None
            result[name] = value
        return result

    def _split_uri(self, uri: str) -> list[str] | None:
        """The raw (still encoded) variable values, or None if `uri` does not match."""
        if self._suffix is None:
            m = self._prefix.fullmatch(uri)
            return None if m is None else list(m.groups())
        head = self._prefix.match(uri)
        tail = self._suffix.match(uri[::-1])
        if head is None or tail is None:
            return None
        middle = uri[head.end() : len(uri) - tail.end()]
        if head.end() > len(uri) - tail.end() or not _RESERVED_VALUE_RE.fullmatch(middle):
            return None
        after = [value[::-1] for value in reversed(tail.groups())]
        return [*head.groups(), middle, *after]

    def expand(self, **values: str) -> str:
        """Substitute `values` into the template.

        ``{var}`` percent-encodes everything except RFC 3986 unreserved characters;
        ``{+var}`` also keeps reserved characters and existing ``%XX`` triplets.
        Raises `ValueError` for a missing or unknown variable.
        """
        missing = [name for name in self._variables if name not in values]
        if missing:
            raise ValueError(f"URI template {self._template!r} needs values for {missing}")
        unknown = sorted(set(values) - set(self._variables))
        if unknown:
            raise ValueError(f"URI template {self._template!r} has no variables {unknown}")
        parts: list[str] = []
        for literal, name, is_reserved in zip(
            self._literals, self._variables, self._reserved, strict=False
        ):
            parts.append(literal)
            value = values[name]
            parts.append(_encode_reserved(value) if is_reserved else quote(value, safe=""))
        parts.append(self._literals[-1])
        return "".join(parts)

    def __repr__(self) -> str:
        return f"UriTemplate({self._template!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other._template == self._template

    def __hash__(self) -> int:
        return hash(self._template)


def _decode(raw: str) -> str | None:
    if _BAD_PCT_RE.search(raw):
        return None
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None


def _is_safe(value: str, *, allow_slash: bool) -> bool:
    if "\x00" in value or "\\" in value:
        return False
    if "/" in value and not allow_slash:
        return False
    return ".." not in value.split("/")


def _encode_reserved(value: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _PCT_RE.finditer(value):
        out.append(quote(value[pos : m.start()], safe=_RESERVED))
        out.append(m.group(0))
        pos = m.end()
    out.append(quote(value[pos:], safe=_RESERVED))
    return "".join(out)
