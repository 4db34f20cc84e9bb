"""Who may talk to the server: the Host and Origin checks and the table code, on every request and WebSocket.

Three checks, in this order, by one ASGI middleware (:class:`SiteGuard`):

1. **Host.** A browser names the host it thinks it is talking to. A page on
   ``evil.example`` whose DNS answer is switched to this machine (DNS rebinding)
   still names ``evil.example``, so only the names this server is known by pass:
   the loopback names, ``--host`` and each ``--allow-host``. A server listening on
   every interface (``0.0.0.0`` or ``::``) also answers to this machine's host name
   (and ``NAME.local``) and to any IP address: a rebinding page always names a
   domain, never an address.
2. **Origin.** A browser says which page sent a request; a page of another
   site (or another port of this machine) may not use the API or open a
   WebSocket. Requests without an Origin (same-origin GETs, command-line
   clients) pass.
3. **Table code** (only where :attr:`Settings.table_code` is set, always beyond
   loopback): every ``/api`` call except ``GET /api/session`` carries it in the
   ``X-Table-Code`` header, a WebSocket under ``/ws`` in its ``code`` query
   parameter. Ten wrong codes from one address within a minute shut it out
   (429) until the minute is over (:mod:`farklecam.service.code_attempts`). The page's
   files (``/``, its scripts, ``/favicon.ico``) and ``/openapi.json`` need none:
   the page must load to ask for the code.

A refused HTTP request gets 403 (host, origin), 401 (code) or 429 (too many
wrong codes) with JSON ``{"detail", "error"}``. A WebSocket with a foreign host
or origin is refused before it opens (HTTP 403); one without the right code
opens, gets ``{"type": "error", "detail", "error", "fatal": true}`` and is closed
with code 4401 (4429), so the page can tell the players what to do.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import socket
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers, QueryParams
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from farklecam.service.code_attempts import WrongCodeLimit
from farklecam.service.settings import LOOPBACK_NAMES, Settings, is_ip_address
from farklecam.service.table_code import same_code

__all__ = [
    "CODE_HEADER",
    "CODE_QUERY",
    "PUBLIC_API_PATHS",
    "Refusal",
    "SiteGuard",
    "SitePolicy",
    "client_address",
    "declare_table_code",
    "lan_addresses",
    "needs_code",
    "served_names",
]

log = logging.getLogger("farklecam.service")

#: HTTP header that carries the table code.
CODE_HEADER = "X-Table-Code"
#: Query parameter that carries the table code on a WebSocket (browsers cannot set its headers).
CODE_QUERY = "code"
#: API paths open without the code (the page asks here whether it needs one).
PUBLIC_API_PATHS = frozenset({"/api/session"})

_WILDCARD = frozenset({"0.0.0.0", "::", ""})
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_PAGE_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}  # a WebSocket's page's scheme
_EXCERPT = 60


def _excerpt(text: str) -> str:
    """What was sent, quoted and cut short: an answer never echoes more than a few dozen characters."""
    return repr(text[:_EXCERPT] + ("..." if len(text) > _EXCERPT else ""))


def _split_host(value: str) -> tuple[str, int | None]:
    """``"[::1]:8000"`` -> ``("::1", 8000)``; ``"Table.LAN."`` -> ``("table.lan", None)``.

    Raises:
        ValueError: a port that is not a number.
    """
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":") or None
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name, port = value, None
    return name.rstrip("."), None if port is None else int(port)


def needs_code(path: str) -> bool:
    """Whether a request for ``path`` must carry the table code (every API route and WebSocket)."""
    if path in PUBLIC_API_PATHS:
        return False
    return path == "/api" or path.startswith(("/api/", "/ws/")) or path == "/ws"


#: The OpenAPI name of the table-code scheme.
CODE_SCHEME = "TableCode"


def declare_table_code(schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """Say in an OpenAPI ``schema`` (changed in place and returned) how the table code is sent.

    The code is checked by :class:`SiteGuard`, not by route dependencies, so FastAPI cannot
    see it: without this a generated client would not know to send ``X-Table-Code``. The
    scheme is always declared; the operations that need the code name it where this server
    has one (``required``), as one alternative beside none where it has not.
    """
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes[CODE_SCHEME] = {
        "type": "apiKey",
        "in": "header",
        "name": CODE_HEADER,
        "description": "The table code the server printed when it started (needed beyond loopback). "
        f"A WebSocket sends it as ?{CODE_QUERY}=.",
    }
    needed: list[dict[str, list[str]]] = [{CODE_SCHEME: []}] if required else [{}, {CODE_SCHEME: []}]
    for path, operations in schema.get("paths", {}).items():
        if needs_code(path):
            for operation in operations.values():
                operation["security"] = needed
    return schema


def lan_addresses() -> list[str]:
    """This machine's addresses other machines may reach it by (best effort; none when offline).

    The outgoing interface is found by "connecting" a UDP socket, which sends nothing.
    """
    found: list[str] = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            found.append(probe.getsockname()[0])
    except OSError:
        pass
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        infos = []
    for info in infos:
        address = str(info[4][0])
        ip = ipaddress.ip_address(address.partition("%")[0])
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            found.append(str(ip))
    return list(dict.fromkeys(found))


def served_names(settings: Settings, addresses: Iterable[str] | None = None) -> list[str]:
    """Every name and address the server answers to by name (the Host check, the certificate's names).

    Args:
        settings: the server's settings (``host``, ``allow_hosts``).
        addresses: this machine's LAN addresses for a server on every interface; None finds them
            (:func:`lan_addresses`).
    """
    names = [*LOOPBACK_NAMES, *settings.allow_hosts]
    if settings.host.lower() in _WILDCARD:
        hostname = socket.gethostname().lower().rstrip(".")
        if hostname:
            names += [hostname, f"{hostname.split('.')[0]}.local"]
        names += list(lan_addresses() if addresses is None else addresses)
    else:
        names.append(settings.host.lower().removeprefix("[").removesuffix("]"))
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class Refusal:
    """Why a request is turned away: its status (401 or 403), an error name and a message for people."""

    status: int
    error: str
    detail: str
    retry_after: int | None = None

    def response(self) -> JSONResponse:
        """The JSON answer ``{"detail", "error"}`` (a 401 also says which header to send, a 429 when to retry)."""
        headers = {"WWW-Authenticate": f'{CODE_HEADER} realm="farklecam"'} if self.status == 401 else {}
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return JSONResponse({"detail": self.detail, "error": self.error}, status_code=self.status, headers=headers)


class SitePolicy:
    """The names, origins and code a request must come with.

    Args:
        names: host names and addresses the server answers to.
        any_address: also answer to any IP address (a server on every interface).
        code: the table code, or None where none is needed.
        limit: the bound on wrong codes per address; None for :class:`WrongCodeLimit`'s defaults.
    """

    def __init__(
        self, names: Iterable[str], any_address: bool, code: str | None, limit: WrongCodeLimit | None = None
    ) -> None:
        self.names = frozenset(name.lower() for name in names)
        self.any_address = any_address
        self.code = code
        self.limit = WrongCodeLimit() if limit is None else limit

    @classmethod
    def from_settings(cls, settings: Settings) -> SitePolicy:
        """The policy a server with these settings enforces."""
        wildcard = settings.host.lower() in _WILDCARD
        return cls(served_names(settings, addresses=()), any_address=wildcard, code=settings.table_code)

    def check(self, scope: Scope) -> Refusal | None:
        """The reason to refuse this HTTP request or WebSocket, or None to let it through."""
        headers = Headers(scope=scope)
        host = headers.get("host")
        refusal = self._check_host(host)
        if refusal is None and "origin" in headers:
            refusal = self._check_origin(headers["origin"], host or "", str(scope.get("scheme", "http")))
        if refusal is None and self.code is not None and needs_code(scope["path"]):
            sent = headers.get(CODE_HEADER)
            if sent is None and scope["type"] == "websocket":
                sent = QueryParams(scope.get("query_string", b"")).get(CODE_QUERY)
            client = scope.get("client")
            refusal = self._check_code(sent, scope["type"] == "websocket", str(client[0]) if client else "")
        return refusal

    def _allowed(self, name: str) -> bool:
        return name in self.names or (self.any_address and is_ip_address(name))

    def _check_host(self, host: str | None) -> Refusal | None:
        if not host:
            return Refusal(403, "ForbiddenHost", "the request names no Host: this server answers only to its own names")
        try:
            name, _ = _split_host(host)
        except ValueError:
            name = ""
        if self._allowed(name):
            return None
        known = ", ".join(sorted(self.names)) + (" or an IP address" if self.any_address else "")
        return Refusal(
            403,
            "ForbiddenHost",
            f"this server answers to {known}, not {_excerpt(host)} (a page reaching it under another name may be "
            "a DNS-rebinding attack); if that name is yours, start the server with --allow-host NAME "
            "(FARKLECAM_ALLOW_HOSTS)",
        )

    def _check_origin(self, origin: str, host: str, scheme: str) -> Refusal | None:
        server_port = _DEFAULT_PORT.get(scheme, 80)
        try:
            parts = urlsplit(origin)
            origin_port = parts.port or _DEFAULT_PORT.get(parts.scheme, -1)
            name, port = _split_host(host)
        except ValueError:
            parts, origin_port, name, port = urlsplit(""), -1, "", None
        same = (
            parts.scheme == _PAGE_SCHEME.get(scheme)
            and (parts.hostname or "").rstrip(".") == name
            and origin_port == (port or server_port)
        )
        if origin != "null" and same:
            return None
        return Refusal(
            403,
            "ForbiddenOrigin",
            f"cross-site request refused: the page at {_excerpt(origin)} is not this server's page; open the page "
            "this server serves instead",
        )

    def _check_code(self, sent: str | None, websocket: bool, client: str) -> Refusal | None:
        wait = self.limit.wait(client)
        if wait > 0:
            detail = f"too many wrong table codes from this address: try again in {math.ceil(wait)} s"
            return Refusal(429, "TooManyWrongCodes", detail, retry_after=math.ceil(wait))
        if self.code is not None and same_code(sent, self.code):
            return None
        where = f"the WebSocket's ?{CODE_QUERY}= parameter" if websocket else f"the {CODE_HEADER} header"
        if not sent:
            detail = (
                f"this table needs its code (in {where}): the page asks for it; it was printed when the server started"
            )
            return Refusal(401, "TableCodeRequired", detail)
        self.limit.failed(client)
        return Refusal(401, "WrongTableCode", "wrong table code: ask whoever started the server (it printed the code)")


#: The address of the client whose request or WebSocket is being answered (:class:`SiteGuard` sets it).
_CLIENT: ContextVar[str | None] = ContextVar("farklecam_client", default=None)


def client_address() -> str | None:
    """The address of the client being answered, for bounds kept per client; None outside a request.

    It is the connection's address, or a trusted proxy's ``X-Forwarded-For`` only where the server
    was started with ``--proxy-headers``.
    """
    return _CLIENT.get()


class SiteGuard:
    """Pure ASGI middleware: every HTTP request and WebSocket passes :class:`SitePolicy` or is refused.

    Outermost, so a refused request is answered before its body is read.

    Args:
        app: the wrapped application.
        policy: what to check.
    """

    def __init__(self, app: ASGIApp, policy: SitePolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or refuse it (see the module docstring for how)."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.policy.check(scope)
        if refusal is None:
            client = scope.get("client")
            token = _CLIENT.set(str(client[0]) if client else None)
            try:
                await self.app(scope, receive, send)
            finally:
                _CLIENT.reset(token)
            return
        log.info("refused %s %s: %s", scope["type"], scope["path"][:_EXCERPT], refusal.error)
        if scope["type"] == "http":
            await refusal.response()(scope, receive, send)
            return
        websocket = WebSocket(scope, receive, send)
        if refusal.status in (401, 429):  # open it to say why: a browser shows a page nothing of a refused handshake
            await websocket.accept()
            answer = {"type": "error", "detail": refusal.detail, "error": refusal.error, "fatal": True}
            await websocket.send_json(answer)
            await websocket.close(4000 + refusal.status)
        elif "websocket.http.response" in scope.get("extensions", {}):
            await websocket.send_denial_response(refusal.response())
        else:
            await websocket.close(1008)  # before accepting: the server answers the handshake with 403
