"""The host's web UI: `WebHost` serves a chat with consent dialogs and forms, an inspector of
the configured servers and an MCP Apps host, on loopback, behind an access token.

    async with WebHost(config, model=model) as web:
        print(web.url)
        await web.wait_closed()

Modules: `webhost` (lifecycle, two ports), `routes` (the UI origin's HTTP API), `sandbox`
(the apps' origin), `webui` (the `HostUI` for the page), `bridge` (what apps may do),
`inspector`, `events` (the event log and open questions), `security` (token, cookie, CSRF,
Host and Origin checks, CSP), `asgi` (request, responses, static files, event streams).
"""

from __future__ import annotations

from .webhost import WebHost

__all__ = ["WebHost"]
