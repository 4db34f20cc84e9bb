"""Every test client here talks to the app as a browser on this machine does: to ``localhost``.

Starlette's ``TestClient`` names its host ``testserver`` (its WebSockets always),
a name the Host check (:mod:`farklecam.service.security`) rightly refuses. Tests of that
check pass their own ``base_url`` or ``Host`` header.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any
from urllib.parse import urljoin

import pytest
from starlette.exceptions import StarletteDeprecationWarning

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
