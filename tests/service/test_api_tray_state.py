"""The reading's ``tray`` (farklecam.vision.reading.TrayState) reaches ``POST /api/read``."""

from __future__ import annotations

import dataclasses

import numpy as np
from fastapi.testclient import TestClient

from farklecam.vision.reading import Reading
from tests.service.test_api import FakeReader, app_and_client, client, fake_reader, jpeg

__all__ = ["app_and_client", "client", "fake_reader"]  # the fixtures this module borrows


def test_read_says_how_sure_it_is_of_the_tray(client: TestClient, fake_reader: FakeReader) -> None:
    response = client.post("/api/read", files={"file": ("roll.jpg", jpeg(), "image/jpeg")})
    assert response.status_code == 200, response.text
    assert response.json()["reading"]["tray"] == "none"  # the fake reader found no tray

    def unsure(frame: np.ndarray) -> Reading:
        return dataclasses.replace(FakeReader.read(fake_reader, frame), tray_state="unsure")

    fake_reader.read = unsure  # type: ignore[method-assign]
    response = client.post("/api/read", files={"file": ("roll.jpg", jpeg(), "image/jpeg")})
    assert response.status_code == 200, response.text
    assert response.json()["reading"]["tray"] == "unsure"
