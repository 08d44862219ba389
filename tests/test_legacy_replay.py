"""`Last-Event-ID` replay of a 2025-11-25 session, sans I/O (`server/legacy/replay.py`): plain
function calls, no event loop, no ASGI (as h11's tests drive its `Connection`). The HTTP side
that writes these streams is tested in test_legacy_http.py."""

from __future__ import annotations

from mcpkit.server.legacy.replay import Replay, ReplayStream, parse_event_id


class Wakes:
    """A `Waker` that counts how often the stream said it changed."""

    def __init__(self) -> None:
        self.count = 0

    def set(self) -> None:
        self.count += 1


def watched(number: int = 1, keep: int = 4) -> tuple[ReplayStream, Wakes]:
    stream = ReplayStream(number, keep)
    wakes = Wakes()
    stream.waker = wakes
    return stream, wakes


def test_events_are_numbered_per_stream_and_the_id_names_the_stream() -> None:
    stream, wakes = watched(number=3)
    stream.send(b"a")
    stream.send(b"b")
    assert [seq for seq, _ in stream.after(0)] == [1, 2]
    assert stream.event_id(2) == b"3-2"
    assert wakes.count == 2 and stream.ready()


def test_the_last_keep_events_are_kept_and_after_replays_what_follows_a_seq() -> None:
    stream, _ = watched(keep=3)
    for data in (b"1", b"2", b"3", b"4", b"5"):
        stream.send(data)
    assert stream.after(0) == [(3, b"3"), (4, b"4"), (5, b"5")]  # 1 and 2 fell out
    assert stream.after(4) == [(5, b"5")]
    assert stream.after(5) == []


def test_a_response_alone_is_answered_as_json_and_nothing_follows_the_end() -> None:
    stream, wakes = watched()
    assert stream.only_response is None and not stream.ready()
    stream.finish(b"response")
    assert stream.only_response == b"response" and stream.done and stream.answered
    stream.send(b"late")  # after the end: dropped
    stream.finish(b"again")
    assert stream.after(0) == [(1, b"response")] and wakes.count == 2  # one send, one end


def test_a_response_after_notifications_is_not_the_only_response() -> None:
    stream, _ = watched()
    stream.send(b"progress")
    stream.finish(b"response")
    assert stream.only_response is None
    assert stream.after(1) == [(2, b"response")]


def test_a_cancelled_request_ends_its_stream_silently() -> None:
    stream, _ = watched()
    stream.finish(None)  # cancelled: no response (utilities/cancellation)
    assert stream.cancelled_silently and stream.ready()
    assert stream.only_response is None and not stream.answered


def test_a_release_ends_the_connection_once_and_the_stream_goes_on() -> None:
    """SEP-1699: the handler drops the connection; the client resumes, the stream continues."""
    stream, wakes = watched()
    owner = object()
    stream.take(owner)
    assert not stream.ends_connection(owner)
    stream.release()
    assert wakes.count == 2 and stream.ready()
    assert stream.ends_connection(owner)  # the release is used up by this connection
    resumed = object()
    stream.take(resumed)
    assert not stream.ends_connection(resumed)
    stream.finish(b"response")
    assert stream.ends_connection(resumed) and stream.delivered(1)
    assert not stream.delivered(0)


def test_a_new_connection_takes_over_and_the_old_one_is_woken_to_stop() -> None:
    """No event goes out on two connections: the one that carried the stream stops."""
    stream, wakes = watched()
    first, second = object(), object()
    stream.take(first)
    before = wakes.count
    stream.take(second)
    assert wakes.count == before + 1
    assert stream.ends_connection(first) and not stream.ends_connection(second)
    stream.let_go(first)  # the old connection ending does not disown the new one
    assert stream.owner is second
    stream.let_go(second)
    assert stream.owner is None


def test_the_session_hands_out_stream_numbers_and_finds_them_by_last_event_id() -> None:
    replay = Replay(keep=8)
    first, second = replay.next_stream(), replay.next_stream()
    assert (first.number, second.number) == (1, 2)
    assert replay.find("1-0") is None  # not held: answered as plain JSON, nothing to resume
    replay.hold(first)
    first.send(b"a")
    assert replay.find(" 1-1 ") == (first, 1)
    standalone = replay.open_standalone()
    assert standalone.number == 0 and replay.open_standalone() is standalone
    assert replay.find("0-0") == (standalone, 0)
    replay.forget(first)
    assert replay.find("1-1") is None
    replay.forget(standalone)  # the GET stream is never forgotten this way
    assert replay.find("0-0") == (standalone, 0)


def test_past_the_limit_the_older_finished_streams_are_forgotten_never_running_ones() -> None:
    replay = Replay(keep=2, max_streams=4)
    running = replay.next_stream()
    replay.hold(running)
    finished = []
    for _ in range(4):
        stream = replay.next_stream()
        stream.finish(b"done")
        replay.hold(stream)
        finished.append(stream)
    # 5 held > 4: the older half of the finished ones goes, the running one stays.
    assert replay.find(f"{running.number}-0") == (running, 0)
    kept = [s for s in finished if replay.find(f"{s.number}-1") is not None]
    assert kept == finished[-2:]


def test_closing_the_session_ends_every_stream() -> None:
    replay = Replay(keep=2)
    stream = replay.next_stream()
    replay.hold(stream)
    standalone = replay.open_standalone()
    replay.close()
    assert stream.done and standalone.done
    assert replay.find("1-0") is None and replay.find("0-0") is None
    assert replay.open_standalone() is not standalone  # a new GET stream after the end


def test_draining_ends_the_get_stream_and_it_stays_ended() -> None:
    replay = Replay(keep=2)
    standalone = replay.open_standalone()
    replay.end_standalone()
    assert standalone.done and replay.open_standalone() is standalone


def test_only_event_ids_we_hand_out_parse() -> None:
    assert parse_event_id("12-34") == (12, 34)
    assert parse_event_id(" 0-7\t") == (0, 7)
    for bad in ("", "-", "1-", "-1", "1", "a-1", "1-b", "1-2-3", "1-\xb2", "\xb2-1", "1 -2"):
        assert parse_event_id(bad) is None, bad
