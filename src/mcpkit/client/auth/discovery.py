"""Fetching discovery documents: Protected Resource Metadata, then authorization server metadata,
each from the URLs `metadata.py` lists, in order, first success wins."""

from __future__ import annotations

import logging
from typing import Any

import aiohttp

from ...protocol.auth_metadata import (
    AuthServerMetadata,
    MetadataError,
    MetadataNotFound,
    ProtectedResourceMetadata,
    as_metadata_urls,
    prm_urls,
)

__all__ = ["discover_auth_server", "discover_resource", "get_json"]

log = logging.getLogger("mcpkit.auth")
_MAX_DOC = 256 * 1024


async def get_json(http: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    """(status, parsed JSON or None). Network failures count as "not there" (status 0)."""
    try:
        async with http.get(url, headers={"Accept": "application/json"}) as resp:
            if resp.status != 200:
                return resp.status, None
            raw = await resp.content.read(_MAX_DOC)
    except (aiohttp.ClientError, OSError) as exc:
        log.debug("GET %s failed: %s", url, exc)
        return 0, None
    try:
        import orjson

        return 200, orjson.loads(raw)
    except ValueError:
        return 200, None


async def discover_resource(
    http: aiohttp.ClientSession, server_url: str, header_url: str | None
) -> ProtectedResourceMetadata | None:
    """RFC 9728 metadata for `server_url`: the challenge's `resource_metadata` if given, else the
    path-inserted then root well-known URL (AUTH-DISC-04). None when none answers."""
    for url in prm_urls(server_url, header_url):
        status, data = await get_json(http, url)
        if status != 200:
            continue
        try:
            return ProtectedResourceMetadata.from_json(data, url)
        except MetadataError as exc:
            log.warning("ignoring protected resource metadata at %s: %s", url, exc)
    return None


async def discover_auth_server(http: aiohttp.ClientSession, issuer: str) -> AuthServerMetadata:
    """RFC 8414 / OIDC metadata for `issuer`, validated (AUTH-DISC-06/07). A document naming
    another issuer stops discovery: it is never used, and no other URL is tried after it."""
    for url in as_metadata_urls(issuer):
        status, data = await get_json(http, url)
        if status == 200 and data is not None:
            return AuthServerMetadata.from_json(data, issuer, url)
    raise MetadataNotFound(f"no authorization server metadata found for issuer {issuer!r}")
