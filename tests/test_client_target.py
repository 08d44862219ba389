"""Target parsing: URL → HTTP, command string or argv → stdio."""

from __future__ import annotations

import pytest

from mcpkit.client import HttpTarget, StdioTarget, make_transport, parse_target
from mcpkit.client.stdio import StdioTransport


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/mcp", "https://example.com/mcp", "HTTPS://EXAMPLE.COM"]
)
def test_urls(url: str) -> None:
    assert parse_target(url) == HttpTarget(url)
    assert parse_target([url]) == HttpTarget(url)


def test_command_string_is_split_like_a_shell() -> None:
    assert parse_target("python 'my server.py' --flag") == StdioTarget(
        ("python", "my server.py", "--flag")
    )


def test_argv_list_is_kept() -> None:
    assert parse_target(["uvx", "some server", "--x"]) == StdioTarget(("uvx", "some server", "--x"))


def test_argv_starting_with_url_and_more_is_a_command() -> None:
    assert parse_target(["http://x", "y"]) == StdioTarget(("http://x", "y"))


def test_not_a_url() -> None:
    assert parse_target("httpserver --port 1") == StdioTarget(("httpserver", "--port", "1"))
    assert parse_target("ftp://host") == StdioTarget(("ftp://host",))


@pytest.mark.parametrize("empty", ["", "   ", []])
def test_empty(empty: str | list[str]) -> None:
    with pytest.raises(ValueError):
        parse_target(empty)


def test_make_transport_picks_the_transport() -> None:
    from mcpkit.client.http import HttpTransport

    http = make_transport("http://localhost:1/mcp", headers={"Authorization": "Bearer t"})
    assert isinstance(http, HttpTransport)
    assert http.extra_headers == {"Authorization": "Bearer t"}
    stdio = make_transport("python server.py", env={"A": "1"}, cwd="/tmp", stderr="discard")
    assert isinstance(stdio, StdioTransport)
    assert stdio.command == ["python", "server.py"]
    assert stdio.env == {"A": "1"}
    assert stdio.stderr_mode == "discard"
