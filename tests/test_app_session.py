"""The host side of issue 28 items 2 and 3 as plain function calls: the record a restored app
is answered from (`host/web/replay.py`), and consent asked once per app instance
(`Consent.admit_app`). The browser tests are in test_browser_appsession.py."""

from __future__ import annotations

from mcpkit.host.consent import ConsentPolicy, ConsentRules, Decision, PendingCall
from mcpkit.host.events import EventBus
from mcpkit.host.pipeline import Call
from mcpkit.host.pipeline.consent import Consent
from mcpkit.host.web.replay import MAX_KEPT, CallRecord


def test_a_second_rendering_is_answered_from_the_first_in_order() -> None:
    record = CallRecord()
    rows, totals = record.lookup("v1", "rows", {"t": 1}), record.lookup("v1", "totals", {})
    assert (rows, totals) == (0, 1)  # slots taken in the order the calls were made
    record.fill(1, {"totals": 2})
    record.fill(0, {"rows": 1})
    assert record.lookup("v2", "rows", {"t": 1}) == {"rows": 1}
    assert record.lookup("v2", "totals", {}) == {"totals": 2}
    assert record.lookup("v2", "more", {}) == 2  # past the record's end: it runs, and is kept


def test_a_rendering_that_differs_runs_from_then_on() -> None:
    record = CallRecord()
    record.fill(record.lookup("v1", "rows", {"t": 1}), {"rows": 1})  # type: ignore[arg-type]
    record.fill(record.lookup("v1", "totals", {}), {"totals": 2})  # type: ignore[arg-type]
    assert record.lookup("v2", "rows", {"t": 2}) is None  # other arguments
    assert record.lookup("v2", "totals", {}) is None  # matches, but v2 already went its own way
    assert record.lookup("v3", "rows", {"t": 1}) == {"rows": 1}


def test_a_call_still_running_or_failed_is_not_answered_from_the_record() -> None:
    record = CallRecord()
    assert record.lookup("v1", "rows", {}) == 0  # never filled (the call failed or runs still)
    assert record.lookup("v2", "rows", {}) is None


def test_the_record_is_bounded() -> None:
    record = CallRecord()
    for n in range(MAX_KEPT):
        record.fill(record.lookup("v1", "rows", {"n": n}), {})  # type: ignore[arg-type]
    assert record.lookup("v1", "rows", {"n": MAX_KEPT}) is None
    assert len(record.calls) == MAX_KEPT


def _pending(tool: str, trusted: bool = False) -> PendingCall:
    return PendingCall(f"board__{tool}", "board", tool, {}, {}, trusted)


class Asker:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked = 0

    async def __call__(self) -> bool:
        self.asked += 1
        return self.answer


async def _never(pending: PendingCall, call: Call | None) -> bool:
    raise AssertionError(f"asked about {pending.alias} one call at a time")


async def test_an_app_is_asked_about_once_and_its_calls_are_not() -> None:
    consent = Consent(ConsentPolicy(), _never, EventBus())
    ask = Asker(True)
    ruling = await consent.admit_app("A", [_pending("rows"), _pending("totals")], ask)
    assert (ruling.decision, ruling.by, ask.asked) == (Decision.ALLOW, "user", 1)
    for tool in ("rows", "totals", "rows"):
        got = await consent.rule(_pending(tool), Call(f"board__{tool}", "c", {}, app="A"))
        assert (got.decision, got.by) == (Decision.ALLOW, "app")


async def test_a_denied_app_is_refused_and_deny_rules_still_win() -> None:
    rules = {"board": ConsentRules(deny=("totals",))}
    consent = Consent(ConsentPolicy(servers=rules), _never, EventBus())
    assert (await consent.admit_app("A", [_pending("rows")], Asker(False))).by == "user"
    got = await consent.rule(_pending("rows"), Call("board__rows", "c", {}, app="A"))
    assert (got.decision, got.by) == (Decision.DENY, "app")
    assert "did not allow this app" in consent.texts["app"]
    await consent.admit_app("B", [_pending("rows"), _pending("totals")], Asker(True))
    got = await consent.rule(_pending("totals"), Call("board__totals", "c", {}, app="B"))
    assert (got.decision, got.by) == (Decision.DENY, "server")


async def test_no_question_where_the_rules_already_decide() -> None:
    policy = ConsentPolicy(servers={"board": ConsentRules(allow=("*",))})
    ask = Asker(False)
    ruling = await Consent(policy, _never, EventBus()).admit_app("A", [_pending("rows")], ask)
    assert (ruling.decision, ruling.by, ask.asked) == (Decision.ALLOW, "server", 0)
    denying = ConsentPolicy(deny=["board__*"])
    ruling = await Consent(denying, _never, EventBus()).admit_app("A", [_pending("rows")], ask)
    assert (ruling.decision, ruling.by, ask.asked) == (Decision.DENY, "host", 0)
