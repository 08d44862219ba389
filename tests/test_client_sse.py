"""The incremental SSE parser (client side of Streamable HTTP responses)."""

from __future__ import annotations

from mcpkit.client.sse import SSEEvent, SSEParser


def parse_all(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish()


def test_single_event() -> None:
    assert parse_all(b'data: {"a":1}\n\n') == [SSEEvent('{"a":1}')]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert parse_all(b"data: one\ndata: two\ndata:three\n\n") == [SSEEvent("one\ntwo\nthree")]


def test_comments_and_keepalives_are_ignored() -> None:
    stream = b": keep-alive\n:\ndata: x\n: mid-event comment\n\n:\r\n"
    assert parse_all(stream) == [SSEEvent("x")]


def test_event_and_id_fields() -> None:
    events = parse_all(b"event: endpoint\nid: 7\ndata: /post\n\ndata: next\n\n")
    assert events == [SSEEvent("/post", "endpoint", "7"), SSEEvent("next", "message", "7")]


def test_crlf_and_cr_line_endings() -> None:
    assert parse_all(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == [
        SSEEvent("a"),
        SSEEvent("b"),
        SSEEvent("c"),
    ]


def test_chunks_split_anywhere() -> None:
    stream = b'data: {"jsonrpc":"2.0"}\r\n\r\n: ping\n\ndata: second\n\n'
    expected = parse_all(stream)
    for size in (1, 2, 3, 5, 7):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert parse_all(*chunks) == expected
    assert [e.data for e in expected] == ['{"jsonrpc":"2.0"}', "second"]


def test_cr_at_chunk_end_waits_for_a_possible_lf() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent("a")]


def test_events_are_returned_as_soon_as_complete() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"\ndata: b") == [SSEEvent("a")]
    assert parser.finish() == [SSEEvent("b")]  # lenient: unterminated last event kept


def test_field_without_colon_and_without_space() -> None:
    assert parse_all(b"data\n\n") == [SSEEvent("")]
    assert parse_all(b"data:  two spaces\n\n") == [SSEEvent(" two spaces")]


def test_blank_lines_alone_produce_nothing() -> None:
    assert parse_all(b"\n\n\r\n") == []
    assert parse_all(b"retry: 100\nunknown: x\n\n") == []


def test_utf8_and_bom() -> None:
    payload = "data: héllo 世界\n\n".encode()
    assert parse_all(b"\xef\xbb\xbf" + payload) == [SSEEvent("héllo 世界")]
    # a multi-byte character split across chunks
    assert parse_all(payload[:8], payload[8:]) == [SSEEvent("héllo 世界")]


def test_id_with_nul_is_ignored() -> None:
    assert parse_all(b"id: a\x00b\ndata: x\n\n") == [SSEEvent("x")]
