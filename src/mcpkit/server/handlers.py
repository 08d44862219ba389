"""Calling user handlers: sync or async, with an optional `Context`."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .context import Context


def is_async_callable(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004
    )


def invoke(
    fn: Callable[..., Any],
    is_async: bool,
    kwargs: dict[str, Any],
    context_param: str | None,
    ctx: Context | None,
) -> Awaitable[Any]:
    """Run a handler: await what this returns. An async handler's own coroutine (no frame
    around it: this is every call's path); a sync handler runs on a worker thread so it
    never blocks the loop."""
    if context_param is not None:
        kwargs[context_param] = ctx
    if is_async:
        return fn(**kwargs)  # type: ignore[no-any-return]
    return asyncio.to_thread(functools.partial(fn, **kwargs))
