"""The organiser's page follows the server's change feed (``/ws/changes``) instead of asking on a timer.

In a real headless Chromium (Debian's, as in :mod:`tests.service.test_page`) the page opens
the feed; a table played through the HTTP API shows on the page within two seconds, and
the page asks for the tournament only when a change names it (a burst of changes once).
When the server closes the feed and then refuses it, the page says "reconnecting…",
still catches up by its slow fetch every 10 s, tries again with growing pauses, and is
live again once the server takes the feed back. Where the server wants a table code, the
page asks for it once and its feed sends it. With two server processes on one PostgreSQL
database (``FARKLECAM_TEST_POSTGRES``; without it that test skips), a table played on one
shows within two seconds on the organiser's page of the other (``LISTEN``/``NOTIFY``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farklecam.service.app import create_app
from farklecam.service.db.target import PostgresTarget
from farklecam.service.settings import Settings
from tests.service.databases import postgres_schema
from tests.service.servers import server
from tests.service.test_page import (  # noqa: F401 (the fixtures browser_kit and served)
    ExampleReader,
    ThreadedServer,
    browser_kit,
    launch,
    serve_with,
    served,
)

PLAYERS = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
LISTING = "/api/tournaments/cup"
LIVE = '#live-status[data-state="ok"]'
# Whether the row of the table playing `game` says `text`.
ROW_SAYS = "([game, text]) => (document.querySelector(`tr[data-game='${game}']`)?.textContent || '').includes(text)"


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    data: dict[str, Any] = response.json()
    return data


def seat_round_1(url: str) -> dict[str, Any]:
    """Create the tournament "cup", sign six players up and seat round 1 (two tables); its first table."""
    _ok(httpx.post(f"{url}/api/tournaments", json={"name": "cup", "seed": 1}))
    _ok(httpx.post(f"{url}/api/tournaments/cup/players", json={"players": PLAYERS}))
    table: dict[str, Any] = _ok(httpx.post(f"{url}/api/tournaments/cup/start"))["rounds"][0]["tables"][0]
    return table


def roll_off(url: str, table: dict[str, Any]) -> None:
    """Each player of `table` throws one die for who starts: the first a 6, the others a 1."""
    for n, player in enumerate(table["players"]):
        throw = {"type": "rolloff", "player": player, "face": 6 if n == 0 else 1}
        _ok(httpx.post(f"{url}/api/games/{table['game']}/actions", json=throw))


def listing_gets(requests: list[Any]) -> list[Any]:
    """The page's requests for the tournament it shows."""
    return [r for r in requests if r.method == "GET" and urlsplit(r.url).path == LISTING]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_organiser_page_shows_a_table_played_elsewhere_within_two_seconds_and_never_polls_while_live(
    browser_kit: Any,  # noqa: F811
    served: ThreadedServer,  # noqa: F811
) -> None:
    table = seat_round_1(served.url)
    game, first = table["game"], table["players"][0]
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            feeds: list[str] = []
            page.on("websocket", lambda ws: feeds.append(urlsplit(ws.url).path))
            page.goto(f"{served.url}/organiser.html?t=cup")
            page.wait_for_selector(LIVE)
            assert page.inner_text("#live-status") == "live" and feeds == ["/ws/changes"]
            page.wait_for_function(ROW_SAYS, arg=[game, "roll off"])
            page.wait_for_timeout(1000)  # the fetch that catches up once the feed is open is over
            requests: list[Any] = []
            page.on("request", lambda r: requests.append(r))
            # A refused action's reason stays through the live fetches, until dismissed.
            page.fill("#new-name", "cup")
            page.click("#new-form button[type=submit]")
            page.wait_for_selector("#errors p")
            page.wait_for_timeout(3000)  # longer than the two seconds the page used to poll at
            assert listing_gets(requests) == []  # nothing changed: nothing asked
            # The table plays its roll-off and a turn through the API: six changes in a burst.
            roll_off(served.url, table)
            for n, text in enumerate(["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]):
                _ok(httpx.post(f"{served.url}/api/games/{game}/actions", json={"text": text, "expected_events": 3 + n}))
            played = time.monotonic()
            page.wait_for_function(ROW_SAYS, arg=[game, f"{first} 1100"], timeout=2000)
            assert time.monotonic() - played < 2
            page.wait_for_timeout(1000)  # a change heard while fetching is fetched once more, after a pause
            fetched = len(listing_gets(requests))
            assert 1 <= fetched <= 3, fetched  # the burst of six fetched once or twice, not once a change
            assert page.is_visible("#errors p") and page.is_hidden("#banner")
            page.wait_for_timeout(3000)
            assert len(listing_gets(requests)) == fetched  # and no asking on a timer since
            assert page.inner_text("#live-status") == "live"
            page.click("#errors p .dismiss")
            assert page.locator("#errors p").count() == 0
        finally:
            browser.close()


class FeedSwitch:
    """ASGI wrapper around the app: :meth:`cut` closes every open change feed from the server's side, and
    while :attr:`refusing` a new one is turned away at its handshake (counted in :attr:`refused`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.refusing = False
        self.refused = 0
        self.open: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def cut(self) -> None:
        """Close the open feeds (called from the test's thread)."""
        for loop, event in list(self.open):
            loop.call_soon_threadsafe(event.set)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket" or scope["path"] != "/ws/changes":
            await self.app(scope, receive, send)
            return
        if self.refusing:
            self.refused += 1
            await receive()  # the handshake
            await send({"type": "websocket.close", "code": 1013})  # before accepting: HTTP 403
            return
        cut = asyncio.Event()
        entry = (asyncio.get_running_loop(), cut)
        gone: Message = {"type": "websocket.disconnect", "code": 1012}

        async def receive_until_cut() -> Message:
            heard = asyncio.ensure_future(receive())
            waited = asyncio.ensure_future(cut.wait())
            await asyncio.wait({heard, waited}, return_when=asyncio.FIRST_COMPLETED)
            waited.cancel()
            if heard.done():
                return heard.result()
            heard.cancel()
            return gone

        self.open.add(entry)
        try:
            await self.app(scope, receive_until_cut, send)
        finally:
            self.open.discard(entry)
        if cut.is_set():
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1012})  # "service restart"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_organiser_page_says_reconnecting_when_the_feed_is_lost_and_catches_up_by_a_slow_fetch(
    browser_kit: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    switch = FeedSwitch(create_app(Settings(db_path=tmp_path / "games.sqlite3")))
    with ThreadedServer(switch) as server, browser_kit.sync_playwright() as p:
        table = seat_round_1(server.url)
        game, first = table["game"], table["players"][0]
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.goto(f"{server.url}/organiser.html?t=cup")
            page.wait_for_selector(LIVE)
            page.wait_for_function(ROW_SAYS, arg=[game, "roll off"])
            requests: list[Any] = []
            page.on("request", lambda r: requests.append(r))
            # The server closes the feed and turns the page's attempts away.
            switch.refusing = True
            switch.cut()
            page.wait_for_selector('#live-status[data-state="warn"]', timeout=5000)
            lost = time.monotonic()
            assert page.inner_text("#live-status") == "reconnecting…"
            assert "every 10 s" in page.get_attribute("#live-status", "title")
            roll_off(server.url, table)  # no feed to say so: the slow fetch finds it
            page.wait_for_function(ROW_SAYS, arg=[game, "awaiting roll"], timeout=15_000)
            assert time.monotonic() - lost < 13
            assert listing_gets(requests)  # found by asking
            assert page.inner_text("#live-status") == "reconnecting…"
            assert switch.refused <= 6, switch.refused  # tried again with growing pauses, not on and on
            # The server takes the feed back: live again, and a change shows within two seconds.
            switch.refusing = False
            page.wait_for_selector(LIVE, timeout=25_000)
            page.wait_for_timeout(1000)  # the fetch that catches up once the feed is open is over
            _ok(httpx.post(f"{server.url}/api/games/{game}/actions", json={"text": "roll 1,1,1,1,2,3"}))
            played = time.monotonic()
            page.wait_for_function(ROW_SAYS, arg=[game, "awaiting keep"], timeout=2000)
            assert time.monotonic() - played < 2 and first in page.inner_text(f'tr[data-game="{game}"]')
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_organiser_page_asks_once_for_the_table_code_and_its_feed_carries_it(
    browser_kit: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    code = "TBL-4821"
    with serve_with(ExampleReader, tmp_path / "games.sqlite3", table_code=code) as server:
        headers = {"X-Table-Code": code}
        _ok(httpx.post(f"{server.url}/api/tournaments", json={"name": "cup", "seed": 1}, headers=headers))
        with browser_kit.sync_playwright() as p:
            browser = launch(browser_kit, p, None)
            try:
                page = browser.new_page()
                asked: list[str] = []

                def answer(ask: Any) -> None:
                    asked.append(ask.message)
                    ask.accept(code)

                page.on("dialog", answer)
                feeds: list[str] = []
                page.on("websocket", lambda ws: feeds.append(ws.url))
                # Every call and the feed are refused at first; one answer serves them all.
                page.goto(f"{server.url}/organiser.html?t=cup")
                page.wait_for_selector(LIVE)
                assert len(asked) == 1 and "table code" in asked[0]
                assert feeds[-1].endswith(f"/ws/changes?code={code}")
                page.wait_for_function("document.querySelector('#summary').textContent.startsWith('0 of')")
                page.wait_for_timeout(1000)  # the fetch that catches up once the feed is open is over
                players = {"players": PLAYERS[:2]}
                _ok(httpx.post(f"{server.url}/api/tournaments/cup/players", json=players, headers=headers))
                page.wait_for_function(  # pushed, not polled (the 2 s figure is the first test's)
                    "document.querySelector('#summary').textContent.startsWith('2 of')", timeout=5000
                )
                # A stored code the server refuses is asked for again, once, and the feed follows it.
                page.evaluate("localStorage.setItem('farklecam.tableCode', 'WRONG-999')")
                page.reload()
                page.wait_for_selector(LIVE)
                assert len(asked) == 2 and feeds[-1].endswith(f"?code={code}")
                assert page.evaluate("localStorage.getItem('farklecam.tableCode')") == code
            finally:
                browser.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_organiser_page_on_one_server_shows_a_table_played_on_another_through_postgresql(
    browser_kit: Any,  # noqa: F811
) -> None:
    with postgres_schema() as url, ExitStack() as stack:
        first = stack.enter_context(server(PostgresTarget(url)))[1]
        second = stack.enter_context(server(PostgresTarget(url)))[1]
        table = seat_round_1(second)
        game = table["game"]
        with browser_kit.sync_playwright() as p:
            browser = launch(browser_kit, p, None)
            try:
                page = browser.new_page()
                page.goto(f"{first}/organiser.html?t=cup")  # the organiser's page on the first server
                page.wait_for_selector(LIVE)
                page.wait_for_function(ROW_SAYS, arg=[game, "roll off"])
                page.wait_for_timeout(1000)  # the fetch that catches up once the feed is open is over
                requests: list[Any] = []
                page.on("request", lambda r: requests.append(r))
                page.wait_for_timeout(2500)
                assert listing_gets(requests) == []
                roll_off(second, table)  # played on the second server: its NOTIFY reaches the first
                played = time.monotonic()
                page.wait_for_function(ROW_SAYS, arg=[game, "awaiting roll"], timeout=2000)
                assert time.monotonic() - played < 2 and listing_gets(requests)
            finally:
                browser.close()
