"""Fixtures of the model tooling's tests (training, thresholds, evaluation)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

# The evaluator's tests read with the reader's stand-in models.
from tests.vision.conftest import fake_model_dir, onnx_available  # noqa: F401


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record and refuse every outgoing connection and name lookup."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network use in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts
