"""Capacity refusals read as "busy, retry later", never as "broken" (BASE-17, BASE-19, BASE-23)."""

from __future__ import annotations

from mcpkit.protocol.errors import (
    ServerBusy,
    SessionLimitReached,
    TaskLimitReached,
    TooManyInFlight,
    error_from_wire,
)


def test_capacity_codes_are_application_codes() -> None:
    for cls in (ServerBusy, SessionLimitReached, TaskLimitReached, TooManyInFlight):
        assert not -32768 <= cls.code <= -32000, cls  # BASE-17/19/23
        assert cls.http_status == 503
    codes = {c.code for c in (ServerBusy, SessionLimitReached, TaskLimitReached, TooManyInFlight)}
    assert len(codes) == 4


def test_client_side_recognises_a_capacity_refusal() -> None:
    wire = TaskLimitReached(retry_after=7).to_wire()
    assert wire["data"] == {"retryAfter": 7}
    exc = error_from_wire(wire)
    assert isinstance(exc, TaskLimitReached) and isinstance(exc, ServerBusy)
    assert exc.retry_after == 7 and exc.message == wire["message"]
    odd = error_from_wire({"code": -31001, "message": "full", "data": {"retryAfter": "soon"}})
    assert isinstance(odd, SessionLimitReached) and odd.retry_after == 5
