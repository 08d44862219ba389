"""The 2025-11-25 session era (CHECKLIST appendix B): `initialize`, sessions, server→client
requests. Kept apart from the stateless 2026-07-28 path, which never imports it."""

from .registry import SessionRegistry
from .session import LegacySession, Outbox

__all__ = ["LegacySession", "Outbox", "SessionRegistry"]
