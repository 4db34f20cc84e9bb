from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from farklecam.errors import ImageError
from farklecam.vision.images import decode_image, image_size, load_image


def _jpeg(width: int = 64, height: int = 48) -> bytes:
    img = np.random.default_rng(0).integers(0, 255, (height, width, 3)).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


@pytest.mark.parametrize("suffix", [".jpg", ".png", ".bmp", ".webp"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    img = np.zeros((30, 40, 3), np.uint8)
    img[:, :20] = (255, 0, 0)
    path = tmp_path / f"x{suffix}"
    assert cv2.imwrite(str(path), img)
    out = load_image(path)
    assert out.shape == (30, 40, 3) and out.dtype == np.uint8
    assert image_size(path.read_bytes()) == (40, 30)


def test_grey_png_becomes_bgr(tmp_path: Path) -> None:
    path = tmp_path / "g.png"
    cv2.imwrite(str(path), np.full((8, 9), 100, np.uint8))
    assert load_image(path).shape == (8, 9, 3)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"hello, I am text\n", "not an image"),
        (_jpeg()[:300], "truncated JPEG"),
        (_jpeg()[: len(_jpeg()) // 2], "truncated JPEG"),
        (_jpeg()[:20], "truncated JPEG"),
        (_png_header(100_000, 100_000), "too large"),
        (_png_header(0, 10), "zero size"),
        (_png_header(64, 64) + b"garbage", "corrupt or truncated"),
        (b"\x89PNG\r\n\x1a\n", "truncated PNG header"),
    ],
    ids=["empty", "text", "jpeg-header-only", "jpeg-half", "jpeg-20-bytes", "huge", "zero", "png-corrupt", "png-cut"],
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jpg"
    path.write_bytes(content)
    with pytest.raises(ImageError, match=message):
        load_image(path)
    with pytest.raises(ImageError, match=message):
        decode_image(content, "upload.jpg")


def test_huge_jpeg_header_refused_before_decoding() -> None:
    data = bytearray(_jpeg(64, 48))
    sof = data.find(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", 60000, 60000)
    with pytest.raises(ImageError, match="too large"):
        decode_image(bytes(data))


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageError, match="not a file"):
        load_image(tmp_path)


def test_image_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        decode_image(b"")


def test_save_image(tmp_path: Path) -> None:
    from farklecam.vision.images import save_image

    img = np.zeros((10, 12, 3), np.uint8)
    out = save_image(tmp_path / "sub" / "a.jpg", img)
    assert load_image(out).shape == (10, 12, 3)
    with pytest.raises(OSError):
        save_image(tmp_path / "a.unknownformat", img)


def _with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an APP1 EXIF segment holding only an Orientation tag, as a phone writes it."""
    ifd = struct.pack("<H", 1) + struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack("<I", 0)
    tiff = b"II*\x00" + struct.pack("<I", 8) + ifd
    payload = b"Exif\x00\x00" + tiff
    app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + app1 + jpeg[2:]


def test_a_phone_photo_is_turned_as_its_exif_orientation_says() -> None:
    # Stored landscape, left half white; orientation 6 says "turn 90 degrees clockwise to view".
    img = np.zeros((40, 80, 3), np.uint8)
    img[:, :40] = 255
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    plain = decode_image(buf.tobytes())
    turned = decode_image(_with_exif_orientation(buf.tobytes(), 6))
    assert plain.shape == (40, 80, 3)
    assert turned.shape == (80, 40, 3)  # upright, as the phone showed it
    assert turned[:30].mean() > 200 and turned[50:].mean() < 50  # the white half is now on top
