"""Every test client here talks to the app as a browser on this machine does: to ``localhost``.

Starlette's ``TestClient`` names its host ``testserver`` (its WebSockets always),
a name the Host check (:mod:`farklecam.service.security`) rightly refuses. Tests of that
check pass their own ``base_url`` or ``Host`` header.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.db.target import DatabaseTarget
from tests.service.databases import ENGINES, database_target

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

LOCAL = "http://localhost"


@pytest.fixture(autouse=True)
def clients_name_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Default ``base_url`` to ``http://localhost``, and open WebSockets on the client's own host."""
    connect = TestClient.websocket_connect

    def websocket_connect(self: TestClient, url: str, *args: Any, **kwargs: Any) -> Any:
        scheme = "wss" if self.base_url.scheme == "https" else "ws"
        return connect(self, urljoin(str(self.base_url.copy_with(scheme=scheme)), url), *args, **kwargs)

    monkeypatch.setattr(TestClient, "__init__", functools.partialmethod(TestClient.__init__, base_url=LOCAL))
    monkeypatch.setattr(TestClient, "websocket_connect", websocket_connect)


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each storage contract test runs once per engine (the PostgreSQL run skips without a server)."""
    return str(request.param)


@pytest.fixture
def target(engine: str, tmp_path: Path) -> Iterator[DatabaseTarget]:
    """A fresh, empty database of the test's engine."""
    with database_target(engine, tmp_path) as found:
        yield found
