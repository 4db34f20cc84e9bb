"""Many camera tables on one or more servers: frames answered, throws right, the lag after rest, throws recorded.

    python bench/tables.py N VIDEO... [--servers K] [--db URL_OR_PATH] [--kill-after SECONDS]
                           [--url URL]... [--games] [--code CODE] [--jpeg-quality 80] [--seed 0] [--why]

Starts K ``farklecam serve`` processes (``--servers``, default 1) on free loopback ports, named
``hall-1``, ``hall-2``, ... (``serve --name``, the name the organiser page shows for a table's
camera) and all on the database ``--db``: a ``postgresql://`` URL that several servers share, or
an SQLite file (by default a temporary one; servers sharing a file do not hear each other's
changes, so give several servers PostgreSQL). Or it uses the running servers ``--url`` names
(``http://HOST:PORT``, or a table's address ``ws://HOST:PORT/ws/table/-``; give it more than once,
or a comma list, for several servers sharing one database). Table i streams to server i mod their
count, and the bench streams N tables at once, as the page does: each table is a camera
playing one of the VIDEOs in real time (table i plays VIDEO i mod the count, from a
start staggered by up to a second), keeps one frame in flight and, when an answer
comes, sends the newest frame the camera has (a slow server sees fewer frames, never
a queue). Each VIDEO needs the truth its generator wrote beside it
(``python -m farklecam.datasets.synthetic.throw_videos``: ``NAME.json``). A server that
wants a table code gets ``--code`` (or the ``code`` of a ``--url``'s query), as the page sends it;
servers the bench starts are started wanting it.

Per table it prints the frames answered a second, the throws reported right (the
first report of a throw has its faces and rethrow count; a die less than half in view
may be in it or not, as ``farklecam.models.evaluate`` judges occluded dice, unless
``--count-occluded``), extra reports (a second
report of a throw, or one outside any), and the lag from the moment the dice came to
rest to the answer that reported them; then the totals and the median lag. Without
``--games`` the tables stream without a game (the ``-`` table: settle, read and advise), so no
count of dice is expected. A benchmark, not a test: its numbers depend on the
machine and its load (``os.getloadavg`` is printed with them). With ``--why`` it prints,
for every throw a table did not read right, the truth and what the table reported
(each die's face or status, and why a die was ``uncertain``), or that nothing came.

With ``--games`` every table plays a game kept in the servers' database, as at a tournament, so
that its throws are recorded and the organiser page lists it. Each server's tables are seated
through that server as the first tables of round 1 of a tournament of their own (``POST
/api/tournaments``, players signed up, the round started; at most 10 tables a tournament, so 20
tables on two servers are two tournaments), the roll-off is typed through ``POST
/api/games/ID/actions`` (as the page's buttons send it), and the camera streams to the game's
``/ws/table/ID``: a settled throw of the dice the game waits for becomes the game's roll. The
videos do not follow a game's rules (how many dice a player lifts out is drawn at random), so
between throws the bench plays the game, through the same API and with ``expected_events`` (an
action sent after a throw the camera recorded is refused, never applied to a game the bench has
not seen), the way that makes it wait for the dice the video throws next:

* a roll waiting for a keep: the legal keep that leaves that many dice (six after hot dice), else
  the keep with the most points;
* more dice to throw than the video throws next: a typed roll (fives and dice that do not score)
  whose fives are kept, leaving that many;
* fewer (six, say, for a new turn): bank where the rules allow it, else a typed roll that scores
  nothing (the turn passes, and the next player throws six).

It acts while a roll waits for a keep, and while the video's tray is empty or its dice fly, never
while a throw's dice lie (the table may still be reading them). Where the table cannot tell a die
of a settled throw (``settle.uncertain``), the bench tells it as a player does with the page's
one-click fix (``{"type": "face"}`` on the socket), with the face of the truth's die its box covers.
A typed roll is the bench's: a table's recorded throws are the rolls of its game's log (``GET
/api/games/ID/events``) the bench did not type. A throw with a die to throw again (off the tray or
leaning) is held back by the table ("RETHROW"), so each table should record the throws of its
video that have none; a die the camera missed, or one too many, holds a throw back too (the
players would add or remove it; the bench does not).

When every video has ended, and while the cameras still stream, each server is asked for what
the organiser page shows (``GET /api/tournaments/NAME`` of each tournament): which of the bench's
tables it lists, and the server each table's camera streams to (``serve --name``). Per table it
prints the throws recorded (of those that should be), the rolls typed and the dice told (with
``--why`` also the game's log, typed rolls marked), then ``recorded N/M throws; server A lists X/N,
server B lists Y/N``.

With ``--kill-after SECONDS`` (servers the bench started, two or more) the bench kills the last
server with SIGKILL that long after the streams start, as ``kill -9`` or a power cut would: it
saves nothing on the way out. Each table whose camera streamed to it does what its players do:
they open the table's camera page on the next live server, on the same game (same id: the game
is the database's, not the dead process's), and the camera streams on from the video's current
frame. What the killed process held in memory is gone with it (the settle state of the throw
then on the tray: the new server shows dice that lay there before the camera came as shown,
never scored, as for players who would throw them again). The killed server is always started
again at once with the same command (same port, name and database), so that the organiser
listing is asked of it too, as of a process an organiser restarts; the tables that moved stay
where they went. The summary says when the server died and answered again, which tables moved
where, how long after the kill each one's first answer came from its new server, and how many
throws each recorded after its move.

With ``--games`` the bench also checks that nothing acknowledged is lost. Per game it keeps the
largest event count any server acknowledged: the ``events`` of every frame answer for the game
(one whose message says NOT SAVED acknowledges nothing: it tells the players so), of every
answered ``POST /api/games/ID/actions`` and of every answer to a told die. At the end it reads
the game's log (``GET /api/games/ID/events``, its ``count``) from every server, and prints per
table ``acknowledged A, kept K`` (K: the fewest events any server's log holds), then
``acknowledged actions kept: X/Y`` (Y the events acknowledged in all, X those of them the logs
hold), naming each game whose log holds fewer events than were acknowledged: a loss.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.datasets.yolo import OCCLUDED_BELOW


@dataclass
class Video:
    """A video's frames as the page would send them (JPEG), its frame rate and its truth."""

    name: str
    frames: list[bytes]
    fps: float
    truth: dict[str, Any]

    @classmethod
    def load(cls, path: Path, quality: int) -> Video:
        truth_path = path.with_suffix(".json")
        if not truth_path.exists():
            raise SystemExit(
                f"error: {truth_path} is missing "
                "(write videos with python -m farklecam.datasets.synthetic.throw_videos)"
            )
        capture = cv2.VideoCapture(str(path))
        fps = capture.get(cv2.CAP_PROP_FPS) or 15.0
        frames = []
        while True:
            ok, image = capture.read()
            if not ok:
                break
            ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
            frames.append(jpeg.tobytes())
        capture.release()
        if not frames:
            raise SystemExit(f"error: {path} has no frames that OpenCV can decode")
        return cls(path.name, frames, float(fps), json.loads(truth_path.read_text()))


@dataclass
class TableResult:
    """What one table saw: answers, and each report (video frame, arrival in video seconds, faces, rethrow)."""

    video: Video
    answered: int = 0
    seconds: float = 0.0
    reports: list[tuple[int, float, tuple[int, ...], int]] = field(default_factory=list)
    dice: list[list[dict[str, Any]]] = field(default_factory=list)  # each report's dice, as the page got them
    table: GameTable | None = None  # the game it played (``--games``)

    def score(self, *, count_occluded: bool = False) -> tuple[int, int, int, list[float]]:
        """(throws, right, extra, lags) of this table's reports; see :func:`score_reports`."""
        return score_reports(self.video.truth, self.reports, count_occluded=count_occluded)


def right_answers(throw: dict[str, Any], *, count_occluded: bool = False) -> set[tuple[tuple[int, ...], int]]:
    """Every ``(faces, rethrow)`` a report of ``throw`` may carry and be right.

    The truth's own, and (unless ``count_occluded``) the truth with any of its dice that
    show less than :data:`~farklecam.datasets.yolo.OCCLUDED_BELOW` of themselves left out: finding
    such a die is no error and missing one no miss, as ``python -m farklecam.models.evaluate``
    scores a scene's occluded dice. A die mostly cut off by the picture's edge is one:
    with a game the table then says the count is short rather than scoring it.
    """
    faces, rethrow = tuple(sorted(throw["faces"])), int(throw["rethrow"])
    answers = {(faces, rethrow)}
    if count_occluded:
        return answers
    for label in throw.get("labels", []):
        if float(label.get("visible", 1.0)) >= OCCLUDED_BELOW:
            continue
        for kept, again in list(answers):
            if label["status"] == "ok":
                rest = list(kept)
                rest.remove(int(label["face"]))
                answers.add((tuple(rest), again))
            else:
                answers.add((kept, again - 1))
    return answers


def score_reports(
    truth: dict[str, Any], reports: list[tuple[int, float, tuple[int, ...], int]], *, count_occluded: bool = False
) -> tuple[int, int, int, list[float]]:
    """Judge reports (video frame, time in video seconds, faces, rethrow) against a video's truth.

    A report belongs to the throw its frame belongs to. The first report of a throw made
    after its dice came to rest is judged: right when its faces and rethrow count are
    among :func:`right_answers`. Every other report is extra. Returns (throws, right,
    extra, lags in seconds).
    """
    judged = judge_reports(truth, reports)
    throws = {int(t["throw"]): t for t in truth["throws"]}
    right = sum(
        (tuple(sorted(reports[i][2])), reports[i][3]) in right_answers(throws[k], count_occluded=count_occluded)
        for k, i in judged.items()
    )
    lags = [reports[i][1] - throws[k]["rest_time"] for k, i in sorted(judged.items(), key=lambda kv: kv[1])]
    return len(throws), right, len(reports) - len(judged), lags


def _die_word(die: dict[str, Any]) -> str:
    """A reported die in a word: its face, or its status (and why it is uncertain, with the face it hints)."""
    if die.get("status") == "ok":
        return str(die.get("face"))
    why = f", {die['ambiguity']}" if die.get("ambiguity") else ""
    return f"{die.get('status')}({die.get('face')}{why})"


def wrong_throws(result: TableResult, *, count_occluded: bool = False) -> list[str]:
    """One line per throw of the table's video it did not read right: the truth, and what was reported."""
    judged = judge_reports(result.video.truth, result.reports)
    out = []
    for t in result.video.truth["throws"]:
        i = judged.get(int(t["throw"]))
        said_faces = tuple(sorted(result.reports[i][2])) if i is not None else ()
        if i is not None and (said_faces, result.reports[i][3]) in right_answers(t, count_occluded=count_occluded):
            continue
        said = "nothing reported" if i is None else " ".join(_die_word(d) for d in result.dice[i])
        events = f" [{', '.join(t['events'])}]" if t.get("events") else ""
        out.append(f"throw {t['throw']}{events}: truth {t['faces']} rethrow {t['rethrow']}; reported {said}")
    return out


def judge_reports(truth: dict[str, Any], reports: list[tuple[int, float, tuple[int, ...], int]]) -> dict[int, int]:
    """Which report is judged for which throw: ``{throw: index into reports}`` (see :func:`score_reports`)."""
    throws = {int(t["throw"]): t for t in truth["throws"]}
    frames = truth["frames"]
    judged: dict[int, int] = {}
    for i, (index, arrived, _faces, _rethrow) in enumerate(reports):
        k = int(frames[min(index, len(frames) - 1)]["throw"])
        match = throws.get(k)
        if match is not None and k not in judged and arrived >= match["rest_time"]:
            judged[k] = i
    return judged


class ApiError(Exception):
    """A server refused a request: its status and the reason it gave."""


@dataclass(frozen=True)
class Server:
    """A running ``farklecam serve``: its base address (``http://HOST:PORT``), the table code it wants, its name.

    ``name`` is its ``serve --name`` where the bench started it (the organiser page names a table's
    camera's server so); a server ``--url`` names goes by its ``HOST:PORT``.
    """

    base: str
    code: str | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        """The server in a word, for the summary: its name, else ``HOST:PORT``."""
        return self.name or self.base.split("://", 1)[-1]

    @classmethod
    def parse(cls, url: str, code: str | None) -> Server:
        """A server from ``http(s)://HOST:PORT`` or a table address ``ws(s)://HOST:PORT/ws/table/...[?code=]``."""
        parts = urllib.parse.urlsplit(url.strip())
        scheme = {"http": "http", "https": "https", "ws": "http", "wss": "https"}.get(parts.scheme)
        if scheme is None or not parts.netloc:
            raise ValueError(f"{url!r} is no server address: give http://HOST:PORT (or ws://HOST:PORT/ws/table/-)")
        given = urllib.parse.parse_qs(parts.query).get("code")
        return cls(f"{scheme}://{parts.netloc}", code if code is not None else (given[0] if given else None))

    def socket(self, game: str) -> str:
        """The camera WebSocket of ``game`` (``-``: no game), with the table code as the page sends it."""
        ws = "wss" + self.base[5:] if self.base.startswith("https") else "ws" + self.base[4:]
        query = f"?code={urllib.parse.quote(self.code)}" if self.code else ""
        return f"{ws}/ws/table/{urllib.parse.quote(game)}{query}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API request, its JSON answer (blocking).

        Raises:
            ApiError: the server refused it (the status and its ``detail``) or could not be reached.
        """
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.code:
            headers["X-Table-Code"] = self.code
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("detail", "")
            except (ValueError, AttributeError):
                detail = ""
            raise ApiError(f"{method} {path}: {exc.code} {detail}".strip()) from exc
        except OSError as exc:
            raise ApiError(f"{method} {self.base}{path}: {exc}") from exc


#: The game's phases in which a camera throw may become its roll.
THROWING = ("awaiting_roll", "can_bank_or_roll")
#: Faces that score nothing together (no 1, no 5, no three alike, no straight, no three pairs), for typed rolls.
NO_SCORE = (2, 3, 4, 6, 2, 3)
#: The most tables a tournament seats in its first round (40 players at tables of 4).
TABLES_PER_TOURNAMENT = 10


@dataclass
class GameTable:
    """A table's game on the server its camera streams to, and what the bench did to it."""

    server: Server
    game: str
    tournament: str
    typed: set[int] = field(default_factory=set)  # the log's events that are rolls the bench typed
    refused: list[str] = field(default_factory=list)  # actions the server refused, with its reason
    tries: Counter[tuple[int, int]] = field(default_factory=Counter)  # (throw prepared, events seen): attempts
    told: set[tuple[int, int]] = field(default_factory=set)  # (throw, die) the bench told the table
    recorded: int = 0  # the camera's rolls in the game's log, once the stream is over
    log: list[str] = field(default_factory=list)  # the game's log, each typed action marked (for ``--why``)
    acknowledged: int = 0  # the most events any server's answer said the game holds
    acknowledged_by: str = ""  # which answer said so first (server, and frame, action or told die)
    unsaved: int = 0  # frame answers that said NOT SAVED (they acknowledge nothing)
    kept: dict[str, int] = field(default_factory=dict)  # each server's word on the events the log holds
    moved_at: int | None = None  # the game's events in the first answer after its camera moved server
    recorded_after_move: int = 0  # the camera's rolls in the log after that
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def acknowledge(self, events: int, how: str) -> None:
        """A server answered that the game holds ``events`` events (``how``: which server, which answer).

        Answers come from the camera's stream and from the steering's threads at once: the largest is kept.
        """
        with self._guard:
            if events > self.acknowledged:
                self.acknowledged, self.acknowledged_by = events, how

    def act(self, body: dict[str, Any], events: int) -> tuple[dict[str, Any], int]:
        """Apply an action to the game as last seen (``events``); the state and event count it produced."""
        server = self.server  # the camera may move meanwhile: the answer is this server's
        data = server.call("POST", f"/api/games/{self.game}/actions", {**body, "expected_events": events})
        self.acknowledge(int(data["events"]), f"{server.label} action")
        return data["state"], int(data["events"])

    def roll_off(self) -> None:
        """Play the roll-off with distinct faces, so the first seated player throws first."""
        data = self.server.call("GET", f"/api/games/{self.game}")
        state, events = data["state"], int(data["events"])
        while state["phase"] == "roll_off":
            face = max(1, 6 - len(state["roll_off_faces"]))
            state, events = self.act({"type": "rolloff", "player": state["legal"]["roll_off"][0], "face": face}, events)

    def steer(self, state: dict[str, Any], events: int, dice: int | None) -> None:
        """Play until the game waits for ``dice`` dice (None: the video throws no more; only keep a roll).

        See the module docstring. A refusal (the camera recorded a throw meanwhile) ends this try;
        the next answer's game is the one the next try starts from.
        """
        try:
            for _ in range(8):
                phase, legal = state["phase"], state["legal"]
                if phase == "awaiting_keep":
                    keeps = legal["keeps"]
                    fitting = [k for k in keeps if (6 if k["hot_dice"] else k["dice_left"]) == dice]
                    state, events = self.act({"type": "keep", "faces": (fitting or keeps)[0]["keep"]}, events)
                    continue
                if phase == "roll_off":
                    face = max(1, 6 - len(state["roll_off_faces"]))
                    state, events = self.act({"type": "rolloff", "player": legal["roll_off"][0], "face": face}, events)
                    continue
                if phase not in THROWING or dice is None or int(state["dice_to_throw"]) == dice:
                    return
                have = int(state["dice_to_throw"])
                if dice > have and "bank" in legal["kinds"]:
                    state, events = self.act({"type": "bank"}, events)
                    continue
                faces = [5] * (have - dice) + list(NO_SCORE[:dice]) if dice < have else list(NO_SCORE[:have])
                state, events = self.act({"type": "roll", "faces": faces}, events)
                self.typed.add(events)
        except ApiError as exc:
            self.refused.append(str(exc))

    async def on_answer(self, answer: dict[str, Any], index: int, truth: dict[str, Any]) -> None:
        """After a frame's answer: act if a roll waits for a keep, or the game is not ready for the next throw."""
        state = answer.get("game")
        if not isinstance(state, dict):
            return
        throws, frames = truth["throws"], truth["frames"]
        video_phase = frames[min(index, len(frames) - 1)]["phase"]
        upcoming = next((k for k, t in enumerate(throws) if t["rest_frame"] > index), None)
        dice = None if upcoming is None else int(throws[upcoming]["dice"])
        if state["phase"] != "awaiting_keep":
            ready = state["phase"] in THROWING and (dice is None or int(state["dice_to_throw"]) == dice)
            if ready or video_phase not in ("empty", "moving"):
                return
        key = (-1 if upcoming is None else upcoming, int(answer.get("events") or 0))
        if self.tries[key] >= 2:  # a game over, or refusals: do not ask on every frame
            return
        self.tries[key] += 1
        await asyncio.to_thread(self.steer, state, key[1], dice)

    def tell(self, answer: dict[str, Any], index: int, truth: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``face`` messages a player sends for the unclear dice of a throw the game waits for (from the truth).

        Each die the table lists as ``uncertain`` is told the face of the truth's die its box covers
        best, once; a die the truth says leans or lies off the tray is not told (it is thrown again).
        """
        state, uncertain = answer.get("game"), (answer.get("settle") or {}).get("uncertain") or []
        if not uncertain or not isinstance(state, dict) or state["phase"] not in THROWING:
            return []
        k = int(truth["frames"][min(index, len(truth["frames"]) - 1)]["throw"])
        throw = next((t for t in truth["throws"] if int(t["throw"]) == k), None)
        if throw is None or throw["rest_frame"] > index:
            return []
        told = []
        for die in uncertain:
            overlaps = [(_iou(label["box"], die["box"]), label) for label in throw.get("labels", [])]
            overlap, label = max(overlaps, key=lambda o: o[0], default=(0.0, None))
            if label is None or overlap < 0.3 or label["status"] != "ok" or (k, die["index"]) in self.told:
                continue
            self.told.add((k, die["index"]))
            told.append({"type": "face", "index": die["index"], "face": int(label["face"])})
        return told

    def read_logs(self, servers: list[Server]) -> None:
        """Read the game's log from every server: the camera's rolls in it, and how many events each says it holds.

        The camera's rolls are those the bench did not type, counted in the log of the server the
        camera streams to (after a move, those after the new server's first answer too). Every server
        is asked for its count, as the organiser may open the game on any of them; one that cannot
        answer says nothing of it.
        """
        for server in sorted(servers, key=lambda s: s != self.server):  # the camera's server first
            try:
                log = server.call("GET", f"/api/games/{self.game}/events")
            except ApiError as exc:
                self.refused.append(f"the game's log: {exc}")
                continue
            self.kept[server.label] = int(log["count"])
            if server != self.server:
                continue
            rolls = [e for e in log["data"] if e["action"]["type"] in ("roll", "passed-roll")]
            self.recorded = sum(e["seq"] not in self.typed for e in rolls)
            moved = self.moved_at
            self.recorded_after_move = sum(e["seq"] not in self.typed and moved is not None and e["seq"] > moved
                                           for e in rolls)  # fmt: skip
            self.log = [f"{e['text']}{' (typed)' if e['seq'] in self.typed else ''}" for e in log["data"]]

    @property
    def kept_least(self) -> int | None:
        """The fewest events any server's log holds (None: no server answered)."""
        return min(self.kept.values(), default=None)


def _iou(a: list[float], b: list[float]) -> float:
    """Intersection over union of two ``[x0, y0, x1, y1]`` boxes."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def seat_tables(servers: list[Server], n: int, stamp: str) -> list[GameTable]:
    """Seat table i on server i mod the count, as round 1 of tournaments made through that server; roll-offs played."""
    tables: dict[int, GameTable] = {}
    for s, server in enumerate(servers):
        mine = list(range(s, n, len(servers)))
        for c in range(0, len(mine), TABLES_PER_TOURNAMENT):
            chunk = mine[c : c + TABLES_PER_TOURNAMENT]
            name = f"bench-{stamp}-{s}-{c // TABLES_PER_TOURNAMENT}"
            players = [f"P{j:02d}" for j in range(1, max(6, 4 * len(chunk)) + 1)]  # 6 at least: 2 tables of 3
            server.call("POST", "/api/tournaments", {"name": name, "seed": 0})
            server.call("POST", f"/api/tournaments/{name}/players", {"players": players})
            view = server.call("POST", f"/api/tournaments/{name}/start")
            for i, seated in zip(chunk, view["rounds"][0]["tables"], strict=False):
                tables[i] = GameTable(server, str(seated["game"]), name)
                tables[i].roll_off()
    return [tables[i] for i in range(n)]


@dataclass
class Listing:
    """What one server's organiser page shows of the bench's tables: listed, and each camera's server."""

    server: Server
    listed: set[str] = field(default_factory=set)
    cameras: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)


def organiser_listings(servers: list[Server], tables: list[GameTable]) -> list[Listing]:
    """Ask each server for every bench tournament, as the organiser page does (``GET /api/tournaments/NAME``)."""
    games = {t.game for t in tables}
    listings = []
    for server in servers:
        listing = Listing(server)
        for name in sorted({t.tournament for t in tables}):
            try:
                view = server.call("GET", f"/api/tournaments/{name}")
            except ApiError as exc:
                listing.errors.append(str(exc))
                continue
            for round_ in view["rounds"]:
                for row in round_["tables"]:
                    if row["game"] in games:
                        listing.listed.add(row["game"])
                        listing.cameras[(row.get("camera") or {}).get("server") or "no camera"] += 1
        listings.append(listing)
    return listings


@dataclass
class StreamsOpen:
    """Holds the tables' sockets open once their videos ended, until the organiser pages were asked."""

    left: int
    all_ended: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def ended(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.all_ended.set()


COUNT_OCCLUDED_HELP = "judge dice under half in view like any other (default: either way is right)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """A ``farklecam serve`` the bench started, with the command that started it (a killed one starts again so)."""

    def __init__(self, command: list[str], server: Server, log: IO[str]) -> None:
        self.command, self.server, self.log = command, server, log
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def on_free_port(cls, db: str, name: str, code: str | None, log: IO[str]) -> ServerProcess:
        """A server to start on a free loopback port, on database ``db``, named ``name``, its errors to ``log``."""
        port = free_port()
        exe = Path(sys.executable).with_name("farklecam")
        command = [str(exe), "serve", "--port", str(port), "--db", db, "--name", name, "--log-level", "warning"]
        if code:
            command += ["--table-code", code]
        return cls(command, Server(f"http://127.0.0.1:{port}", code, name), log)

    def launch(self) -> None:
        """Start the process (it answers once :meth:`wait_up` returns)."""
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_up(self, timeout: float = 60.0) -> None:
        """Wait until the server takes connections.

        Raises:
            SystemExit: it exited, or did not answer within ``timeout`` seconds (it is stopped then).
        """
        assert self.process is not None
        port = int(self.server.base.rsplit(":", 1)[1])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"error: farklecam serve ({self.server.label}) exited with status "
                                 f"{self.process.returncode}")  # fmt: skip
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise SystemExit(f"error: farklecam serve ({self.server.label}) did not answer within {timeout:.0f} s")

    def start(self) -> None:
        """Start the process and wait until it answers (see :meth:`wait_up`)."""
        self.launch()
        self.wait_up()

    def kill(self) -> None:
        """Kill the process with SIGKILL, as ``kill -9`` does: it saves nothing and closes nothing on the way out."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        """Stop the process as an operator does (SIGTERM), with SIGKILL where it has not exited within 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def start_servers(count: int, db: str, code: str | None, log: IO[str]) -> list[ServerProcess]:
    """``count`` servers (``hall-1``, ``hall-2``, ...) on ``db``, started side by side; each answers on return.

    Raises:
        SystemExit: one did not come up (the others are stopped).
    """
    processes = [ServerProcess.on_free_port(db, f"hall-{k + 1}", code, log) for k in range(count)]
    try:
        for process in processes:
            process.launch()
        for process in processes:
            process.wait_up()
    except BaseException:
        for process in processes:
            process.stop()
        raise
    return processes


@dataclass
class Move:
    """A table's camera that lost its server and streams on from another (times are ``time.monotonic``)."""

    table: int
    source: str
    target: str
    lost: float  # the old server's socket closed, or refused the camera
    opened: float | None = None  # the new server's socket opened
    answered: float | None = None  # the first frame answer from the new server
    events: int | None = None  # the game's events in that answer


@dataclass
class Fleet:
    """The servers the tables stream to, the ones the bench started, and the kill it does (``--kill-after``)."""

    servers: list[Server]
    processes: list[ServerProcess] = field(default_factory=list)  # empty: servers started elsewhere
    down: set[int] = field(default_factory=set)  # servers killed and not answering again yet
    dead: set[int] = field(default_factory=set)  # servers killed: sockets to them that close are moved
    started: float = 0.0  # when the streams started
    killed: float | None = None
    restarted: float | None = None
    restart_error: str = ""
    moves: list[Move] = field(default_factory=list)

    def next_live(self, index: int) -> int:
        """The first server after ``index`` (round the list) that is not down.

        Raises:
            RuntimeError: every server is down.
        """
        for step in range(1, len(self.servers) + 1):
            other = (index + step) % len(self.servers)
            if other not in self.down:
                return other
        raise RuntimeError("no server is left to stream to")

    async def kill_and_restart(self, after: float) -> None:
        """``after`` seconds from now, kill the last server (SIGKILL) and start it again with the same command.

        It is marked down before the signal, so that every camera that loses it moves to a live one;
        it is marked up again once it takes connections.
        """
        await asyncio.sleep(after)
        last = len(self.processes) - 1
        process = self.processes[last]
        self.down.add(last)
        self.dead.add(last)
        self.killed = time.monotonic()
        await asyncio.to_thread(process.kill)
        try:
            await asyncio.to_thread(process.start)
        except SystemExit as exc:
            self.restart_error = str(exc)
            return
        self.restarted = time.monotonic()
        self.down.discard(last)


class StreamLost(Exception):
    """A camera's socket closed while it waited for the organiser pages to be asked."""


class Camera:
    """One table's camera: plays its video in real time to its server; one frame in flight, the newest sent.

    With a table the stream is its game's, and the bench plays the game between throws
    (:meth:`GameTable.on_answer`); with ``hold`` the socket stays open after the video until it is
    released. Where the server the camera streams to was killed (:attr:`Fleet.dead`), the camera
    opens the same game's socket on the next live server and streams on from the video's current
    frame, as players reopening the table's page elsewhere do (:class:`Move`); any other lost
    socket is the bench's error.
    """

    def __init__(
        self,
        fleet: Fleet,
        home: int,
        video: Video,
        table: GameTable | None = None,
        hold: StreamsOpen | None = None,
        number: int = -1,
    ) -> None:
        self.fleet, self.where, self.video, self.table, self.hold, self.number = fleet, home, video, table, hold, number
        self.result = TableResult(video, table=table)
        self.start: float | None = None  # when the video started (its clock runs on across a move)
        self.over = False  # the video ended
        self.told_hold = False  # the hold was told the video ended
        self.move: Move | None = None  # the move whose first answer is awaited

    async def run(self, delay: float) -> TableResult:
        """Wait ``delay`` seconds, then stream the video (moving where the server dies); the table's result."""
        import websockets
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        try:
            await asyncio.sleep(delay)
            while True:
                server = self.fleet.servers[self.where]
                url = server.socket("-" if self.table is None else self.table.game)
                try:
                    async with websockets.connect(url, max_size=None, origin=server.base) as ws:  # type: ignore[arg-type]
                        if self.move is not None:
                            self.move.opened = time.monotonic()
                        if self.start is None:
                            self.start = time.monotonic()
                        if not self.over:
                            await self._stream(ws, server)
                            self.result.seconds = time.monotonic() - self.start
                            self.over = True
                            self._ended()
                        await self._held(ws)
                    return self.result
                except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError, StreamLost):
                    if self.where not in self.fleet.dead:
                        raise
                    self._moving(server)
        finally:
            self._ended()  # a table that failed before its video ended: the others need not wait for it

    def _ended(self) -> None:
        """Tell the hold this camera's video is over (once)."""
        if self.hold is not None and not self.told_hold:
            self.told_hold = True
            self.hold.ended()

    async def _held(self, ws: Any) -> None:
        """Wait until the organiser pages were asked, the socket open (raises :class:`StreamLost` if it closes)."""
        if self.hold is None:
            return
        release = self.hold.release
        waits = [asyncio.create_task(release.wait()), asyncio.create_task(ws.wait_closed())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for wait in waits:
            wait.cancel()
        if not release.is_set():
            raise StreamLost

    def _moving(self, lost: Server) -> None:
        """The server died: the camera goes to the next live one, the game unchanged."""
        if self.move is None or self.move.opened is not None:  # not a failed try at the same move
            self.fleet.moves.append(Move(self.number, lost.label, "", time.monotonic()))
            self.move = self.fleet.moves[-1]
        self.where = self.fleet.next_live(self.where)
        self.move.target = self.fleet.servers[self.where].label
        if self.table is not None:
            self.table.server = self.fleet.servers[self.where]  # the players' page, and their buttons, are there now

    async def _stream(self, ws: Any, server: Server) -> None:
        """Play the video from its current frame on ``ws`` until it ends."""
        video, table, result = self.video, self.table, self.result
        assert self.start is not None
        last = -1
        while True:
            now = time.monotonic() - self.start
            index = int(now * video.fps)
            if index >= len(video.frames):
                return
            if index == last:  # the answer came before the camera's next frame
                await asyncio.sleep((index + 1) / video.fps - now)
                continue
            await ws.send(video.frames[index])
            answer = json.loads(await ws.recv())
            last = index
            if answer.get("type") != "frame":
                if answer.get("fatal"):
                    raise SystemExit(f"error: {server.socket('-')} refused the table: {answer.get('detail')}")
                continue
            result.answered += 1
            if self.move is not None and self.move.answered is None:
                self.move.answered, self.move.events = time.monotonic(), int(answer.get("events") or 0)
                if table is not None and table.moved_at is None:
                    table.moved_at = self.move.events
            settle, throw = answer.get("settle") or {}, answer.get("throw")
            if settle.get("phase") == "settled" and throw is not None:
                arrived = time.monotonic() - self.start
                result.reports.append((index, arrived, tuple(throw["faces"]), int(throw["rethrow"])))
                result.dice.append(list(throw.get("dice", [])))
            if table is None:
                continue
            if isinstance(answer.get("game"), dict):
                if "NOT SAVED" in str(answer.get("message") or ""):
                    table.unsaved += 1
                else:
                    table.acknowledge(int(answer.get("events") or 0), f"{server.label} frame")
            for message in table.tell(answer, index, video.truth):
                await ws.send(json.dumps(message))
                reply = json.loads(await ws.recv())
                if reply.get("type") == "error":
                    table.refused.append(f"telling die {message['index']}: {reply['detail']}")
                elif reply.get("events") is not None and "NOT SAVED" not in str(reply.get("message") or ""):
                    table.acknowledge(int(reply["events"]), f"{server.label} told die")
            await table.on_answer(answer, index, video.truth)


async def run_tables(
    fleet: Fleet,
    videos: list[Video],
    n: int,
    seed: int,
    tables: list[GameTable] | None = None,
    kill_after: float | None = None,
) -> tuple[list[TableResult], list[Listing]]:
    """Stream the N tables (table i to server i mod the count); with ``tables``, each to its game, then list them.

    With ``kill_after`` the last server is killed that long after the streams start, and started
    again (:meth:`Fleet.kill_and_restart`); the organiser listings are asked once it answers again.
    """
    servers = fleet.servers
    rng = np.random.default_rng(seed)
    # each server first answers one short stream: its models load once, before the clock starts
    warm = Video("warm-up", videos[0].frames[:2], videos[0].fps, videos[0].truth)
    await asyncio.gather(*(Camera(fleet, s, warm).run(0.0) for s in range(len(servers))))
    hold = StreamsOpen(n) if tables is not None else None
    cameras = [
        Camera(fleet, i % len(servers), videos[i % len(videos)], None if tables is None else tables[i], hold, i)
        for i in range(n)
    ]
    fleet.started = time.monotonic()
    tasks = [asyncio.create_task(camera.run(float(rng.uniform(0, 1)))) for camera in cameras]
    kill = None if kill_after is None else asyncio.create_task(fleet.kill_and_restart(kill_after))
    listings: list[Listing] = []
    try:
        if hold is not None and tables is not None:
            await hold.all_ended.wait()
            try:
                if kill is not None:
                    await kill  # the restarted server is asked too
                listings = await asyncio.to_thread(organiser_listings, servers, tables)
            finally:
                hold.release.set()
        results = list(await asyncio.gather(*tasks))
        if kill is not None:
            await kill
    finally:
        if kill is not None and not kill.done():
            kill.cancel()
    if tables is not None:
        await asyncio.gather(*(asyncio.to_thread(t.read_logs, servers) for t in tables))
    return results, listings


#: The line each server logs as it starts: no news, so it is left out of the servers' log shown after the summary.
SERVING = "farklecam: serving on "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, help="tables streaming at once")
    parser.add_argument("videos", type=Path, nargs="+", help="game videos with their truth (NAME.json) beside them")
    parser.add_argument(
        "--servers",
        type=int,
        default=None,
        metavar="K",
        help="start K farklecam serve processes on --db, named hall-1 ... hall-K (default 1)",
    )
    parser.add_argument(
        "--db",
        default=None,
        metavar="URL_OR_PATH",
        help="the database of the servers the bench starts: postgresql://... (shared) or an SQLite file "
        "(default: a temporary SQLite file)",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=None,
        metavar="SECONDS",
        help="kill the last server (SIGKILL) this long after the streams start, move its tables' cameras to "
        "the next live server and start it again with the same command (needs --servers 2 or more)",
    )
    parser.add_argument(
        "--url",
        action="append",
        default=[],
        help="a running server (http://HOST:PORT or ws://HOST:PORT/ws/table/-); repeat it or give a comma list "
        "for several (default: start farklecam serve)",
    )
    parser.add_argument("--games", action="store_true", help="each table plays a tournament table's game")
    parser.add_argument("--code", default=None, help="the servers' table code, where they want one")
    parser.add_argument("--jpeg-quality", type=int, default=80, help="JPEG quality of the frames sent (default 80)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tables' start offsets")
    parser.add_argument("--why", action="store_true", help="print each throw a table did not read right")
    parser.add_argument("--count-occluded", action="store_true", help=COUNT_OCCLUDED_HELP)
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("N must be at least 1")
    try:
        servers = [Server.parse(u, args.code) for given in args.url for u in given.split(",") if u.strip()]
    except ValueError as exc:
        parser.error(str(exc))
    if servers and (args.servers is not None or args.db is not None):
        parser.error("--servers and --db start servers, --url names running ones: give one or the other")
    if args.servers is not None and args.servers < 1:
        parser.error("--servers must be at least 1")
    if args.kill_after is not None and (servers or (args.servers or 1) < 2):
        parser.error("--kill-after needs two servers or more that the bench starts (--servers 2 or more)")
    if args.kill_after is not None and args.kill_after < 0:
        parser.error("--kill-after must be 0 or more seconds")
    videos = [Video.load(path, args.jpeg_quality) for path in args.videos]
    processes: list[ServerProcess] = []
    with tempfile.TemporaryDirectory(prefix="farklecam-tables-") as tmp, open(Path(tmp) / "serve.log", "w+") as log:
        try:
            if not servers:
                count, db = args.servers or 1, args.db or str(Path(tmp) / "games.sqlite3")
                if count > 1 and "://" not in db:
                    print(f"note: {count} servers on one SQLite file do not hear each other's changes; "
                          "give --db postgresql://... to share games", file=sys.stderr)  # fmt: skip
                processes = start_servers(count, db, args.code, log)
                servers = [p.server for p in processes]
            fleet = Fleet(servers, processes)
            tables = None
            if args.games:
                try:
                    tables = seat_tables(servers, args.n, f"{time.strftime('%H%M%S')}-{os.getpid()}")
                except ApiError as exc:
                    raise SystemExit(f"error: the tables could not be seated: {exc}") from exc
            results, listings = asyncio.run(run_tables(fleet, videos, args.n, args.seed, tables, args.kill_after))
        finally:
            for process in processes:
                process.stop()
        log.seek(0)
        logged = [line for line in log.read().splitlines() if SERVING not in line]
    report(args, results, listings, fleet)
    if logged:
        print(f"the servers logged {len(logged)} lines; the last:")
        for line in logged[-20:]:
            print(f"        {line}")
    return 0


def report(args: argparse.Namespace, results: list[TableResult], listings: list[Listing], fleet: Fleet) -> None:
    """Print the tables' lines and the totals (and, with games, what was recorded, listed and kept; any kill)."""
    games = args.games
    total_throws = total_right = total_extra = 0
    all_lags: list[float] = []
    servers = len(fleet.servers)
    where = f" over {servers} servers" if servers > 1 else ""
    print(f"{args.n} tables{where} on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} after the run")
    head = f"{'table':>5}  {'video':<14} {'answered/s':>10} {'throws right':>12} {'extra':>5} {'median lag s':>12}"
    print(head + (f" {'recorded':>8} {'typed':>5} {'told':>4}  server" if games else ""))
    moves = {move.table: move for move in fleet.moves}
    recorded = to_record = thrown = 0
    for i, result in enumerate(results):
        throws, right, extra, lags = result.score(count_occluded=args.count_occluded)
        total_throws, total_right, total_extra = total_throws + throws, total_right + right, total_extra + extra
        all_lags += lags
        lag = f"{statistics.median(lags):.2f}" if lags else "-"
        rate = result.answered / max(result.seconds, 1e-9)
        line = f"{i:>5}  {result.video.name:<14} {rate:>10.1f} {f'{right}/{throws}':>12} {extra:>5} {lag:>12}"
        table = result.table
        if table is not None:
            clean = sum(int(t["rethrow"]) == 0 for t in result.video.truth["throws"])
            recorded, to_record, thrown = recorded + table.recorded, to_record + clean, thrown + throws
            line += f" {f'{table.recorded}/{clean}':>8} {len(table.typed):>5} {len(table.told):>4}"
            line += f"  {table.server.label} {table.game}"
        print(line)
        if i in moves:
            print(f"        {move_line(moves[i], fleet, table)}")
        if table is not None:
            kept = table.kept_least
            unsaved = f"; {table.unsaved} answers said NOT SAVED" if table.unsaved else ""
            print(f"        acknowledged {table.acknowledged}, kept {'-' if kept is None else kept}{unsaved}")
        if args.why:
            for why in wrong_throws(result, count_occluded=args.count_occluded):
                print(f"        {why}")
            if table is not None:
                print(f"        game log: {'; '.join(table.log)}")
        if table is not None:
            for refusal in table.refused:
                print(f"        refused: {refusal}")
    rates = [r.answered / max(r.seconds, 1e-9) for r in results]
    median_lag = f"{statistics.median(all_lags):.2f} s" if all_lags else "-"
    print(
        f"all: {total_right}/{total_throws} throws right, {total_extra} extra, answered {min(rates):.1f}-"
        f"{max(rates):.1f} frames/s per table, median lag {median_lag}"
    )
    report_kill(fleet, [r.table for r in results])
    if not games:
        return
    restarted = {fleet.servers[k].label for k in fleet.dead}
    for listing in listings:
        cameras = ", ".join(f"{name} {count}" for name, count in sorted(listing.cameras.items()))
        again = " (restarted)" if listing.server.label in restarted else ""
        print(
            f"{listing.server.label}{again} lists {len(listing.listed)}/{args.n} tables (cameras: {cameras or 'none'})"
        )
        for error in listing.errors:
            print(f"        {error}")
    listed = ", ".join(f"{x.server.label} lists {len(x.listed)}/{args.n}" for x in listings)
    held = thrown - to_record
    print(f"recorded {recorded}/{to_record} throws ({held} more thrown with a die to throw again); {listed}")
    report_kept([t for r in results if (t := r.table) is not None])


def move_line(move: Move, fleet: Fleet, table: GameTable | None) -> str:
    """A moved table in a line: from where to where, when its first answer came, what it recorded since."""
    line = f"moved {move.source} -> {move.target}"
    if move.answered is None:
        line += ", no frame answered there (its video had ended)" if move.opened else ", never connected there"
    else:
        since_kill = "" if fleet.killed is None else f"{move.answered - fleet.killed:.2f} s after the kill, "
        line += f", first answer {since_kill}{move.answered - move.lost:.2f} s after its socket closed"
    if table is not None and table.moved_at is not None:
        line += f"; the game had {table.moved_at} events there, {table.recorded_after_move} throws recorded since"
    return line


def report_kill(fleet: Fleet, tables: list[GameTable | None]) -> None:
    """The kill in a few lines: when, whether the server answered again, the tables moved and their first answers."""
    if fleet.killed is None:
        return
    label = ", ".join(fleet.servers[k].label for k in sorted(fleet.dead))
    line = f"{label} killed (SIGKILL) {fleet.killed - fleet.started:.1f} s after the streams started; "
    if fleet.restarted is not None:
        line += f"answering again {fleet.restarted - fleet.killed:.1f} s after the kill (started with the same command)"
    else:
        line += f"not started again: {fleet.restart_error or 'the bench ended first'}"
    print(line)
    moves = fleet.moves
    if not moves:
        print("no table moved (no camera streamed to it then)")
        return
    routes = Counter(f"{m.source} -> {m.target}" for m in moves)
    firsts = sorted(m.answered - fleet.killed for m in moves if m.answered is not None)
    after = sum(t.recorded_after_move for t in tables if t is not None and t.moved_at is not None)
    spread = (f"first answer on the new server {firsts[0]:.2f}-{firsts[-1]:.2f} s after the kill "
              f"(median {statistics.median(firsts):.2f} s)" if firsts else "no first answer")  # fmt: skip
    unanswered = len(moves) - len(firsts)
    missing = f", {unanswered} without one" if unanswered else ""
    recorded = f"; {after} throws recorded after the moves" if any(t is not None for t in tables) else ""
    where = ", ".join(f"{route}: {count}" for route, count in routes.items())
    tables_word = "table" if len(moves) == 1 else "tables"
    print(f"moved {len(moves)} {tables_word} ({where}); {spread}{missing}{recorded}")


def report_kept(tables: list[GameTable]) -> None:
    """``acknowledged actions kept: X/Y``, and each game whose log holds fewer events than a server acknowledged."""
    acknowledged = sum(t.acknowledged for t in tables)
    kept = sum(min(t.acknowledged, t.kept_least or 0) for t in tables)
    print(f"acknowledged actions kept: {kept}/{acknowledged}")
    for i, t in enumerate(tables):
        least = t.kept_least
        if least is None:
            print(f"        lost? table {i} game {t.game}: no server gave its log")
        elif least < t.acknowledged:
            logs = ", ".join(f"{name} {count}" for name, count in sorted(t.kept.items()))
            print(f"        LOST: table {i} game {t.game}: acknowledged {t.acknowledged} ({t.acknowledged_by}), "
                  f"its log holds {logs}")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
