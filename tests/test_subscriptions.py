"""subscriptions/listen beyond the basics (SUB-*): resources, filters, slow readers."""

from __future__ import annotations

from typing import Any

from mcpkit import Server
from mcpkit.server.subscriptions import SubscriptionHub
from support import AsgiClient, rpc


def resource_server() -> Server:
    server = Server("res")

    @server.resource("file:///docs")
    async def docs() -> str:
        return "docs"

    @server.tool()
    async def touch(uri: str) -> str:
        """Marks a resource updated."""
        server.notify_resource_updated(uri)
        return "ok"

    return server


async def test_resource_updates_only_for_subscribed_uris() -> None:
    server = resource_server()
    http = AsgiClient(server.http_app())
    listen = rpc(
        "subscriptions/listen",
        {
            "notifications": {
                "resourceSubscriptions": ["file:///docs"],
                "resourcesListChanged": True,
                "unknownKind": True,
            }
        },
    )
    async with http.stream(listen) as s:
        ack = await s.next()
        assert isinstance(ack, dict)
        # SUB-05: the unknown kind is left out of what is honoured.
        assert ack["params"]["notifications"] == {
            "resourceSubscriptions": ["file:///docs"],
            "resourcesListChanged": True,
        }
        await http.post(rpc("tools/call", {"name": "touch", "arguments": {"uri": "file:///other"}}))
        await http.post(
            rpc("tools/call", {"name": "touch", "arguments": {"uri": "file:///docs/a.md"}})
        )
        note = await s.next()
        assert isinstance(note, dict)
        assert note["method"] == "notifications/resources/updated"
        assert note["params"]["uri"] == "file:///docs/a.md"  # SUB-15: a sub-resource
        server.resource("file:///new")(lambda: "new")
        note = await s.next()
        assert isinstance(note, dict) and note["method"] == "notifications/resources/list_changed"
        assert s.queue.empty()


async def test_unsupported_kinds_are_not_acknowledged() -> None:
    server = resource_server()  # no prompts on this server
    http = AsgiClient(server.http_app())
    async with http.stream(
        rpc("subscriptions/listen", {"notifications": {"promptsListChanged": True}})
    ) as s:
        ack = await s.next()
        assert isinstance(ack, dict) and ack["params"]["notifications"] == {}


async def test_slow_reader_is_bounded() -> None:
    hub = SubscriptionHub(max_queue=8)
    await hub.start()
    sub = hub.open(1, {"toolsListChanged": True}, {"toolsListChanged"})
    for _ in range(100):
        hub.publish("notifications/tools/list_changed")
    assert sub.overflowed and sub.closed
    assert sub._queue.qsize() <= 8  # bounded: nothing grows without limit
    items: list[Any] = []
    while True:
        try:
            items.append(await sub.next(0.01))
        except EOFError:
            break
    assert len(items) < 8  # the stream ends instead of delivering a torn sequence
    hub.close(sub)
    assert len(hub) == 0
    await hub.stop()


async def test_several_subscriptions_at_once() -> None:
    server = resource_server()
    http = AsgiClient(server.http_app())
    msg = rpc("subscriptions/listen", {"notifications": {"resourcesListChanged": True}})
    async with http.stream({**msg, "id": "a"}) as a, http.stream({**msg, "id": "b"}) as b:
        await a.next()
        await b.next()
        server.notify_resources_changed()
        na, nb = await a.next(), await b.next()
        assert isinstance(na, dict) and isinstance(nb, dict)
        assert na["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "a"
        assert nb["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "b"
    assert len(server.subscriptions) == 0


async def test_listen_streams_past_max_listen_streams_are_refused_busy() -> None:
    server = resource_server()
    http = AsgiClient(server.http_app(max_listen_streams=1))
    listen = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    async with http.stream(listen) as first:
        assert isinstance(await first.next(), dict)  # acknowledged
        refused = await http.post(listen)
        assert refused.status == 503 and refused.headers["retry-after"] == "5"
        assert refused.code == -31000 and "listen streams" in refused.json["error"]["message"]
        assert (await http.post(rpc("tools/list"))).status == 200  # calls are not affected
    async with http.stream(listen) as again:  # the first one ended: room again
        assert isinstance(await again.next(), dict)
