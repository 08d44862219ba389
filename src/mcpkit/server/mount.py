"""`Server.mount(other, prefix)`: another server's tools, prompts, resources, templates and
completions served as this one's, under a prefix (the naming rules are in `prefixes.py`).

The mounted server stays itself: its registrations are copied into the parent with prefixed
names and URIs, and copied again whenever it changes (a tool added later, a resource removed),
so list_changed reaches the parent's listeners; its `notify_resource_updated` reaches them
with the prefixed URI. Calls run the mounted server's handlers in the parent's request: the
parent's middleware, auth, MRTR, tasks and both eras apply; the mounted server's own
middleware does not run. `ctx.lifespan` in a mounted handler is the mounted server's, whose
lifespan the parent enters and exits with its own.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from .prefixes import (
    check_prefix,
    prefix_name,
    prefix_uri,
    split_uri,
    unprefix_name,
    uri_prefix,
    with_ui_uri,
)
from .registered import Registered
from .subscriptions import RESOURCE_UPDATED
from .uri_template import UriTemplate

if TYPE_CHECKING:
    from .registrations import Completer
    from .server import Server

R = TypeVar("R", bound=Registered)
_LISTS = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
)


class Mount:
    """`child` inside `parent` under `prefix`."""

    def __init__(self, parent: Server, child: Server, prefix: str) -> None:
        if child is parent:
            raise ValueError("a server cannot mount itself")
        self.parent = parent
        self.child = child
        self.prefix = check_prefix(prefix)
        self.scheme = uri_prefix(prefix)
        self._tools: list[str] = []
        self._prompts: list[str] = []
        self._resources: list[str] = []
        self._templates: list[Any] = []

    def attach(self) -> None:
        taken = {uri_prefix(m.prefix) for m in self.parent.mounts}
        if self.scheme in taken:
            raise ValueError(f"a server is already mounted under the prefix {self.prefix!r}")
        for method in _LISTS:
            self._sync(method)
        self.parent.mounts.append(self)
        self.child.change_listeners.append(self._changed)
        if self.child.completer is not None:
            completions = self.parent.completer
            if not isinstance(completions, MountedCompletions):
                completions = self.parent.completer = MountedCompletions(completions)
            completions.mounts.append(self)
        _chain_lifespan(self.parent, self.child)
        for method in _LISTS:
            self.parent._changed(method)

    # -- the child changed -------------------------------------------------------------
    def _changed(self, method: str, params: dict[str, Any] | None) -> None:
        if method == RESOURCE_UPDATED and params is not None:
            self.parent.notify_resource_updated(prefix_uri(self.scheme, str(params.get("uri"))))
        elif method in _LISTS:
            self._sync(method)
            self.parent._changed(method)

    def _sync(self, method: str) -> None:
        parent, child = self.parent, self.child
        if method == "notifications/tools/list_changed":
            self._tools = _replace(
                parent.tools, self._tools, child.tools.values(), self._tool, "a tool"
            )
        elif method == "notifications/prompts/list_changed":
            self._prompts = _replace(
                parent.prompts, self._prompts, child.prompts.values(), self._prompt, "a prompt"
            )
        else:
            self._resources = _replace(
                parent.resources,
                self._resources,
                child.resources.values(),
                self._resource,
                "a resource",
            )
            kept = [t for t in parent.templates if not any(t is m for m in self._templates)]
            self._templates = [self._template(t) for t in child.templates]
            parent.templates[:] = kept + self._templates

    # -- copies under the prefix ---------------------------------------------------------
    def _tool(self, tool: Any) -> tuple[str, Any]:
        clone = self._owned(tool)
        clone.name = prefix_name(self.prefix, tool.name)
        definition = {**tool.definition, "name": clone.name}
        clone.definition = with_ui_uri(definition, lambda uri: prefix_uri(self.scheme, uri))
        return clone.name, clone

    def _prompt(self, prompt: Any) -> tuple[str, Any]:
        clone = self._owned(prompt)
        clone.name = prefix_name(self.prefix, prompt.name)
        clone.definition = {**prompt.definition, "name": clone.name}
        return clone.name, clone

    def _resource(self, resource: Any) -> tuple[str, Any]:
        clone = self._owned(resource)
        clone.uri = prefix_uri(self.scheme, resource.uri)
        clone.definition = {**resource.definition, "uri": clone.uri}
        return clone.uri, clone

    def _template(self, template: Any) -> Any:
        clone = self._owned(template)
        clone.template = UriTemplate(prefix_uri(self.scheme, template.template.template))
        clone.definition = {**template.definition, "uriTemplate": clone.template.template}
        return clone

    def _owned(self, item: R) -> R:
        """A copy whose handler sees the mounted server as `ctx.server` (its lifespan state)."""
        clone = copy.copy(item)
        if item.context_param is not None:
            clone.fn = _with_server(item.fn, item.is_async, item.context_param, self.child)
        return clone

    # -- completion ----------------------------------------------------------------------
    def inner_ref(self, ref: dict[str, Any]) -> dict[str, Any] | None:
        """The mounted server's view of a completion `ref` of the parent, if it is this mount's."""
        if ref.get("type") == "ref/prompt":
            name = unprefix_name(self.prefix, str(ref.get("name")))
            return {**ref, "name": name} if name is not None else None
        split = split_uri(str(ref.get("uri")))
        if split is not None and split[0] == self.scheme:
            return {**ref, "uri": split[1]}
        return None


class MountedCompletions:
    """The parent's `completion/complete` handler once a server with completions is mounted:
    a ref of a mounted prompt or template goes to that server, anything else to the parent's
    own handler (`own`, which `@server.completion()` sets)."""

    def __init__(self, own: Completer | None) -> None:
        self.own = own
        self.mounts: list[Mount] = []

    async def __call__(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> Any:
        handler: Completer | None = self.own
        for mount in self.mounts:
            inner = mount.inner_ref(ref)
            if inner is not None:
                ref, handler = inner, mount.child.completer
                break
        if handler is None:
            return []
        value = handler(ref, argument, context)
        return await value if inspect.isawaitable(value) else value


def _replace(
    registry: dict[str, Any],
    previous: list[str],
    items: Any,
    convert: Callable[[Any], tuple[str, Any]],
    what: str,
) -> list[str]:
    for key in previous:
        registry.pop(key, None)
    added: list[str] = []
    for item in items:
        key, clone = convert(item)
        if key in registry:
            for done in added:
                registry.pop(done, None)
            raise ValueError(f"{what} named {key!r} is already registered (mount prefix clash)")
        registry[key] = clone
        added.append(key)
    return added


def _with_server(
    fn: Callable[..., Any], is_async: bool, param: str, server: Server
) -> Callable[..., Any]:
    if is_async:

        async def run_async(**kwargs: Any) -> Any:
            ctx = kwargs.get(param)
            if ctx is not None:
                ctx.server = server
            return await fn(**kwargs)

        return run_async

    def run(**kwargs: Any) -> Any:
        ctx = kwargs.get(param)
        if ctx is not None:
            ctx.server = server
        return fn(**kwargs)

    return run


def _chain_lifespan(parent: Server, child: Server) -> None:
    """The parent's serving also starts and stops the mounted server (its lifespan, its bus)."""
    own = parent.lifespan

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Any]:
        await child.startup()
        try:
            if own is None:
                yield None
            else:
                async with own(server) as state:
                    yield state
        finally:
            await child.shutdown()

    parent.lifespan = lifespan
