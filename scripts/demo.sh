#!/usr/bin/env bash
# The demo so far: one server, reached over both transports with the mcpkit CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT=${PORT:-8765}
SERVER=examples/weather_server.py

echo "== stdio: mcpkit call -- mcpkit run $SERVER"
$BIN/mcpkit call forecast city=Lisbon days=2 -- $BIN/mcpkit run $SERVER

echo
echo "== Streamable HTTP on 127.0.0.1:$PORT"
$BIN/mcpkit run $SERVER --transport http --port "$PORT" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  $BIN/mcpkit discover "http://127.0.0.1:$PORT/mcp" >/dev/null 2>&1 && break
  sleep 0.1
done
$BIN/mcpkit list "http://127.0.0.1:$PORT/mcp"
$BIN/mcpkit call "http://127.0.0.1:$PORT/mcp" forecast city=Oslo days=1
echo
echo "demo finished"
