"""The table code: what keeps a stranger on the same network out of a table served beyond loopback.

A server that only this machine can reach needs no code. One that listens on
the network (``farklecam serve --host 0.0.0.0``) prints a code when it starts;
the players type it once on each device, and every API call and WebSocket then
carries it (:mod:`farklecam.service.security` checks it). The code is short enough to
type on a phone, case-insensitive, and its hyphens and spaces are ignored; eight
characters from a 31-letter alphabet leave about 8.5e11 codes to guess.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = ["CODE_ALPHABET", "generate_code", "normalize_code", "same_code", "validate_code"]

#: Letters and digits a person reads back without mixing them up (no 0/O or 1/I/L).
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

_GENERATED_LENGTH = 8
_MIN_LENGTH, _MAX_LENGTH = 6, 64
_SEPARATORS = re.compile(r"[\s-]+")
_VALID = re.compile(r"[A-Z0-9]+")


def generate_code() -> str:
    """A fresh random code such as ``"K7QX-M3PD"`` (from :mod:`secrets`, so it cannot be predicted)."""
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(_GENERATED_LENGTH))
    return f"{chars[:4]}-{chars[4:]}"


def normalize_code(text: str) -> str:
    """The form codes are compared in: upper case, without hyphens or spaces (typed codes vary in both)."""
    return _SEPARATORS.sub("", text).upper()


def validate_code(text: str) -> str:
    """A code the operator chose, stripped; refused unless it is 6 to 64 letters and digits.

    Raises:
        ValueError: the message says what a code may hold (pydantic turns it into the settings error).
    """
    text = text.strip()
    bare = normalize_code(text)
    if not (_MIN_LENGTH <= len(bare) <= _MAX_LENGTH and _VALID.fullmatch(bare)):
        raise ValueError(
            f"a table code is {_MIN_LENGTH} to {_MAX_LENGTH} letters and digits (hyphens and spaces are ignored)"
        )
    return text


def same_code(sent: str | None, code: str) -> bool:
    """Whether ``sent`` is ``code``, in time that does not depend on where they differ.

    Both are normalised and hashed first, so the comparison also takes the same
    time whatever length was sent.
    """
    if sent is None:
        return False
    digest_sent = hashlib.sha256(normalize_code(sent).encode("utf-8", "replace")).digest()
    digest_code = hashlib.sha256(normalize_code(code).encode("utf-8")).digest()
    return hmac.compare_digest(digest_sent, digest_code)
