from __future__ import annotations

from typing import Any

import pytest

from support import AsgiClient, load_everything_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The wire-schema check reads what every other test recorded: run it last.
    last = [
        i for i in items if i.module is not None and i.module.__name__.endswith(("wire_schema",))
    ]
    rest = [i for i in items if i not in last]
    items[:] = rest + last


@pytest.fixture(scope="session")
def everything() -> Any:
    return load_everything_server().server


@pytest.fixture
def client(everything: Any) -> AsgiClient:
    return AsgiClient(everything.http_app())
