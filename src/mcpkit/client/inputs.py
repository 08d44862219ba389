"""Client-side answers to what a server asks for: elicitation, sampling, roots.

The same handlers serve both eras: on 2026-07-28 they fulfil the `inputRequests` of an
`InputRequiredResult` (MRTR), on a legacy session they answer the server's real requests. The
client declares exactly the capabilities it has handlers for, on every request.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from .errors import ClientError

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Elicitation:
    """A server's question for the user (`elicitation/create` params)."""

    message: str
    mode: str  # "form" or "url"
    requested_schema: JSON | None = None
    url: str | None = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, params: JSON) -> Elicitation:
        mode = params.get("mode") or "form"  # ELIC-11: no mode means form
        return cls(
            str(params.get("message", "")),
            mode,
            params.get("requestedSchema"),
            params.get("url"),
            params,
        )

    def defaults(self) -> JSON:
        """Content pre-filled from each property's `default` (ELIC-13)."""
        props = (self.requested_schema or {}).get("properties") or {}
        return {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}


ElicitationHandler = Callable[[Elicitation], Awaitable[JSON] | JSON]
SamplingHandler = Callable[[JSON], Awaitable[JSON] | JSON]
RootsProvider = (
    Sequence[str | JSON] | Callable[[], Awaitable[Sequence[str | JSON]] | Sequence[str | JSON]]
)


class NoHandler(ClientError):
    """The server asked for input this client has no handler for."""


@dataclass(eq=False)
class InputHandlers:
    """What answers the server's questions (`Client(elicitation=, sampling=, roots=)`);
    `url_elicitation`: the elicitation handler also takes URL-mode requests."""

    elicitation: ElicitationHandler | None = None
    sampling: SamplingHandler | None = None
    roots: RootsProvider | None = None
    _: KW_ONLY
    url_elicitation: bool = False

    def capabilities(self) -> JSON:
        """Exactly what the handlers can answer (BASE-45, ELIC-07, SAMP-03, ROOT-02)."""
        caps: JSON = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}, "url": {}} if self.url_elicitation else {"form": {}}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.roots is not None:
            caps["roots"] = {}
        return caps

    async def answer(self, method: str, params: JSON) -> JSON:
        """The result for one server question (an InputRequest or a legacy request)."""
        if method == "elicitation/create":
            if self.elicitation is None:
                raise NoHandler(
                    "the server asked for user input (elicitation) but no handler is set"
                )
            return _elicit_result(await _call(self.elicitation, Elicitation.from_wire(params)))
        if method == "sampling/createMessage":
            if self.sampling is None:
                raise NoHandler(
                    "the server asked for a model completion (sampling) but no handler is set"
                )
            return dict(await _call(self.sampling, params))
        if method == "roots/list":
            if self.roots is None:
                raise NoHandler("the server asked for roots but none are configured")
            roots = self.roots
            listed = await _call(roots) if callable(roots) else roots
            return {"roots": [_root(r) for r in listed]}
        raise NoHandler(f"the server asked for {method!r}, which this client does not answer")

    async def fulfil(self, requests: JSON) -> JSON:
        """All answers for an `inputRequests` map (MRTR-16), keyed like the requests."""
        out: JSON = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ClientError(f"the server sent a malformed input request {key!r}")
            out[key] = await self.answer(request["method"], request.get("params") or {})
        return out


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


def _elicit_result(value: Any) -> JSON:
    if isinstance(value, dict) and value.get("action") in ("accept", "decline", "cancel"):
        return value
    raise ClientError("an elicitation handler returns {'action': 'accept'|'decline'|'cancel', ...}")


def _root(r: str | JSON) -> JSON:
    root = {"uri": r} if isinstance(r, str) else dict(r)
    if not str(root.get("uri", "")).startswith("file://"):
        raise ClientError(f"roots are file:// URIs (ROOT-03): {root.get('uri')!r}")
    return root
