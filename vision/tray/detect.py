"""Finding the tray in a frame: from ArUco markers, or from the picture itself.

Both return None rather than a guess: a wrong outline sends good dice back to be thrown,
while no outline only means no die is called off the tray.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.tray.outline import TrayOutline, points_in_polygon
from farklecam.vision.tray.sides import tray_sides

__all__ = [
    "ARUCO_DICTIONARY",
    "FLOOR_TOLERANCE",
    "MIN_DICE_AREAS",
    "detect_tray",
    "lab_distance",
    "shade_distance",
    "tray_from_aruco",
    "work_lab",
]

#: ArUco dictionary of the corner markers (print ids 0-3 of it and stick one in each corner).
ARUCO_DICTIONARY = "DICT_4X4_50"

_WORK_WIDTH = 160  # the frame is analysed at this width: the tray is large, detail is noise
_MIN_SIDE = 16  # pixels at that width: a thinner strip of picture cannot show a tray
#: Lab distance (:func:`lab_distance`) from the floor's colour still counted as floor.
FLOOR_TOLERANCE = 18.0
#: Widest colour bar a floor's own spread may ask for: a die in a floor's corner sees wall and floor around it,
#: whose spread would ask for a bar that takes in the whole picture.
WIDEST_BAR = 2 * FLOOR_TOLERANCE
#: A tray's floor holds a throw: at least this many of its dice's areas.
MIN_DICE_AREAS = 12.0
_MERGE = 12.0  # dice whose surroundings' colours lie closer than this vote for one floor colour


def tray_from_aruco(frame: npt.NDArray[np.uint8], dictionary: str = ARUCO_DICTIONARY) -> TrayOutline | None:
    """The outline through the inner corners of four ArUco markers stuck at the tray's corners.

    None when fewer than four markers are seen (or this OpenCV has no aruco).
    """
    aruco = getattr(cv2, "aruco", None)
    if aruco is None:
        return None
    detector = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)))
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    corners, ids, _rejected = detector.detectMarkers(gray)
    if ids is None or len(ids) < 4:
        return None
    quads = np.asarray(corners, dtype=np.float32).reshape(-1, 4, 2)
    centre = quads.reshape(-1, 2).mean(axis=0)
    inner = np.array([q[np.argmin(np.hypot(*(q - centre).T))] for q in quads], np.float32)
    hull = cv2.convexHull(inner).reshape(-1, 2)
    if len(hull) < 3:
        return None
    try:
        return TrayOutline.from_corners(hull, source="aruco")
    except ValueError:
        return None


def work_lab(frame: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float32], float] | None:
    """The frame, blurred, in Lab at the tray search's working width, and its scale; None if too small for a tray."""
    h, w = frame.shape[:2]
    scale = _WORK_WIDTH / w if w > _WORK_WIDTH else 1.0
    small_size = (round(w * scale), round(h * scale))
    if min(small_size) < _MIN_SIDE:
        return None
    src = frame
    while src.shape[1] >= 2 * _WORK_WIDTH:  # halving first keeps the final resize cheap and alias-free
        src = np.asarray(cv2.pyrDown(src), dtype=np.uint8)
    small = cv2.resize(src, small_size, interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(cv2.blur(small, (3, 3)), cv2.COLOR_BGR2LAB).astype(np.float32), scale


def _box_colours(lab: npt.NDArray[np.float32], boxes: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each die's own colour: the median Lab inside its box (at the working width), shape (n, 3)."""
    h, w = lab.shape[:2]
    out = np.full((len(boxes), 3), np.nan, np.float32)
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        patch = lab[int(max(0, y1)) : int(min(h, np.ceil(y2))), int(max(0, x1)) : int(min(w, np.ceil(x2)))]
        if patch.size:
            out[k] = np.median(patch.reshape(-1, 3), axis=0)
    return out


def _ring_masks(shape: tuple[int, int], boxes: npt.NDArray[np.float32]) -> list[npt.NDArray[np.bool_]]:
    """Per die, the pixels around it (its box grown by half on each side, minus every die)."""
    h, w = shape
    dice = np.zeros((h, w), dtype=bool)
    for x1, y1, x2, y2 in boxes:
        dice[int(max(0, y1)) : int(np.ceil(y2)), int(max(0, x1)) : int(np.ceil(x2))] = True
    rings = []
    for x1, y1, x2, y2 in boxes:
        bw, bh = x2 - x1, y2 - y1
        ring = np.zeros((h, w), dtype=bool)
        ring[
            int(max(0, y1 - 0.5 * bh)) : int(min(h, y2 + 0.5 * bh)),
            int(max(0, x1 - 0.5 * bw)) : int(min(w, x2 + 0.5 * bw)),
        ] = True
        rings.append(ring & ~dice)
    return rings


def _floor_candidates(
    lab: npt.NDArray[np.float32], boxes: npt.NDArray[np.float32], merge: float = _MERGE, most: int = 3
) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]]:
    """Candidate floor colours, each die voting with the median colour around it, with their voters' pixels."""
    h, w = lab.shape[:2]
    if len(boxes) == 0:
        centre = np.zeros((h, w), dtype=bool)
        centre[int(0.4 * h) : int(0.6 * h), int(0.4 * w) : int(0.6 * w)] = True
        return [(np.median(lab[centre], axis=0), centre)]
    clusters: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_], int]] = []
    for ring in _ring_masks((h, w), boxes):
        if ring.sum() < 8:
            continue
        colour = np.median(lab[ring], axis=0)
        for k, (c, seeds, n) in enumerate(clusters):
            if lab_distance(colour - c) < merge:
                clusters[k] = (c, seeds | ring, n + 1)
                break
        else:
            clusters.append((colour, ring, 1))
    clusters.sort(key=lambda c: -c[2])
    return [(c, seeds) for c, seeds, _ in clusters[:most]]


#: A floor with less chroma than this (OpenCV's 8-bit Lab) is grey: a darker grey beside it may as well be a table.
SHADE_MIN_CHROMA = 12.0
#: The darkest shade of a floor still read as that floor in shadow, as a share of its lightness.
SHADE_DARKEST = 0.4


def shade_distance(lab: npt.NDArray[np.float32], colour: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """How far each pixel is from ``colour`` in shadow: darker, its chroma shrunk in step (inf where it cannot be).

    Only a coloured floor (:data:`SHADE_MIN_CHROMA`) has a shade: a grey one's is a dark table.
    """
    chroma = colour[1:] - 128.0
    if float(np.hypot(*chroma)) < SHADE_MIN_CHROMA or colour[0] <= 0:
        return np.full(lab.shape[:2], np.inf, np.float32)
    k = lab[..., 0] / float(colour[0])
    diff = lab[..., 1:] - 128.0 - k[..., None] * chroma
    shaded = (k < 1.0) & (k >= SHADE_DARKEST)
    return np.where(shaded, np.hypot(diff[..., 0], diff[..., 1]), np.inf).astype(np.float32)


def lab_distance(diff: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Colour distance that forgives brightness (shading across a floor) more than hue."""
    return np.asarray(np.sqrt(0.25 * diff[..., 0] ** 2 + diff[..., 1] ** 2 + diff[..., 2] ** 2), np.float32)


def _absorb_dice(region: npt.NDArray[np.uint8], dice: npt.NDArray[np.float32]) -> None:
    """Add to the floor region every die mostly surrounded by it, so a die at the edge does not notch the outline."""
    h, w = region.shape
    for x1, y1, x2, y2 in dice:
        bw, bh = x2 - x1, y2 - y1
        ox1, oy1 = int(max(0, x1 - 0.5 * bw)), int(max(0, y1 - 0.5 * bh))
        ox2, oy2 = int(min(w, x2 + 0.5 * bw)), int(min(h, y2 + 0.5 * bh))
        ix1, iy1, ix2, iy2 = int(max(0, x1)), int(max(0, y1)), int(np.ceil(x2)), int(np.ceil(y2))
        ring = region[oy1:oy2, ox1:ox2].sum() - region[iy1:iy2, ix1:ix2].sum()
        ring_area = (ox2 - ox1) * (oy2 - oy1) - max(0, ix2 - ix1) * max(0, iy2 - iy1)
        if ring_area > 0 and ring >= 0.5 * ring_area:
            region[iy1:iy2, ix1:ix2] = 1


def _line_intersection(
    a1: npt.NDArray[np.float32], a2: npt.NDArray[np.float32], b1: npt.NDArray[np.float32], b2: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32] | None:
    d1, d2 = a2 - a1, b2 - b1
    denom = float(d1[0] * d2[1] - d1[1] * d2[0])
    if abs(denom) < 1e-6:
        return None
    t = float((b1 - a1)[0] * d2[1] - (b1 - a1)[1] * d2[0]) / denom
    return (a1 + t * d1).astype(np.float32)


def _fit_quad(poly: npt.NDArray[np.float32]) -> npt.NDArray[np.float32] | None:
    """The quadrilateral through the polygon's four longest edges, if it is nearly one (a die may hide a corner)."""
    k = len(poly)
    if k < 4:
        return None
    nxt = np.roll(poly, -1, axis=0)
    lengths = np.hypot(*(nxt - poly).T)
    longest = np.sort(np.argsort(-lengths)[:4])
    if lengths[longest].sum() < 0.75 * lengths.sum():
        return None
    corners = []
    for i in range(4):
        a, b = longest[i], longest[(i + 1) % 4]
        p = _line_intersection(poly[a], nxt[a], poly[b], nxt[b])
        if p is None:
            return None
        corners.append(p)
    quad = np.asarray(corners, np.float32)
    area = float(cv2.contourArea(quad))
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2)) or not area <= 1.15 * float(cv2.contourArea(poly)):
        return None
    return quad


def detect_tray(
    frame: npt.NDArray[np.uint8],
    boxes: npt.ArrayLike | None = None,
    *,
    tolerance: float = FLOOR_TOLERANCE,
    min_area: float = 0.08,
    min_dice_areas: float = MIN_DICE_AREAS,
    smallest_area: float = 0.03,
    max_area: float = 0.95,
    min_solidity: float = 0.85,
    find_sides: bool = False,
) -> TrayOutline | None:
    """Find the tray floor: the uniform region of colour the dice (``boxes``) lie on.

    Each die votes for the colour around it; the connected region of each colour the dice
    agree on becomes an outline (its hull, or the quadrilateral of its main sides), rejected
    where it is too small for the dice or the frame (``min_area``, ``min_dice_areas``,
    ``smallest_area``), too large (``max_area``), runs out of the frame on three sides, is not
    ``min_solidity`` convex, or misses most dice. The region most dice lie on wins, not
    counting dice of its own colour. Pixels within ``tolerance`` of the colour are floor.
    ``find_sides`` also fits the sides at full resolution (:mod:`farklecam.vision.tray.sides`).
    """
    work = work_lab(frame)
    if work is None:
        return None
    lab, scale = work
    dice = np.asarray(boxes if boxes is not None else np.empty((0, 4)), np.float32).reshape(-1, 4) * scale
    side = float(np.median(np.maximum(dice[:, 2] - dice[:, 0], dice[:, 3] - dice[:, 1]))) if len(dice) else 0.0
    frame_px = float(lab.shape[0] * lab.shape[1])
    floor_px = max(smallest_area * frame_px, min(min_area * frame_px, min_dice_areas * side**2))
    limits = _Limits(tolerance, floor_px, max_area, min_solidity)
    centres = (dice[:, :2] + dice[:, 2:]) / 2
    own = _box_colours(lab, dice)
    best: tuple[int, float, npt.NDArray[np.float32]] | None = None
    for colour, seeds in _floor_candidates(lab, dice):
        poly = _tightening_outline(lab, dice, colour, seeds, limits)
        if poly is None:
            continue
        held = points_in_polygon(centres, poly) if len(dice) else np.zeros(0, bool)
        if len(dice) and held.sum() < 0.5 * len(dice):  # a tray that misses most dice is the wrong region
            continue
        # Ranked by the dice lying on it: a die of the region's own colour may be part of it (red dice by red walls).
        inside = int((held & (lab_distance(own - colour) >= tolerance)).sum())
        area = float(cv2.contourArea(poly))
        if best is None or (inside, area) > (best[0], best[1]):
            best = (inside, area, poly)
    if best is None:
        return None
    polygon = best[2] / scale
    return TrayOutline(polygon, source="auto", sides=tray_sides(frame, polygon) if find_sides else None)


@dataclass(frozen=True, slots=True)
class _Limits:
    tolerance: float
    min_px: float  # smallest hull area accepted, in working pixels
    max_area: float
    min_solidity: float


#: Colour bars tried after the first, as shares of it, where the region found is no tray (see _tightening_outline).
TIGHTER = (2 / 3, 1 / 2)


def _tightening_outline(
    lab: npt.NDArray[np.float32],
    dice: npt.NDArray[np.float32],
    colour: npt.NDArray[np.float32],
    seeds: npt.NDArray[np.bool_],
    limits: _Limits,
) -> npt.NDArray[np.float32] | None:
    """:func:`_floor_outline` at the tolerance, else at the :data:`TIGHTER` ones, the first that finds a whole tray.

    A felt rim lit like its wall joins the floor into a region too ragged to be a tray; a
    tighter colour bar cuts the floor loose, where it finds a quadrilateral clear of the
    frame's edges holding every die that voted for the colour.
    """
    poly = _floor_outline(lab, dice, colour, seeds, limits)
    if poly is not None or not len(dice):  # an empty tray has no dice to hold: the first bar alone decides
        return poly
    voters = np.array([lab_distance(np.median(lab[ring], axis=0) - colour) < _MERGE if ring.sum() >= 8 else False
                       for ring in _ring_masks(lab.shape[:2], dice)], bool)  # fmt: skip
    centres = (dice[voters, :2] + dice[voters, 2:]) / 2
    for share in TIGHTER:
        poly = _floor_outline(lab, dice, colour, seeds, replace(limits, tolerance=limits.tolerance * share))
        if poly is None or len(poly) != 4 or not _clear_of_edges(poly, lab.shape[:2]):
            continue
        if points_in_polygon(centres, poly).all():
            return poly
    return None


def _clear_of_edges(poly: npt.NDArray[np.float32], shape: tuple[int, ...], margin: float = 2.0) -> bool:
    """Whether every corner lies inside the frame of ``shape`` (h, w), ``margin`` pixels clear of its edges."""
    h, w = shape[:2]
    x, y = poly[:, 0], poly[:, 1]
    return bool(
        (x >= margin).all() and (y >= margin).all() and (x <= w - 1 - margin).all() and (y <= h - 1 - margin).all()
    )


def _floor_outline(
    lab: npt.NDArray[np.float32],
    dice: npt.NDArray[np.float32],
    colour: npt.NDArray[np.float32],
    seeds: npt.NDArray[np.bool_],
    limits: _Limits,
) -> npt.NDArray[np.float32] | None:
    """The outline of the region of ``colour`` that ``seeds`` fall in, or None if it is no tray."""
    sh, sw = lab.shape[:2]
    dist = lab_distance(lab - colour)
    spread = float(np.median(dist[seeds]))  # how much the floor itself varies (felt, grain, shading)
    bar = max(limits.tolerance, min(3.0 * spread, WIDEST_BAR))
    raw_mask = ((dist < bar) | (shade_distance(lab, colour) < limits.tolerance)).astype(np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    opened = cv2.morphologyEx(raw_mask, cv2.MORPH_OPEN, kernel)
    mask = np.asarray(cv2.morphologyEx(opened, cv2.MORPH_CLOSE, kernel), dtype=np.uint8)
    count, labels = cv2.connectedComponents(mask)
    votes = np.bincount(labels[seeds & (mask > 0)], minlength=count)
    votes[0] = 0
    if count < 2 or votes.max() == 0:
        return None
    region = (labels == int(votes.argmax())).astype(np.uint8)
    _absorb_dice(region, dice)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    contour = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull))
    frame_area = float(sh * sw)
    if not limits.min_px <= hull_area <= limits.max_area * frame_area:
        return None
    if float(cv2.contourArea(contour)) < limits.min_solidity * hull_area:
        return None
    hx, hy, hw, hh = cv2.boundingRect(hull)
    borders = (hx <= 1) + (hy <= 1) + (hx + hw >= sw - 1) + (hy + hh >= sh - 1)
    if borders >= 3:  # the region runs out of the frame on three sides: its edges, the tray's, are unseen
        return None
    poly = cv2.approxPolyDP(hull, 0.01 * cv2.arcLength(hull, True), True).reshape(-1, 2).astype(np.float32)
    if len(poly) < 3:
        return None
    quad = _fit_quad(poly)
    return quad if quad is not None else poly
