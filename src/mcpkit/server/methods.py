"""The request methods, one function each: `(server, request) -> result`.

Era-neutral (B.1.7): a request admitted on a 2025-11-25 session runs the same code, and its
`era`, `channel` and `outbox` say what differs (input by real requests, no tasks)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from ..protocol.errors import (
    InvalidParams,
    MCPError,
    MethodNotFound,
    PromptNotFound,
    ResourceNotFound,
)
from ..protocol.jsonrpc import Fragment
from ..protocol.tasks import declares_tasks
from .admission import MODERN, ServerRequest
from .auth.access import current_access, require_scopes
from .caching import decode_cursor, encode_cursor
from .context import Context
from .failures import handler_failed
from .inputs import InputRequired, ModernInputs
from .ownership import current_owner
from .registered import Registered
from .resources import ResourceTemplate
from .tasks.run import require_tasks, task_runner

if TYPE_CHECKING:
    from .server import Server

Handler = Callable[["Server", ServerRequest], Awaitable[Any]]
R = TypeVar("R", bound=Registered)
T = TypeVar("T")


def _finish(server: Server, method: str, result: dict[str, Any]) -> dict[str, Any]:
    hint = server.cache.get(method)
    if hint is not None and result.get("resultType") != "task":  # a task's ttlMs is its own
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = hint.scope
    if server.result_meta is not None:
        own = result.get("_meta")
        result["_meta"] = {**server.result_meta, **own} if own else server.result_meta
    return result


async def discover(server: Server, request: ServerRequest) -> Any:
    key = ("server/discover", None)
    cached = server.list_cache.get(key)
    if cached is None:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(server.advertised_versions),
            "capabilities": server.capabilities(),
        }
        if server.instructions:
            result["instructions"] = server.instructions
        cached = server.list_cache[key] = Fragment(
            orjson.dumps(_finish(server, "server/discover", result))
        )
    return cached


def _scoped(server: Server, method: str, items: list[Any]) -> frozenset[str]:
    """Every scope some item of this list requires (empty: the list is the same for all)."""
    key = (method, "scopes")
    scopes = server.list_cache.get(key)
    if scopes is None:
        scopes = server.list_cache[key] = frozenset().union(*(i.scopes for i in items))
    return scopes


#: The paginated list methods: method → (result key, server capability, items).
LISTS: dict[str, tuple[str, str, Callable[[Server], list[Any]]]] = {
    "tools/list": ("tools", "tools", lambda s: list(s.tools.values())),
    "resources/list": ("resources", "resources", lambda s: list(s.resources.values())),
    "resources/templates/list": ("resourceTemplates", "resources", lambda s: list(s.templates)),
    "prompts/list": ("prompts", "prompts", lambda s: list(s.prompts.values())),
}


def list_granted(server: Server, method: str) -> frozenset[str] | None:
    """The caller's scopes that matter for this list; None when the list is the same for all."""
    if not server.any_scopes:
        return None
    scoped = _scoped(server, method, LISTS[method][2](server))
    if not scoped:
        return None
    access = current_access.get()
    return scoped & access.scopes if access is not None else frozenset()


def list_page(
    server: Server, method: str, cursor: str | None, granted: frozenset[str] | None
) -> dict[str, Any]:
    """One page of a list method, without any era's decoration (PAG-*). Items that need scopes
    are shown only to tokens holding them (`granted`)."""
    key, capability, items = LISTS[method]
    if capability not in server.capabilities():
        raise MethodNotFound(f"Method not found: {method} (no {capability} on this server)")
    all_items = items(server)
    if granted is not None:
        all_items = [i for i in all_items if i.scopes <= granted]
    everything = [i.definition for i in all_items]
    start = 0 if cursor is None else decode_cursor(cursor, len(everything))
    size = server.page_size or len(everything) or 1
    result: dict[str, Any] = {key: everything[start : start + size]}
    if start + size < len(everything):
        result["nextCursor"] = encode_cursor(start + size)
    return result


def answer_page(
    server: Server,
    method: str,
    cursor: str | None,
    granted: frozenset[str] | None,
    *,
    private: bool,
) -> dict[str, Any]:
    """One page of a list method as answered, with its caching hint; `private`: the list
    depends on its caller (their token's scopes, or a front's tools listed per caller)."""
    page = list_page(server, method, cursor, granted)
    result = _finish(server, method, {"resultType": "complete", **page})
    if private:
        result["cacheScope"] = "private"  # depends on the caller (CACHE-*)
    return result


def _lister(method: str) -> Handler:
    """A paginated, cacheable list method whose pages are encoded once per change (TOOL-06/07).

    A list whose items need scopes is per caller: answered `cacheScope: "private"` and cached
    per granted scope set."""

    async def handler(server: Server, request: ServerRequest) -> Any:
        cursor = request.params.get("cursor")  # a string or absent (shape admitted)
        granted = list_granted(server, method)
        cache_key = (method, cursor, granted)
        cached = server.list_cache.get(cache_key)
        if cached is not None:
            return cached
        result = answer_page(server, method, cursor, granted, private=granted is not None)
        encoded = Fragment(orjson.dumps(result))
        server.list_cache[cache_key] = encoded
        return encoded

    return handler


async def _with_inputs(
    server: Server,
    request: ServerRequest,
    needs_context: bool,
    run: Callable[[Context | None], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Run a handler that may ask the client for input; on the modern wire, a missing answer
    is `input_required` (MRTR-03)."""
    access = current_access.get()
    principal = access.principal if access is not None else None
    if request.era is not MODERN:
        # A session asks its client with real requests (`channel`, B.1.7); the handler runs
        # once, and requestState/inputResponses mean nothing there.
        ctx = Context(server, request, request.channel, principal, access)
        return _finish(server, request.method, await run(ctx if needs_context else None))
    params = request.params
    owner = current_owner()  # MRTR-10: the state is bound to its caller
    inputs: ModernInputs | None = None
    if "requestState" in params or "inputResponses" in params:
        inputs = await server.mrtr.begin(request.method, params, request.meta, owner)
    if not needs_context:
        return _finish(server, request.method, await run(None))
    if inputs is None:
        inputs = ModernInputs(request.meta, {}, {})
    ctx = Context(server, request, inputs, principal, access)
    try:
        result = await run(ctx)
    except InputRequired as signal:
        return _finish(
            server, "", server.mrtr.input_required(signal, inputs, request.method, params, owner)
        )
    return _finish(server, request.method, result)


def _named(registry: dict[str, R], kind: str, params: dict[str, Any]) -> tuple[R, Any]:
    """The tool or prompt `params` name (admitted: a string), for a caller whose token holds
    its scopes (AUTH-29: 403 insufficient_scope on HTTP), and its arguments (admitted: an
    object, or absent: {}). An unknown name is -32602 naming it."""
    name = params["name"]
    found = registry.get(name)
    if found is None:
        if kind == "prompt":
            raise PromptNotFound(name)
        raise InvalidParams(f"Unknown {kind}: {name}", {"name": name})
    if found.scopes:
        require_scopes(found.scopes)
    arguments = params.get("arguments")
    return found, arguments if arguments is not None else {}


async def tools_call(server: Server, request: ServerRequest) -> Any:
    params = request.params
    tool, arguments = _named(server.tools, "tool", params)  # TOOL-21
    if tool.task is not None and request.era is MODERN:
        # The tasks extension is the modern wire's; a session runs the tool in place.
        if declares_tasks(request.meta.client_capabilities):
            run = task_runner(server.tasks, tool, arguments)
            return await _with_inputs(server, request, True, run)
        if tool.task == "required":
            require_tasks(tool)
    if (
        tool.context_param is None
        and "requestState" not in params
        and "inputResponses" not in params
    ):
        return _finish(server, "tools/call", await tool.call(arguments, None))  # the hot path
    return await _with_inputs(
        server, request, tool.context_param is not None, lambda ctx: tool.call(arguments, ctx)
    )


async def resources_read(server: Server, request: ServerRequest) -> Any:
    uri = request.params["uri"]  # a string (admitted)
    resource = server.resources.get(uri)
    template: ResourceTemplate | None = None
    variables: dict[str, str] = {}
    if resource is None:
        for candidate in server.templates:
            matched = candidate.match(uri)
            if matched is not None:
                template, variables = candidate, matched
                break
        else:
            # RES-13 / RES-15: -32602 with the URI, never an empty `contents`.
            raise ResourceNotFound(uri)

    async def run(ctx: Context | None) -> dict[str, Any]:
        if resource is not None:
            contents = await _guarded(server, "Resource", uri, resource.read(uri, ctx))
        else:
            assert template is not None
            reading = template.read(uri, variables, ctx)
            contents = await _guarded(
                server, "Resource template", template.template.template, reading
            )
        if not contents:
            raise ResourceNotFound(uri)
        return {"resultType": "complete", "contents": contents}

    owner = resource if resource is not None else template
    assert owner is not None
    if owner.scopes:
        require_scopes(owner.scopes)
    return await _with_inputs(server, request, owner.context_param is not None, run)


async def prompts_get(server: Server, request: ServerRequest) -> Any:
    prompt, arguments = _named(server.prompts, "prompt", request.params)  # PRM-08
    return await _with_inputs(
        server,
        request,
        prompt.context_param is not None,
        lambda ctx: _guarded(server, "Prompt", prompt.name, prompt.get(arguments, ctx)),
    )


async def _guarded(server: Server, kind: str, name: str, running: Awaitable[T]) -> T:
    """A handler's unexpected exception as the masked -32603 with its reference id, logged
    with the traceback: the rule tools follow (`failures`)."""
    try:
        return await running
    except (MCPError, InputRequired):
        raise
    except Exception as exc:
        raise handler_failed(kind, name, exc, server.mask_errors) from exc


async def complete(server: Server, request: ServerRequest) -> Any:
    completer = server.completer
    if completer is None:
        raise MethodNotFound("Method not found: completion/complete (no completions)")  # CMP-04
    params = request.params
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParams('Invalid params: "ref" and "argument" objects are required')
    if not isinstance(argument.get("name"), str) or not isinstance(argument.get("value"), str):
        raise InvalidParams('Invalid params: "argument" needs string "name" and "value"')
    kind = ref.get("type")
    if kind == "ref/prompt":
        if ref.get("name") not in server.prompts:
            raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
    elif kind == "ref/resource":
        uri = ref.get("uri")
        if (
            not any(t.template.template == uri for t in server.templates)
            and uri not in server.resources
        ):
            raise InvalidParams(f"Unknown resource or template: {uri}")
    else:
        raise InvalidParams('Invalid params: "ref.type" must be "ref/prompt" or "ref/resource"')
    context = params.get("context")
    context_args = context.get("arguments") if isinstance(context, dict) else None
    try:
        value = completer(ref, argument, context_args or {})
        if inspect.isawaitable(value):
            value = await value
    except MCPError:
        raise
    except Exception as exc:
        name = str(ref.get("name") or ref.get("uri"))
        raise handler_failed("Completion", name, exc, server.mask_errors) from exc
    return _finish(
        server, "completion/complete", {"resultType": "complete", "completion": _completion(value)}
    )


def _completion(value: Any) -> dict[str, Any]:
    """CMP-03: at most 100 values; `total` and `hasMore` when there are more."""
    if isinstance(value, dict) and "values" in value:
        values = [str(v) for v in value["values"]]
        out: dict[str, Any] = {k: v for k, v in value.items() if k in ("total", "hasMore")}
    else:
        values = [str(v) for v in (value or [])]
        out = {}
    if len(values) > 100:
        out.setdefault("total", len(values))
        out["hasMore"] = True
        values = values[:100]
    out["values"] = values
    return out


#: For method handlers outside this module (a gateway's reads): run `run(ctx)` with the
#: request's Context, answering `input_required` when it asks for input (MRTR).
with_inputs = _with_inputs

METHODS: dict[str, Handler] = {
    "server/discover": discover,
    "tools/list": _lister("tools/list"),
    "tools/call": tools_call,
    "resources/list": _lister("resources/list"),
    "resources/templates/list": _lister("resources/templates/list"),
    "resources/read": resources_read,
    "prompts/list": _lister("prompts/list"),
    "prompts/get": prompts_get,
    "completion/complete": complete,
}
