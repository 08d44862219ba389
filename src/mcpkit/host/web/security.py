"""Who may use the web UI, as small pure checks (no I/O).

- **Access token**: random, in the URL `mcpkit ui` prints (like Jupyter). The page served for
  it sets an HttpOnly, SameSite=Strict session cookie; every later request needs the cookie.
- **CSRF**: every API request also carries the page's CSRF token (`X-MCPKit-CSRF` header, or
  `csrf=` for the event stream, which cannot set headers); a page on another origin has
  neither. An `Origin` header, when sent, must be the UI's own.
- **DNS rebinding**: the `Host` header must name the UI's own address (loopback names and
  the address it listens on), so a hostile name resolved to 127.0.0.1 is refused.
- **CSP**: the UI's pages load only their own scripts and styles; frames only from the app
  sandbox's origin.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

COOKIE = "mcpkit_ui"
CSRF_HEADER = "x-mcpkit-csrf"
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


@dataclass(slots=True)
class Guard:
    """The UI's secrets and the checks every request goes through."""

    port: int
    bind: str = "127.0.0.1"
    token: str = field(default_factory=new_secret)
    csrf: str = field(default_factory=new_secret)
    sessions: set[str] = field(default_factory=set)

    # -- addresses ---------------------------------------------------------------------
    def hosts(self, port: int | None = None) -> set[str]:
        """Host header values naming this server (DNS rebinding defence)."""
        names = {*_LOOPBACK, self.bind if ":" not in self.bind else f"[{self.bind}]"}
        return {f"{name}:{port or self.port}" for name in names}

    def host_ok(self, host: str | None, port: int | None = None) -> bool:
        return host is not None and host.lower() in self.hosts(port)

    def origins(self) -> set[str]:
        """The UI's possible origins (CSP host sources cannot be IPv6 literals: left out)."""
        return {f"http://{h}" for h in self.hosts() if not h.startswith("[")}

    def origin_ok(self, origin: str | None) -> bool:
        """No Origin header (same-origin GETs), or our own."""
        return origin is None or origin in {f"http://{h}" for h in self.hosts()}

    # -- the session -------------------------------------------------------------------
    def login(self, token: str | None) -> str | None:
        """A new session id for the right access token (the cookie's value)."""
        if not _same(token, self.token):
            return None
        session = new_secret()
        self.sessions.add(session)
        return session

    def session_ok(self, cookie_header: str | None) -> bool:
        if not cookie_header:
            return False
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie_header)
        except Exception:  # a malformed Cookie header is simply no session
            return False
        morsel = jar.get(COOKIE)
        return morsel is not None and morsel.value in self.sessions

    def csrf_ok(self, value: str | None) -> bool:
        return _same(value, self.csrf)

    def cookie(self, session: str) -> str:
        return f"{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/"

    def url(self, host: str | None = None) -> str:
        """The address to open, with the access token."""
        shown = host or ("127.0.0.1" if self.bind in ("0.0.0.0", "::") else self.bind)
        return f"http://{shown}:{self.port}/?token={self.token}"


def page_headers(sandbox_origins: Iterable[str]) -> list[tuple[bytes, bytes]]:
    """Headers for the UI's own pages and files."""
    frames = " ".join(sorted(sandbox_origins))
    csp = (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self'; frame-src {frames}; form-action 'none'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"cache-control", b"no-store"),
        (b"cross-origin-opener-policy", b"same-origin"),
    ]
