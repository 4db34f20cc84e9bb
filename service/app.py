"""The FastAPI app: ``create_app(settings)`` builds it; nothing happens at import time.

The lifespan opens the game database and prepares (but does not load) the dice
reader: the ONNX models are loaded by the first request that reads a picture,
so the scoring and game routes, and the tests of them, never pay for it.

Run it with ``farklecam serve`` or ``uvicorn --factory farklecam.service.app:create_app``
(settings then come from ``FARKLECAM_*`` variables). ``/docs`` is FastAPI's
Swagger page, whose script and style the browser fetches from a CDN, so it only
renders with a network; ``/openapi.json`` is served by the app itself and works
offline, as does everything the table's page at ``/`` needs. Every request and
WebSocket passes :class:`farklecam.service.security.SiteGuard` first (Host, Origin, table code).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from farklecam import __version__
from farklecam.service.db.target import DatabaseTarget
from farklecam.service.deps import READ_THREADS, Cameras, FrameReader, ReaderSlot, Tables
from farklecam.service.errors import BodySizeLimit, install_error_handlers
from farklecam.service.live_tables import LiveTables
from farklecam.service.picture_store import ThrowPictures
from farklecam.service.routes import (
    changes,
    chart,
    games,
    health,
    profiles,
    readings,
    rules,
    scoring,
    session,
    tournament,
    ws,
)
from farklecam.service.security import SiteGuard, SitePolicy, declare_table_code
from farklecam.service.serving import return_freed_memory
from farklecam.service.settings import Settings, get_settings
from farklecam.service.storage import Games, GameStore
from farklecam.service.tournament_store import TournamentStore
from farklecam.service.win_solver import BackgroundWinSolver, install

__all__ = ["STATIC_DIR", "build_reader", "check_database", "create_app"]

#: The page's files (HTML, JS, CSS), shipped in the package.
# Resolved: an editable install links each file, and the static files are served from where they really are.
STATIC_DIR = Path(__file__).resolve().with_name("static")


def build_reader(settings: Settings) -> FrameReader:
    """The real reader the settings ask for (imported here: onnxruntime is only needed once a picture comes in).

    Raises:
        ModelLoadError: the models are missing or broken.
        ProfileError: the settings' profile is unknown or cannot be read.
    """
    from farklecam.vision.reader import DiceReader, ReaderConfig

    profile = None
    if settings.profile is not None:
        from farklecam.service.profiles.store import ProfileStore

        profile = ProfileStore().open(settings.profile)
    config = ReaderConfig(straight_down=settings.straight_down, threads=READ_THREADS)  # the reads gate shares the cores
    return DiceReader(settings.model_dir, config=config, profile=profile)


def check_database(target: DatabaseTarget) -> None:
    """Open the database once (creating it, migrating its schema) and close it, so a server never starts without it.

    Raises:
        StorageError: it cannot be opened or reached, or its schema is newer than this code.
    """
    GameStore(target).close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the service.

    Args:
        settings: configuration; None reads ``FARKLECAM_*`` environment variables.

    Returns:
        The app; its lifespan opens ``settings.database`` and closes it on shutdown.
    """
    if settings is None:
        settings = get_settings()
        if settings.table_code is not None:  # `uvicorn --factory`: no `farklecam serve` prints it, so the log does
            logging.getLogger("farklecam.service").warning("farklecam: table code: %s", settings.table_code)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        return_freed_memory()  # a large picture's decode must not leave its memory in each thread's heap
        store = GameStore(settings.database)
        app.state.games = games_ = Games(store)
        app.state.pictures = pictures = ThrowPictures(store.db)
        app.state.reader = ReaderSlot(lambda: build_reader(settings), pixel_budget=settings.read_pixel_budget)
        app.state.tables = Tables(games_, pictures, live=LiveTables(store.db, settings.server))
        app.state.cameras = Cameras()
        app.state.tournaments = tournaments = TournamentStore(games_)
        solver = BackgroundWinSolver() if settings.solve_win_tables else None
        install(solver)
        try:
            yield
        finally:
            install(None)
            if solver is not None:
                solver.close()
            tournaments.close()
            games_.close()
            store.close()

    app = FastAPI(
        title="farklecam",
        version=__version__,
        summary="Read Farkle dice from pictures or a webcam, score every keep, advise, and keep a table's games.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    upload_paths = {"/api/read"}
    app.add_middleware(
        BodySizeLimit,
        limit_for=lambda path: settings.max_upload_bytes if path in upload_paths else settings.max_body_bytes,
    )
    app.add_middleware(SiteGuard, policy=SitePolicy.from_settings(settings))  # outermost: refused before any body
    install_error_handlers(app)
    for module in (health, session, rules, scoring, chart, readings, games, profiles):
        app.include_router(module.router, prefix="/api")
    app.include_router(tournament.router, prefix="/api")
    app.include_router(ws.router)
    app.include_router(changes.router)
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="page")
    _declare_security(app, required=settings.table_code is not None)
    return app


def _declare_security(app: FastAPI, required: bool) -> None:
    """Let ``/openapi.json`` name the table code, which the middleware (not a route) checks."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = declare_table_code(build(), required)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
