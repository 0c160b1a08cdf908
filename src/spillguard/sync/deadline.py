"""A deadline for one whole HTTP exchange: connecting, sending, the headers and the body.

A socket timeout bounds each read, not the exchange: a server that sends one byte a
second never trips it, and could hold ``sync`` for ever. Each connection urllib opens
here is watched by a timer that shuts the socket down when the deadline passes; the
read then ends at once, and the caller says the answer did not come in time.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl
    import urllib.request


class Deadline:
    """Started at creation; ``passed`` once the time is up and the sockets shut down."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if not self.passed:
                return
        _shut(sock)  # opened after the deadline: closed at once

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            watched = list(self._sockets)
        for sock in watched:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already
        sock.shutdown(socket.SHUT_RDWR)


def handlers(
    deadline: Deadline, context: ssl.SSLContext
) -> tuple[urllib.request.BaseHandler, urllib.request.BaseHandler]:
    """urllib's HTTP and HTTPS handlers, their connections watched by ``deadline``."""
    import http.client
    import urllib.request

    def connect(*args: Any, **kwargs: Any) -> socket.socket:
        sock = socket.create_connection(*args, **kwargs)
        deadline.watch(sock)  # the raw socket: TLS reads on it end too
        return sock

    class Plain(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class Secure(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class PlainHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Plain, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Secure, req, context=context)

    return PlainHandler(), SecureHandler(context=context)
