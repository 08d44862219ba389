"""What a `Server` serves and how it registers it: `tool()`, `resource()`, `prompt()`,
`completion()`, their `remove_*`, `mount()` of another server, and the change notifications
that follow them (to `subscriptions/listen` streams and to a server this one is mounted in).

`Registrations` is `Server`'s base: the registries themselves (`server.tools`, `.resources`,
`.templates`, `.prompts`, `.completer`) are made by `Server.__init__`.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, Unpack, cast

from .prompts import Prompt
from .registered import Described, Registered, ResourceOptions, ToolOptions
from .resources import Resource, ResourceTemplate
from .subscriptions import RESOURCE_UPDATED
from .tools import Tool
from .uri_template import UriTemplate

if TYPE_CHECKING:
    from .methods import Handler
    from .server import Server
    from .subscriptions import SubscriptionHub

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R", bound=Registered)
Completer = Callable[..., Awaitable[Any] | Any]


class Registrations:
    """Tools, resources, templates, prompts and the completion handler of a server."""

    tools: dict[str, Tool]
    resources: dict[str, Resource]
    templates: list[ResourceTemplate]
    prompts: dict[str, Prompt]
    completer: Completer | None
    list_cache: dict[tuple[Any, ...], Any]
    subscriptions: SubscriptionHub
    change_listeners: list[Callable[[str, dict[str, Any] | None], None]]
    #: Whether any tool runs as a task / any registration requires scopes (kept by `_changed`).
    serves_tasks: bool
    any_scopes: bool
    #: Once a task-capable tool was served, go on answering `tasks/*` after it is gone.
    keeps_tasks: bool = False
    tool_timeout: float | None
    _mask_errors: bool
    _methods: dict[str, Any]
    #: What the deprecated `Server.proxy` calls: `mcpkit.gateway.proxy`, which sets it when
    #: it loads (the server never imports the gateway).
    proxy_factory: ClassVar[Callable[..., Server] | None] = None

    def tool(self, name: str | None = None, **options: Unpack[ToolOptions]) -> Callable[[F], F]:
        """Register a function as a tool; its signature is the input schema, its docstring the
        description (Google, NumPy or Sphinx parameter sections document the parameters).
        `options` (`ToolOptions`): `title`, `description`, `icons`, `meta`, `scopes` (only
        callers whose token holds all of them see and call it; 403 otherwise), `input_schema`,
        `structured_output`, `annotations`, `timeout` (seconds: a call still running then is
        cancelled and answered as a tool error), `task` and `task_start`.

        `task="optional"` lets a call run as a task for clients that declare the tasks
        extension (others get the result synchronously); `task="required"` refuses clients
        without it. `task_start="handler"` keeps the call synchronous until the handler awaits
        `ctx.run_as_task()` (input asked before that is multi round-trip input)."""

        def register(fn: F) -> F:
            self.add_tool(Tool(fn, name=name, **options))
            return fn

        return register

    def set_method(self, method: str, handler: Handler) -> None:
        """Answer `method` with `await handler(server, request)` (the admitted request) in
        place of the built-in handler, or a method it lacks: a proxy's `resources/read` is
        routed to its backend. Before serving; the dispatch is the same table lookup."""
        self._methods[method] = handler

    def add_tool(self, tool: Tool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered (TOOL-13)")
        tool.mask_errors = self._mask_errors
        if tool.timeout is None:
            tool.timeout = self.tool_timeout
        self._add(self.tools, tool.name, tool, "notifications/tools/list_changed")

    @property
    def mask_errors(self) -> bool:
        return self._mask_errors

    @mask_errors.setter
    def mask_errors(self, value: bool) -> None:
        self._mask_errors = value
        for tool in self.tools.values():
            tool.mask_errors = value

    def remove_tool(self, name: str) -> None:
        self._remove(self.tools, name, "notifications/tools/list_changed")

    def resource(
        self, uri: str, *, name: str | None = None, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]:
        """Register a resource; a URI with `{variables}` registers a resource template.
        `options` (`ResourceOptions`): `title`, `description`, `mime_type`, `annotations`,
        `icons`, `meta`, `scopes`."""

        def register(fn: F) -> F:
            note = "notifications/resources/list_changed"
            if UriTemplate.is_template(uri):
                self.templates.append(ResourceTemplate(fn, uri, name=name, **options))
                self._changed(note)
            else:
                if uri in self.resources:
                    raise ValueError(f"a resource at {uri!r} is already registered")
                self._add(self.resources, uri, Resource(fn, uri, name=name, **options), note)
            return fn

        return register

    def remove_resource(self, uri: str) -> None:
        self._remove(self.resources, uri, "notifications/resources/list_changed")

    def prompt(self, name: str | None = None, **described: Unpack[Described]) -> Callable[[F], F]:
        """Register a prompt; its (string) parameters are the prompt's arguments.
        `described` (`Described`): `title`, `description`, `icons`, `meta`, `scopes`."""

        def register(fn: F) -> F:
            p = Prompt(fn, name=name, **described)
            if p.name in self.prompts:
                raise ValueError(f"a prompt named {p.name!r} is already registered")
            self._add(self.prompts, p.name, p, "notifications/prompts/list_changed")
            return fn

        return register

    def remove_prompt(self, name: str) -> None:
        self._remove(self.prompts, name, "notifications/prompts/list_changed")

    def _add(self, registry: dict[str, R], key: str, item: R, note: str) -> None:
        if registry.get(key) is not None:  # a replacement may turn a flag off: look at all
            registry[key] = item
            self._changed(note)
            return
        registry[key] = item  # an addition can only turn the flags on: no scan of the rest
        self.serves_tasks = self.serves_tasks or (isinstance(item, Tool) and item.task is not None)
        self.any_scopes = self.any_scopes or bool(item.scopes)
        self._announce(note)

    def _remove(self, registry: dict[str, Any], key: str, note: str) -> None:
        if registry.pop(key, None) is not None:
            self._changed(note)

    def completion(self) -> Callable[[F], F]:
        """Register the `completion/complete` handler: `(ref, argument, context) -> list[str]`."""

        def register(fn: F) -> F:
            from .mount import MountedCompletions

            if isinstance(self.completer, MountedCompletions):
                self.completer.own = fn  # mounted servers keep completing their own refs
            else:
                self.completer = fn
            self.list_cache.clear()
            return fn

        return register

    # -- composition ------------------------------------------------------------------------
    def mount(self, other: Server, prefix: str) -> None:
        """Serve `other`'s tools, prompts, resources, templates and completions as this
        server's: names become `prefix__name`, URIs `prefix+scheme:...` (`mcpkit.server.prefixes`).
        Later changes to `other` follow, with their list_changed notifications."""
        from .mount import Mount

        Mount(cast("Server", self), other, prefix).attach()

    @classmethod
    def proxy(cls, target: Any, **options: Any) -> Server:
        """Deprecated: `from mcpkit.gateway import proxy`, then `proxy(target, ...)`. This
        alias works once `mcpkit.gateway.proxy` is loaded, which registers itself here: the
        gateway sits above the server, which never imports it."""
        warnings.warn(
            "Server.proxy is deprecated: use `from mcpkit.gateway import proxy`",
            DeprecationWarning,
            stacklevel=2,
        )
        if cls.proxy_factory is None:
            raise RuntimeError(
                "Server.proxy(target) cannot proxy: the gateway is not loaded; use "
                "`from mcpkit.gateway import proxy` and `proxy(target)` (Server.proxy is deprecated)"
            )
        return cls.proxy_factory(target, **options)

    # -- change notifications (delivered to subscriptions/listen streams) --------------------
    def _changed(self, method: str) -> None:
        kept = self.keeps_tasks and self.serves_tasks
        self.serves_tasks = kept or any(t.task is not None for t in self.tools.values())
        self.any_scopes = any(
            x.scopes
            for group in (self.tools.values(), self.resources.values(), self.prompts.values())
            for x in group
        ) or any(t.scopes for t in self.templates)
        self._announce(method)

    def _announce(self, method: str) -> None:
        """A list changed: cached pages go, listeners hear `method`."""
        self.list_cache.clear()
        self.subscriptions.publish(method)
        for listener in self.change_listeners:
            listener(method, None)

    def notify_tools_changed(self) -> None:
        self._changed("notifications/tools/list_changed")

    def notify_prompts_changed(self) -> None:
        self._changed("notifications/prompts/list_changed")

    def notify_resources_changed(self) -> None:
        self._changed("notifications/resources/list_changed")

    def notify_resource_updated(self, uri: str) -> None:
        self.subscriptions.publish(RESOURCE_UPDATED, {"uri": uri}, uri=uri)
        for listener in self.change_listeners:
            listener(RESOURCE_UPDATED, {"uri": uri})
