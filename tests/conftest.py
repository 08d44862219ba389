from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client.era import ERA_CACHE
from mcpkit.host.catalog import SHARED
from support import AsgiClient, load_everything_server


@pytest.fixture(autouse=True)
def fresh_era_cache() -> None:
    """Each test starts with no detected era (VER-11 caches one per server for the process):
    a test that met a server as 2025-11-25 must not decide how the next one connects."""
    ERA_CACHE.clear()


@pytest.fixture(autouse=True)
def fresh_search_indexes() -> None:
    """Each test indexes its own catalogues: a ranker shared by an earlier test (`catalog.
    SHARED`) must not answer for a model a later test replaces."""
    SHARED.clear()


@pytest.fixture(scope="session")
def everything() -> Any:
    return load_everything_server().server


@pytest.fixture
def client(everything: Any) -> AsgiClient:
    return AsgiClient(everything.http_app())
