from __future__ import annotations

from typing import Any

import pytest

from support import AsgiClient, load_everything_server


@pytest.fixture(scope="session")
def everything() -> Any:
    return load_everything_server().server


@pytest.fixture
def client(everything: Any) -> AsgiClient:
    return AsgiClient(everything.http_app())
