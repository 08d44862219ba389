"""Record and replay MCP servers (docs/record-replay.md).

`mcpkit record` sits between a client and a server and writes every message to a cassette
(JSON lines, secrets redacted); `mcpkit replay` serves the cassette as an MCP server, offline.
The modules: `format` (the file), `redact` (what a cassette leaves out), `exchanges` (a message
log grouped into requests and what answered them), `matching` (when a request is a recorded
one), `replayer` (the replay's state machine), all without I/O; `recorder` (stdio) and
`http_record` (HTTP) record, `stdio` and `http` replay: they move the bytes. The package
imports only `protocol` below it (and aiohttp for HTTP).
"""
