"""The rules of `mcpkit lint`: pure checks of tool, prompt and resource-template definitions
(wire dicts, as `tools/list` gives them). No I/O: `check(catalogue)` returns the findings.

Two sources: the tool-design guidance (what makes a model pick and call a tool well) and the
constraints the model APIs enforce on tool definitions, which reject the whole request (every
tool of every server, not just the bad one) when one tool breaks them:

- Anthropic Messages API: tool names match `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` is an
  object schema without `oneOf`/`anyOf`/`allOf` at the top level.
- OpenAI (Chat Completions / Responses): function names match the same pattern; descriptions
  are at most 1024 characters; at most 128 tools per request; `parameters` has type object and
  no `oneOf`/`anyOf`/`allOf`/`enum`/`not` at the top level; an array schema needs `items`.
  Strict mode (`strict: true`) further needs `additionalProperties: false` and every property
  required in each object (reported as info).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..host.screening import screen_definition
from ..protocol.headers import InvalidHeaderAnnotation, find_header_params

__all__ = ["RULES", "Catalogue", "Finding", "Rule", "check"]

Severity = Literal["error", "warning", "info"]
API_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: A host namespaces tool names (`warehouse__get_stock`) within the APIs' 64 characters.
LONG_NAME = 40
MAX_DESCRIPTION = 1024  # OpenAI
MAX_TOOLS = 128  # OpenAI
TOOL_TOKENS = 800
CATALOGUE_TOKENS = 10_000
AMBIGUOUS = frozenset(
    ("id", "data", "value", "val", "input", "output", "obj", "object", "item", "items", "param",
     "params", "arg", "args", "info", "payload", "thing", "stuff", "misc", "other", "temp",
     "tmp", "flag", "type", "key")
)  # fmt: skip
SECRET_RE = re.compile(
    r"pass(word|wd)?|secret|token|api[-_]?key|apikey|auth|credential|private[-_]?key|cookie|"
    r"session",
    re.IGNORECASE,
)
RETURNS_RE = re.compile(
    r"\b(returns?|returned|gives?|lists?|reports?|yields?|answers?|responds?|shows?|tells?)\b",
    re.IGNORECASE,
)
WHEN_RE = re.compile(
    r"\b(use (it|this|this tool)?\s*(when|for|to|if|once|before|after|instead)|when\b|if you|"
    r"call (it|this)|before|after|instead of)",
    re.IGNORECASE,
)
SENTENCE_RE = re.compile(r"[.!?](\s|$)")


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    name: str
    severity: Severity
    summary: str
    fix: str


@dataclass(slots=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    #: "tool 'x'", "prompt 'y'", "resource template 'z'", or "catalogue".
    target: str
    message: str
    fix: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Catalogue:
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)
    #: Tokens of each tool's definition as a host sends it to a model API, and their sum.
    tool_tokens: dict[str, int] = field(default_factory=dict)


RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule("T101", "tool-name-rejected", "error", "the tool name breaks the model APIs' "
             "pattern ^[a-zA-Z0-9_-]{1,64}$", "rename it with only A-Z a-z 0-9 _ - (1-64)"),
        Rule("T102", "tool-name-long", "warning", f"the name is over {LONG_NAME} characters: "
             "with a host's server prefix it can pass the APIs' 64",
             f"shorten it to {LONG_NAME} characters or fewer"),
        Rule("T110", "description-missing", "error", "the tool has no description: a model "
             "cannot tell when to use it", "write 3-4 sentences: what it does, when to use "
             "it, what it returns"),
        Rule("T111", "description-short", "warning", "the description is under 3 sentences",
             "say what it does, when to use it (and when not), and what it returns"),
        Rule("T112", "description-no-return", "warning", "neither the description nor an "
             "outputSchema says what the tool returns",
             "add a sentence such as 'Returns ...' (or declare a return type)"),
        Rule("T113", "description-no-when", "warning", "the description does not say when to "
             "use the tool", "add 'Use it when/to ...' (and when another tool fits better)"),
        Rule("T114", "description-too-long", "error", f"the description is over "
             f"{MAX_DESCRIPTION} characters: OpenAI rejects the request",
             "move detail into parameter descriptions or the server's instructions"),
        Rule("T120", "param-undocumented", "warning", "a parameter has no description",
             "document it (an Args: docstring section, or Field(description=...))"),
        Rule("T121", "param-ambiguous-name", "warning", "a parameter name says little about "
             "what it holds", "name what it is, e.g. order_id rather than id"),
        Rule("T122", "param-secret-header", "error", "a parameter that looks like a secret is "
             "mirrored into an Mcp-Param-* HTTP header (x-mcp-header): proxies and logs see it",
             "remove x-mcp-header from it; take secrets from the token (FromPrincipal)"),
        Rule("T123", "param-header-invalid", "error", "an x-mcp-header annotation breaks "
             "TR-XMH-03..06", "annotate only top-level string/integer/boolean properties with "
             "distinct header tokens"),
        Rule("T130", "schema-not-object", "error", "the input schema is not type 'object'",
             "make the input schema an object of named parameters"),
        Rule("T131", "schema-top-level-combinator", "error", "oneOf/anyOf/allOf/enum/not at "
             "the top of the input schema: Anthropic and OpenAI reject the request",
             "use one object with optional properties and check combinations in the tool"),
        Rule("T132", "schema-array-without-items", "error", "an array schema has no 'items': "
             "OpenAI rejects it", "give every array an items schema (list[str], not list)"),
        Rule("T133", "schema-external-ref", "error", "a $ref points outside the schema: model "
             "APIs do not fetch it", "inline the definition or use a local #/$defs/... ref"),
        Rule("T134", "schema-not-strict", "info", "OpenAI strict mode needs "
             "additionalProperties: false and every property required in each object",
             "make optional parameters nullable and required, and forbid extra properties"),
        Rule("T140", "tool-tokens", "warning", f"the definition is over {TOOL_TOKENS} tokens",
             "shorten the description and simplify the schema"),
        Rule("T150", "hidden-characters", "error", "the definition holds hidden characters "
             "(tag characters, bidirectional controls, zero-width or other invisible ones): hosts "
             "remove them and may hold the tool for approval", "remove them; keep zero-width "
             "joiners only inside emoji and the words of scripts that need them"),
        Rule("T151", "instruction-like-text", "error", "the definition reads like orders to "
             "the model (addressing it, asking for secrets, sending data somewhere, naming "
             "another server's tool, a look-alike name): hosts hold it for the user's approval",
             "say what the tool does and when to use it; leave orders to the model out"),
        Rule("C101", "too-many-tools", "error", f"more than {MAX_TOOLS} tools: OpenAI rejects "
             "the request", "split the server, or expose fewer, broader tools"),
        Rule("C102", "catalogue-tokens", "warning", f"the tool catalogue is over "
             f"{CATALOGUE_TOKENS} tokens, sent with every model request",
             "merge or drop tools; shorten descriptions"),
        Rule("C103", "confusable-names", "warning", "tool names that differ only in case, '-' "
             "or '_'", "give tools names a model cannot confuse"),
        Rule("P110", "prompt-description-missing", "warning", "the prompt has no description",
             "say what the prompt is for"),
        Rule("P120", "prompt-argument-undocumented", "warning", "a prompt argument has no "
             "description", "document it (an Args: docstring section)"),
        Rule("R110", "template-description-missing", "warning", "the resource template has no "
             "description", "say what the resources are and what the variables mean"),
    ]
}  # fmt: skip


def check(catalogue: Catalogue) -> list[Finding]:
    """Every finding, in catalogue order (tools, prompts, templates, then the catalogue)."""
    findings: list[Finding] = []
    for tool in catalogue.tools:
        findings.extend(_tool(tool, catalogue.tool_tokens.get(str(tool.get("name")), 0)))
    for prompt in catalogue.prompts:
        findings.extend(_prompt(prompt))
    for template in catalogue.templates:
        if not _text(template.get("description")):
            findings.append(_found("R110", f"resource template {template.get('uriTemplate')!r}"))
    findings.extend(_catalogue(catalogue))
    return findings


def _found(rule_id: str, target: str, detail: str | None = None) -> Finding:
    rule = RULES[rule_id]
    message = rule.summary if detail is None else f"{rule.summary} ({detail})"
    return Finding(rule.id, rule.name, rule.severity, target, message, rule.fix)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tool(tool: dict[str, Any], tokens: int) -> Iterator[Finding]:
    name = str(tool.get("name"))
    where = f"tool {name!r}"
    if not API_NAME_RE.match(name):
        yield _found("T101", where)
    elif len(name) > LONG_NAME:
        yield _found("T102", where, f"{len(name)} characters")
    yield from _description(tool, where)
    yield from _content(tool, where)
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        yield _found("T130", where)
        return
    yield from _schema(schema, where)
    if tokens > TOOL_TOKENS:
        yield _found("T140", where, f"{tokens} tokens")


def _description(tool: dict[str, Any], where: str) -> Iterator[Finding]:
    text = _text(tool.get("description"))
    if not text:
        yield _found("T110", where)
        return
    if len(text) > MAX_DESCRIPTION:
        yield _found("T114", where, f"{len(text)} characters")
    sentences = len(SENTENCE_RE.findall(text + " "))
    if sentences < 3:
        yield _found("T111", where, f"{sentences} sentence{'s' if sentences != 1 else ''}")
    if "outputSchema" not in tool and not RETURNS_RE.search(text):
        yield _found("T112", where)
    if not WHEN_RE.search(text):
        yield _found("T113", where)


def _content(tool: dict[str, Any], where: str) -> Iterator[Finding]:
    """The host's content checks (`host.screening`): what a host removes (T150) or holds for
    approval (T151). Alone, the server's own definitions: no other server's names."""
    screening = screen_definition(tool)
    for f in screening.findings:
        if f.kind == "hidden-characters":
            yield _found("T150", where, str(f))
    if screening.reason is not None and not screening.hidden:
        yield _found("T151", where, screening.reason)


def _schema(schema: dict[str, Any], where: str) -> Iterator[Finding]:
    top = sorted(k for k in ("oneOf", "anyOf", "allOf", "enum", "not") if k in schema)
    if top:
        yield _found("T131", where, ", ".join(top))
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    for pname, prop in props.items():
        if isinstance(prop, dict) and not _text(prop.get("description")):
            yield _found("T120", where, f"'{pname}'")
        if pname.lower() in AMBIGUOUS or len(pname) < 2:
            yield _found("T121", where, f"'{pname}'")
    try:
        for header in find_header_params(schema):
            if SECRET_RE.search(header.header) or SECRET_RE.search(header.path[-1]):
                yield _found("T122", where, f"'{'.'.join(header.path)}' as {header.header}")
    except InvalidHeaderAnnotation as exc:
        yield _found("T123", where, str(exc))
    for path, node in _walk(schema, ()):
        shown = "/".join(path) or "(root)"
        if _is_array(node) and "items" not in node:
            yield _found("T132", where, f"at {shown}")
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            yield _found("T133", where, ref)
    loose = [
        "/".join(path) or "(root)"
        for path, node in _walk(schema, ())
        if _is_object(node) and not _strict_object(node)
    ]
    if loose:
        yield _found("T134", where, f"at {', '.join(loose)}")


def _is_array(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _strict_object(node: dict[str, Any]) -> bool:
    props = node.get("properties") or {}
    required = set(node.get("required") or ())
    return node.get("additionalProperties") is False and set(props) <= required


def _walk(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every subschema with its path (keywords and property names)."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(value, dict):
                for name, sub in value.items():
                    yield from _walk(sub, (*path, key, name))
        elif key in ("items", "additionalProperties", "not", "contains"):
            yield from _walk(value, (*path, key))
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _walk(sub, (*path, key, str(i)))


def _catalogue(catalogue: Catalogue) -> Iterator[Finding]:
    if len(catalogue.tools) > MAX_TOOLS:
        yield _found("C101", "catalogue", f"{len(catalogue.tools)} tools")
    total = sum(catalogue.tool_tokens.values())
    if total > CATALOGUE_TOKENS:
        yield _found("C102", "catalogue", f"{total} tokens")
    groups: dict[str, list[str]] = {}
    for tool in catalogue.tools:
        name = str(tool.get("name"))
        groups.setdefault(name.lower().replace("-", "_"), []).append(name)
    for names in groups.values():
        if len(names) > 1:
            yield _found("C103", "catalogue", ", ".join(repr(n) for n in names))


def _prompt(prompt: dict[str, Any]) -> Iterator[Finding]:
    where = f"prompt {prompt.get('name')!r}"
    if not _text(prompt.get("description")):
        yield _found("P110", where)
    for arg in prompt.get("arguments") or []:
        if isinstance(arg, dict) and not _text(arg.get("description")):
            yield _found("P120", where, f"'{arg.get('name')}'")
