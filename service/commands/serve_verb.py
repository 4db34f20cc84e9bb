"""``farklecam serve``: the web service and the table's page, on this machine only by default.

Beyond loopback (``--host 0.0.0.0``) the server answers only to its own names and
to devices that know the table code it prints at start (:mod:`farklecam.service.security`);
``--tls-self-signed`` or ``--tls-cert/--tls-key`` serve https, which a phone's
browser needs before it lends the page its camera (:mod:`farklecam.service.tls`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from farklecam.scoring.presets import preset_names
from farklecam.service.commands.base import Command, add_profile_option

__all__ = ["SERVE"]


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default=None,
        help="interface to listen on (default 127.0.0.1: this machine only; 0.0.0.0: the network, with a table code)",
    )
    parser.add_argument("--port", type=int, default=None, help="TCP port (default 8000)")
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH|URL",
        help="where games and tournaments are kept: an SQLite file (default: in the user data folder), or a "
        "postgresql://user@host/dbname URL that several servers share (also FARKLECAM_DB)",
    )
    parser.add_argument(
        "--rules", default=None, metavar="PRESET", help=f"default rule preset: {', '.join(preset_names())}"
    )
    parser.add_argument("--models", type=Path, default=None, metavar="DIR", help="folder with the ONNX models")
    add_profile_option(parser, taught=True, env="FARKLECAM_PROFILE")
    parser.add_argument(
        "--straight-down",
        action="store_true",
        default=None,
        help="the tables' cameras look straight down (within about 5 degrees): the cocked test needs no marked tray; "
        "a table whose dice show a tilted camera is read under their vertical and its tray pill says so",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=None,
        metavar="NAME",
        help="a further name the server answers to (repeatable), e.g. a DNS name for this machine; requests naming "
        "any other host are refused",
    )
    parser.add_argument(
        "--table-code",
        default=None,
        metavar="CODE",
        help="the code devices must give (6-64 letters and digits); beyond loopback one is generated if not given",
    )
    parser.add_argument("--tls-cert", type=Path, default=None, metavar="FILE", help="serve https with this PEM cert")
    parser.add_argument("--tls-key", type=Path, default=None, metavar="FILE", help="the PEM key of --tls-cert")
    parser.add_argument(
        "--tls-self-signed",
        action="store_true",
        help="serve https with a certificate made for this machine's names (kept in the user data folder); "
        "each browser warns once",
    )
    parser.add_argument(
        "--proxy-headers",
        action="store_true",
        default=None,
        help="believe X-Forwarded-For/-Proto from a reverse proxy at FORWARDED_ALLOW_IPS (default loopback); "
        "without it every client is the address it connects from",
    )
    parser.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help="this server's name where several share a --db (the organiser page shows which server each table's "
        "camera streams to; default HOST:PORT)",
    )
    parser.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    from farklecam.errors import InvalidRulesError
    from farklecam.service.app import check_database, create_app
    from farklecam.service.security import lan_addresses, served_names
    from farklecam.service.serving import server_options
    from farklecam.service.settings import Settings
    from farklecam.service.tls import check_pair, self_signed

    settings = Settings.from_env(
        host=args.host,
        port=args.port,
        db=args.db,
        rules=args.rules,
        model_dir=args.models,
        straight_down=args.straight_down,
        allow_hosts=args.allow_host,
        table_code=args.table_code,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        solve_win_tables=True,
        proxy_headers=args.proxy_headers,
        profile=args.profile,
        server_name=args.name,
    )
    if settings.profile is not None:  # an unknown profile is one line now, not a failed read at the first throw
        from farklecam.service.profiles.store import ProfileStore

        ProfileStore().open(settings.profile)
    if args.tls_self_signed:
        if settings.tls_cert is not None:
            raise InvalidRulesError("give --tls-self-signed or --tls-cert/--tls-key, not both")
        cert, key = self_signed(served_names(settings))
        settings = Settings.model_validate({**settings.model_dump(), "tls_cert": cert, "tls_key": key})
    if settings.tls_cert is not None and settings.tls_key is not None:
        check_pair(settings.tls_cert, settings.tls_key)
    check_database(settings.database)  # unreachable or too new: one line and exit 2, before any socket opens
    app = create_app(settings)

    def url(host: str) -> str:
        return f"{settings.scheme}://{f'[{host}]' if ':' in host else host}:{settings.port}/"

    sys.stderr.write(f"farklecam: serving on {url(settings.host)}  (games in {settings.database})\n")
    if not settings.is_loopback:
        shown = lan_addresses() if settings.host in ("0.0.0.0", "::") else [settings.host]
        sys.stderr.write(f"farklecam: on the table's devices open {'  '.join(url(a) for a in shown)}\n")
    if settings.table_code is not None:
        sys.stderr.write(f"farklecam: table code: {settings.table_code}  (each device's page asks for it once)\n")
    if not settings.is_loopback:
        sys.stderr.write("farklecam: anyone on this network who has the table code can read and change games\n")
        if settings.tls_cert is None:
            sys.stderr.write(
                "farklecam: note: over http a phone's browser keeps its camera from the page: add --tls-self-signed\n"
            )
    if settings.tls_cert is not None:
        sys.stderr.write(f"farklecam: https with {settings.tls_cert}\n")
    uvicorn.run(app, log_level=args.log_level, **server_options(settings))
    return 0


SERVE = Command("serve", "web service and the table's page (webcam in the browser)", _configure, _run)
