"""A stdio server that reports what it can reach: a file, a TCP port, its environment and its
scratch directory (tests/test_host_sandbox.py runs it under bubblewrap)."""

from __future__ import annotations

import os
import socket
import tempfile

from mcpkit import Server

server = Server("sandbox-probe")


@server.tool()
def read_file(path: str) -> str:
    """The file's text, or why it could not be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return "read: " + f.read()
    except OSError as exc:
        return f"refused: {exc.strerror}"


@server.tool()
def connect(port: int) -> str:
    """Open a TCP connection to 127.0.0.1:port and say whether it opened."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return "connected"
    except OSError as exc:
        return f"refused: {exc.strerror or exc}"


@server.tool()
def environment() -> str:
    """The names of the environment variables this process sees."""
    return ",".join(sorted(os.environ))


@server.tool()
def variable(name: str) -> str:
    """One variable's value ('' when unset)."""
    return os.environ.get(name, "")


@server.tool()
def write_scratch(path: str) -> str:
    """Write a file (in the scratch directory when `path` is relative)."""
    target = os.path.join(tempfile.gettempdir(), path)
    try:
        with open(target, "w", encoding="utf-8") as f:
            f.write("written")
        return "written: " + target
    except OSError as exc:
        return f"refused: {exc.strerror}"


if __name__ == "__main__":
    server.run()
