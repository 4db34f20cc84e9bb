"""How uvicorn runs the app for ``farklecam serve``: whom it believes, how long it waits, how much it buffers.

uvicorn's defaults suit a server behind a proxy on a trusted network, not one a phone
on a home network or a page in a browser can reach:

* It believes ``X-Forwarded-For`` from loopback, so any local client could claim any
  address and each wrong table code would count against a different one. Here the
  forwarded headers are believed only with ``--proxy-headers``
  (:attr:`~farklecam.service.settings.Settings.proxy_headers`), from the addresses in
  ``FORWARDED_ALLOW_IPS`` (loopback by default).
* It waits for a request's head for ever: a client that connects and sends nothing,
  or a header a byte a minute, holds a connection (and a file descriptor) as long as
  it likes; so does one that opens a WebSocket's upgrade request and never ends it.
  :class:`HeadTimeoutProtocol` answers 408 and closes when a request's head (the
  upgrade request of a WebSocket too) is not complete :data:`HEAD_TIMEOUT` seconds
  after its first byte, or after the connection opened.
* It buffers WebSocket messages of up to 16 MiB; the page's frames are limited to
  ``max_frame_bytes``, so a larger message is refused by the protocol before it is
  held whole.

And glibc's allocator, left to itself, keeps what a large picture's decode freed:
:func:`return_freed_memory` makes it give such blocks back at once.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from farklecam.service.settings import Settings

__all__ = [
    "HEAD_TIMEOUT",
    "MMAP_THRESHOLD",
    "WS_SLACK_BYTES",
    "HeadTimeoutProtocol",
    "return_freed_memory",
    "server_options",
]

log = logging.getLogger("farklecam.service")

#: Seconds a client has to send a request's whole head (request line and headers) once it starts, or
#: once it connects. A browser sends its head in one packet; ten seconds leave room for a poor phone link.
HEAD_TIMEOUT = 10.0

#: Bytes a WebSocket message may have past ``max_frame_bytes`` before the protocol refuses it unread: a
#: frame a little too large still reaches the page's stream, which says why it was refused.
WS_SLACK_BYTES = 64 * 1024

_TIMEOUT_BODY = b"the request's head did not arrive in time\n"
_TIMEOUT_ANSWER = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's head (see the module docstring).

    The deadline runs from the connection's opening, and on a kept-alive connection from the first
    byte of each next request (uvicorn's own keep-alive timeout covers the silence before it); it
    ends when the head is complete, so a long upload's body is not cut short by it.

    Attributes:
        head_timeout: the seconds allowed (tests use a subclass with a short one).
    """

    head_timeout: float = HEAD_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the deadline for the first request's head."""
        self._head_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Start the deadline at a new request's first byte; end it once the head is complete."""
        if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()
        scope = self.scope
        super().data_received(data)
        if self.scope is not scope:  # a request's head was parsed: its body and answer take their own time
            self._disarm()

    def handle_websocket_upgrade(self, event: Any) -> None:
        """The upgrade request's head is complete: the WebSocket protocol takes the connection over."""
        self._disarm()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        """No deadline outlives its connection."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_timeout, self._timed_out)

    def _disarm(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            assert self._head_timer is not None
            self._head_timer.cancel()
            self._head_timer = None

    def _timed_out(self) -> None:
        """Answer 408 and close: the client took too long to say what it wants."""
        self._head_timer = None
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        log.info("closed the connection of %s: no complete request head within %.0f s", client, self.head_timeout)
        self.transport.write(_TIMEOUT_ANSWER)
        self.transport.close()


def server_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run`` (and ``uvicorn.Config``) for a server with ``settings``.

    Args:
        settings: the server's settings (address, TLS pair, frame limit, whether a proxy is trusted).

    Returns:
        Address, TLS files, the protocol with the head deadline, whether forwarded headers are believed,
        and the WebSocket message limit.
    """
    return {
        "host": settings.host,
        "port": settings.port,
        "ssl_certfile": None if settings.tls_cert is None else str(settings.tls_cert),
        "ssl_keyfile": None if settings.tls_key is None else str(settings.tls_key),
        "http": HeadTimeoutProtocol,
        "proxy_headers": settings.proxy_headers,
        "ws_max_size": settings.max_frame_bytes + WS_SLACK_BYTES,
    }


#: Bytes from which glibc serves an allocation from its own memory map, returned to the system when freed.
MMAP_THRESHOLD = 1024 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc's malloc.h)


def return_freed_memory() -> bool:
    """Make glibc give blocks of :data:`MMAP_THRESHOLD` bytes or more back to the system as soon as they are freed.

    glibc raises its own threshold to the size of the largest block freed (up to 32 MiB), so after one
    large picture every temporary under 32 MiB of a decode or read is carved from a thread's heap and
    kept there once freed; the 16 threads of a full line of uploads then each keep their own. Sixteen
    concurrent uploads of a 39.7-megapixel PNG, decoded one at a time: peak 806 MB and 579 MB kept
    afterwards with glibc's default, 411 MB and 184 MB kept with this (the loaded server: 178 MB).
    A fixed threshold also turns that adjustment off.

    Returns:
        Whether the allocator took the setting (False off glibc, where there is nothing to set).
    """
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError, TypeError):
        return False
