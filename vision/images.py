"""Loading images safely: a BGR uint8 array, or one clear :class:`ImageError`.

OpenCV decodes a truncated JPEG into a half-grey picture with only a warning and allocates
whatever a header claims, so the header is read first (format, size, and for JPEG that the
scan really ends), and only then is the image decoded.
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ImageError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PIXELS",
    "decode_image",
    "image_format",
    "image_size",
    "load_image",
    "save_image",
]

#: Largest image accepted, in pixels (width x height): a 40 MP photo decodes to 120 MB of BGR.
MAX_PIXELS = 40_000_000
#: Largest file accepted, in bytes.
MAX_FILE_BYTES = 100 * 1024 * 1024

_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def image_format(data: bytes) -> str | None:
    """The format named by the file's magic bytes ("jpeg", "png", "bmp", "webp"), or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"BM"):
        return "bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _jpeg_size(data: bytes, source: str) -> tuple[int, int]:
    """Walk the JPEG segments to the frame header, then check that the scan ends (EOI)."""
    pos, size = 2, None
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ImageError(f"{source}: corrupt JPEG (bad segment marker at byte {pos})")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _SOF_MARKERS and pos + 9 <= len(data):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            size = (int(width), int(height))
        if marker == 0xDA:  # start of scan: entropy-coded data follows, ended by EOI
            if size is None:
                raise ImageError(f"{source}: corrupt JPEG (scan before frame header)")
            if data.find(b"\xff\xd9", pos + 2 + length) < 0:
                raise ImageError(f"{source}: truncated JPEG (the image data ends early)")
            return size
        pos += 2 + length
    raise ImageError(f"{source}: truncated JPEG (no image data)")


def image_size(data: bytes, source: str = "<bytes>") -> tuple[int, int]:
    """Width and height from the header alone, without decoding.

    Raises:
        ImageError: not a supported image, or a header that is cut short or corrupt.
    """
    fmt = image_format(data)
    if fmt is None:
        raise ImageError(f"{source}: not an image (expected JPEG, PNG, BMP or WebP)")
    if fmt == "jpeg":
        return _jpeg_size(data, source)
    if fmt == "png":
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise ImageError(f"{source}: truncated PNG header")
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if fmt == "bmp":
        if len(data) < 26:
            raise ImageError(f"{source}: truncated BMP header")
        width, height = struct.unpack("<ii", data[18:26])
        return abs(int(width)), abs(int(height))
    return _webp_size(data, source)


def _webp_size(data: bytes, source: str) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    raise ImageError(f"{source}: truncated or unsupported WebP header")


def decode_image(data: bytes, source: str = "<bytes>", max_pixels: int = MAX_PIXELS) -> npt.NDArray[np.uint8]:
    """Decode image bytes (a file's content or an upload) to a BGR uint8 array (height, width, 3).

    EXIF orientation is applied, grey and 16-bit images become 8-bit BGR, alpha is dropped.
    ``source`` names the image in error messages; images over ``max_pixels`` are refused
    before decoding.

    Raises:
        ImageError: empty, not an image, truncated or corrupt, zero-sized or too large.
    """
    if not data:
        raise ImageError(f"{source}: empty file")
    width, height = image_size(data, source)
    if width <= 0 or height <= 0:
        raise ImageError(f"{source}: image has zero size ({width}x{height})")
    if width * height > max_pixels:
        raise ImageError(
            f"{source}: image too large ({width}x{height} = {width * height / 1e6:.0f} MP; "
            f"the limit is {max_pixels / 1e6:.0f} MP)"
        )
    buf = np.frombuffer(data, dtype=np.uint8)
    try:
        image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise ImageError(f"{source}: corrupt image ({exc.msg if hasattr(exc, 'msg') else exc})") from exc
    if image is None or image.size == 0:
        raise ImageError(f"{source}: corrupt or truncated image (OpenCV could not decode it)")
    return np.ascontiguousarray(image, dtype=np.uint8)


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> npt.NDArray[np.uint8]:
    """Read an image file (JPEG, PNG, BMP or WebP) to a BGR uint8 array, as :func:`decode_image`.

    Raises:
        ImageError: missing, unreadable, empty, not an image, truncated, corrupt or too large.
    """
    p = Path(path)
    try:
        if not p.is_file():
            raise ImageError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise ImageError(f"{p}: file too large ({p.stat().st_size / 2**20:.0f} MiB)")
        data = p.read_bytes()
    except OSError as exc:
        raise ImageError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    return decode_image(data, str(p), max_pixels)


def save_image(path: str | Path, image: npt.NDArray[np.uint8], jpeg_quality: int = 92) -> Path:
    """Write a BGR image to ``path`` (its folder is created; the format follows the suffix); returns the path.

    Raises:
        OSError: the file could not be written (no such format, read-only folder, full disk).
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    params = [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality] if p.suffix.lower() in (".jpg", ".jpeg") else []
    try:
        ok = cv2.imwrite(str(p), image, params)
    except cv2.error as exc:
        raise OSError(f"{p}: cannot write image ({exc})") from exc
    if not ok:
        raise OSError(f"{p}: cannot write image")
    return p
