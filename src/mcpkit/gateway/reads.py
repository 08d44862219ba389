"""A front's `resources/read`: routed by URI to the backend that listed the resource (a
lazy one started for it), its scopes required, the backend's caching hints kept as given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..protocol.errors import ResourceNotFound
from ..server import methods
from ..server.admission import ServerRequest
from ..server.context import Context
from ..server.server import Server
from .forward import forwarded

if TYPE_CHECKING:
    from .link import UpstreamLink


@runtime_checkable
class Routes(Protocol):
    """What a front does for a read (`Front`)."""

    def route_uri(self, uri: str) -> tuple[UpstreamLink, str] | None: ...

    def scopes_for(self, link: UpstreamLink, kind: str, name: str) -> frozenset[str]: ...

    def front_uri(self, link: UpstreamLink, uri: str) -> str: ...

    def shape_result(
        self, link: UpstreamLink, result: dict[str, Any], ctx: Context
    ) -> dict[str, Any]: ...


async def read(server: Server, request: ServerRequest) -> Any:
    """`resources/read` of a front: routed by URI, hints kept as the backend gave them."""
    assert isinstance(server, Routes)
    uri = request.params["uri"]  # a string (admitted)
    routed = server.route_uri(uri)
    if routed is None:
        raise ResourceNotFound(uri)
    link, remote = routed
    scopes = server.scopes_for(link, "resource", remote)
    if scopes:
        from ..server.auth.access import require_scopes

        require_scopes(scopes)

    async def run(ctx: Context | None) -> dict[str, Any]:
        assert ctx is not None
        result = await forwarded(link, "resources/read", {"uri": remote}, ctx)
        if result.get("resultType", "complete") == "complete":
            result.setdefault("ttlMs", 0)  # a backend without hints: stale at once, private
            result.setdefault("cacheScope", "private")
            contents = result.get("contents")
            if isinstance(contents, list):
                result["contents"] = [
                    {**c, "uri": server.front_uri(link, c["uri"])}
                    if isinstance(c, dict) and isinstance(c.get("uri"), str)
                    else c
                    for c in contents
                ]
        return server.shape_result(link, result, ctx)

    return await methods.with_inputs(server, request, True, run)
