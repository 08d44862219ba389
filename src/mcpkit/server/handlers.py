"""Calling user handlers: sync or async, with an optional `Context`."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any

from .context import Context


def is_async_callable(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004
    )


async def invoke(
    fn: Callable[..., Any],
    is_async: bool,
    kwargs: dict[str, Any],
    context_param: str | None,
    ctx: Context | None,
) -> Any:
    """Run a handler. Sync handlers run on a worker thread so they never block the loop."""
    if context_param is not None:
        kwargs[context_param] = ctx
    if is_async:
        return await fn(**kwargs)
    return await asyncio.to_thread(functools.partial(fn, **kwargs))
