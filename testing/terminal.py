"""Run a command with stdout or stderr on a real pseudo-terminal, as a user's shell would."""

from __future__ import annotations

import os
import pty
import subprocess
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class PtyRun(NamedTuple):
    code: int
    terminal: str  # what the pseudo-terminal showed
    piped: str  # the other stream, through a pipe


def run_on_terminal(
    argv: Sequence[str], *, stream: str, env: Mapping[str, str], cwd: str | None = None
) -> PtyRun:
    """Run ``argv`` with ``stream`` ("stdout" or "stderr") on a terminal, the other piped."""
    primary, secondary = pty.openpty()
    on_tty = {"stdout": secondary} if stream == "stdout" else {"stderr": secondary}
    piped = {"stderr": subprocess.PIPE} if stream == "stdout" else {"stdout": subprocess.PIPE}
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, env=dict(env), cwd=cwd, **on_tty, **piped
    )
    os.close(secondary)
    chunks: list[bytes] = []
    while True:  # drain as it runs: a full terminal buffer would stall the child
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    out, err = process.communicate()
    other = err if stream == "stdout" else out
    code = process.returncode
    os.close(primary)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")  # the tty's onlcr
    return PtyRun(code, shown, other.decode())
