"""Finding the tray in a frame: from ArUco markers, or from the picture itself.

Both return ``None`` rather than a guess when unsure: a wrong outline would
send good dice back to be thrown again, while no outline only means no die is
ever called off the tray.
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
#: Widest colour bar a floor's own spread may ask for: a die in a floor's corner votes with wall and floor
#: around it, whose spread asked for a bar that took in the whole picture (no tray then).
WIDEST_BAR = 2 * FLOOR_TOLERANCE
#: A tray's floor holds a throw: at least this many of its dice's areas (the raytraced training scenes' smallest
#: trays hold 19-40; the dice on a bare table lie on no bounded region at all).
MIN_DICE_AREAS = 12.0
_MERGE = 12.0  # dice whose surroundings' colours lie closer than this vote for one floor colour


def tray_from_aruco(frame: npt.NDArray[np.uint8], dictionary: str = ARUCO_DICTIONARY) -> TrayOutline | None:
    """The outline through four ArUco markers stuck at the tray's corners.

    Each marker contributes its corner nearest the centre of all the markers, so the
    outline runs along the markers' inner edges, over the tray's floor.

    Returns:
        The outline, or None when fewer than four markers are seen (or this OpenCV has no aruco).
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
    """The frame, lightly blurred, in Lab at the tray search's working width; and the scale from frame pixels.

    The tray is large and its detail is noise, so its colour is judged at 160 pixels across.
    None for a frame too small to show a tray.
    """
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
    """Candidate floor colours with the pixels that voted for them, most dice first.

    Each die votes with the median colour around it; dice on the tray agree, a die on
    the table votes for the table. Without dice the centre of the frame votes alone.
    """
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
    """How far each pixel is from ``colour`` in shadow: darker, its chroma shrunk by as much (inf where it cannot be).

    A wall's shadow on a coloured floor darkens it and takes its colour down in step,
    which :func:`lab_distance` counts as a different colour; a grey floor's shadow cannot
    be told from a dark table, so only a coloured floor (:data:`SHADE_MIN_CHROMA`) has one.
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
    """Add to the floor region every die mostly surrounded by it (in place).

    A die near the tray's edge hides the floor under it and would carve a notch in
    the outline, cutting itself off; a die off the tray is surrounded by something else.
    """
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
    """The quadrilateral through the polygon's four longest edges, if the polygon is nearly one.

    Trays are rectangles, seen in perspective as convex quadrilaterals. A die in a
    corner hides the floor there and cuts the corner off the region; extending the
    four sides restores it. Round or irregular regions are left alone (None).
    """
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
    """Find the tray floor: the uniform region of colour the dice lie on.

    Each die votes for the colour around it (without dice, the centre of the frame
    votes); for each colour most dice agree on, every pixel near that colour is kept,
    and the connected region under those dice becomes
    the outline (its convex hull, or the quadrilateral through its four main sides).
    The answer is None, "unsure", when that region is tiny, covers nearly the whole
    frame or runs out of it on three sides (no visible edge: a table, not a tray), is
    not convex enough to be a tray, or misses most of the dice. Of several valid
    regions, the one the most dice lie on wins: a die of the region's own colour does
    not count, as it may be part of the region (red dice by red walls made the walls
    the floor, and took a red die lying against them in).

    Args:
        frame: BGR frame.
        boxes: the dice found, shape (n, 4) in frame pixels; they anchor the search.
        tolerance: Lab distance from the floor colour still counted as floor.
        min_area: an outline this large (a fraction of the frame) is large enough, whatever the dice.
        min_dice_areas: a smaller one is accepted where it holds this many of its dice's areas
            (the median die's box side, squared): a tray far from the camera is small in the
            frame, not beside its dice;
        smallest_area: but never one under this fraction of the frame.
        max_area: largest outline accepted, as a fraction of the frame.
        min_solidity: region area over its hull's area, below which it is not a tray.
        find_sides: also fit the tray's sides at full resolution (:func:`farklecam.vision.tray.sides.tray_sides`),
            from which the reader may draw the camera's vertical.

    Returns:
        The outline in frame pixels, or None.
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
    """:func:`_floor_outline` at the tolerance, else at the :data:`TIGHTER` ones, the first that finds a tray.

    A tray whose rim is covered in the floor's felt has the floor's colour on its rim too;
    where a wall between them is lit as brightly, the floor's region runs up that wall onto
    the rim, and floor and rim together are too ragged to be a tray (not convex enough,
    or out of the frame). The floor itself differs from the lit wall by a little more than
    from itself: a tighter colour bar cuts it loose. A floor found at the first bar is kept
    as it is. The tighter bars only try where it found none, and they must find a whole
    tray: a quadrilateral clear of the frame's edges, holding every die the floor's colour
    surrounds (a die that voted for it). A tighter bar may cut a rim off the floor, but on
    a floor that merely failed the first bar's tests it also finds pieces of floors and
    tables; those run out of the frame, have more than four sides, or leave dice out.
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
