"""Player names as they enter the service: printable text only.

A name is shown on every page at the table, in the score sheet and in logs, so
a control character (NUL, a newline, an escape sequence) or a bidirectional
override (U+202E turns "Ann" into text that reads backwards and can make one
player's name look like another's score) is refused where the name enters,
with the offending character named, rather than stripped silently: the person
typing it learns what was wrong, and a stored name is always what was sent.

Zero-width joiners and non-joiners stay allowed: emoji sequences and several
scripts (Persian, Indic) need them, and they do not reorder text.
"""

from __future__ import annotations

import unicodedata

__all__ = ["BIDI_CONTROLS", "check_player_name"]

#: The characters that change the direction text is shown in (embeddings, overrides, isolates, marks).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: Unicode categories never allowed: controls (C0, DEL, C1), surrogates, line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def check_player_name(name: str) -> str:
    """``name`` unchanged when every character is printable text.

    Args:
        name: a player's name, already stripped of surrounding whitespace.

    Returns:
        The same name.

    Raises:
        ValueError: a control character, separator or text-direction control; the message names it
            (as ``U+XXXX``) and its position. Pydantic turns this into a 422; other callers
            should map it to their own user error.
    """
    for position, char in enumerate(name, start=1):
        if char in BIDI_CONTROLS:
            kind = "a text-direction control"
        elif unicodedata.category(char) in _REFUSED_CATEGORIES:
            kind = "a control character"
        else:
            continue
        raise ValueError(
            f"player names may hold only printable text: character {position} is {kind} (U+{ord(char):04X})"
        )
    return name
