"""Bare repositories served over git's dumb HTTP protocol on 127.0.0.1, as a web server
serves a folder: real clones and fetches over ``http://`` for the audit's clone URLs.

``hold`` makes every request wait until it is set, to keep a fetch (and so an audit)
running for as long as a test needs it; ``delay`` makes each answer wait that many
seconds (a server that answers, slowly).
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def publish(bare: Path) -> None:
    """What a dumb HTTP server needs beside the objects: ``info/refs`` and packs' list."""
    subprocess.run(["git", "--git-dir", str(bare), "update-server-info"], check=True)


class _Handler(SimpleHTTPRequestHandler):
    def __init__(
        self, *args: object, hold: threading.Event | None, delay: float, **kwargs: object
    ) -> None:
        self.hold = hold
        self.delay = delay
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requested.set()  # type: ignore[attr-defined]
        if self.hold is not None:
            self.hold.wait(60)
        time.sleep(self.delay)
        with contextlib.suppress(ConnectionError):  # the client gave up meanwhile
            super().do_GET()


@contextlib.contextmanager
def serve_folder(
    root: Path, *, hold: threading.Event | None = None, delay: float = 0.0
) -> Iterator[tuple[str, threading.Event]]:
    """Serve ``root`` until the block ends: its base URL, and an event set at the first
    request."""
    handler = functools.partial(_Handler, directory=str(root), hold=hold, delay=delay)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requested = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.requested  # type: ignore[attr-defined]
    finally:
        if hold is not None:
            hold.set()
        server.shutdown()
        server.server_close()
        thread.join()
