"""How sure a settle window is of a die's face: the reads' evidence summed over the settled frames.

The reader's per-frame bar (``ReaderConfig.face_min_conf``) is set for a single photo. A
settle window holds several frames of the same still die, and they are evidence together:
several frames naming one face at 0.45 say more than one frame at 0.55. So each read's
word on a die becomes a likelihood over the seven things a flat die's crop can be (faces
1-6, or "other": no face the classifier can name), their logs are summed over the reads,
and the posterior (uniform prior) says how sure the window is (:func:`face_posterior`).

A read gives only its top face and that face's confidence ``c`` (a :class:`~farklecam.vision.reading.Reading`
keeps no full distribution), so the rest ``1 - c`` is spread evenly over the six other
outcomes: the least committal reading of a read that names one face (:func:`read_likelihood`).

Frames of a die at rest are not independent (the same pixels under fresh sensor noise and
JPEG), so a window's evidence counts at most ``evidence_reads`` reads' worth: the summed
log-likelihoods are scaled to that many reads. Without this a long window would grow sure of
anything its first read leaned to.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["OTHER", "OUTCOMES", "face_posterior", "read_likelihood", "unanimous_bar"]

#: Outcomes of one read of a flat die: faces 1-6 (indices 0-5) and "other" (index 6).
OUTCOMES = 7
#: Index of "other" in a likelihood or posterior: the crop shows no face the classifier can name.
OTHER = 6
_FLOOR = 1e-4  # no single read may rule an outcome out entirely


def read_likelihood(face: int, confidence: float) -> npt.NDArray[np.float64]:
    """One read's likelihood over :data:`OUTCOMES`: ``confidence`` on ``face``, the rest spread evenly.

    Args:
        face: the read's top face, 1-6 (0: it named none, so all seven outcomes are equally likely).
        confidence: the classifier's confidence in ``face``, 0..1.
    """
    if not 1 <= face <= 6:
        return np.full(OUTCOMES, 1.0 / OUTCOMES)
    c = min(max(float(confidence), _FLOOR), 1.0 - _FLOOR)
    out = np.full(OUTCOMES, (1.0 - c) / (OUTCOMES - 1))
    out[face - 1] = c
    return out


def face_posterior(reads: Sequence[tuple[int, float]], evidence_reads: int) -> npt.NDArray[np.float64]:
    """The posterior over :data:`OUTCOMES` of one die from its reads ``(face, confidence)``, uniform prior.

    The log-likelihoods are summed over the reads and scaled to at most ``evidence_reads`` reads'
    worth (see the module docstring), so it depends on the reads, not on their order, and a window
    of ``evidence_reads`` or more reads is as sure as its reads' mean log-likelihood times that many.

    Raises:
        ValueError: no reads, or ``evidence_reads`` < 1.
    """
    if not reads:
        raise ValueError("a posterior needs at least one read")
    if evidence_reads < 1:
        raise ValueError(f"evidence_reads must be >= 1, but got {evidence_reads!r}")
    logs = np.sum([np.log(read_likelihood(f, c)) for f, c in reads], axis=0)
    logs *= min(len(reads), evidence_reads) / len(reads)
    logs -= logs.max()
    post = np.exp(logs)
    return np.asarray(post / post.sum(), np.float64)


def unanimous_bar(min_posterior: float, reads: int, evidence_reads: int) -> float:
    """The confidence every one of ``reads`` reads naming one face needs for its posterior to reach ``min_posterior``.

    The closed form of :func:`face_posterior` for identical reads (documentation and tests):
    with ``k = min(reads, evidence_reads)`` and ``r = (1 - c) / (6 c)`` the posterior of the
    face is ``1 / (1 + 6 r**k)``.
    """
    k = min(reads, evidence_reads)
    r = ((1.0 - min_posterior) / (min_posterior * (OUTCOMES - 1))) ** (1.0 / k)
    return float(1.0 / (1.0 + (OUTCOMES - 1) * r))
