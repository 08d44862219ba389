"""The proxy the environment names for a URL, as curl, requests and httpx read it: `HTTP_PROXY`,
`HTTPS_PROXY` or `ALL_PROXY` (either case), unless `NO_PROXY` lists the host."""

from __future__ import annotations

import urllib.request
from urllib.parse import urlsplit

__all__ = ["proxy_for"]


def proxy_for(url: str) -> str | None:
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or not parts.hostname:
        return None
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # not in typeshed
    if bypass(host, proxies):
        return None
    return proxy
