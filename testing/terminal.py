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
    shown = read_all(primary)  # as it runs: a full terminal buffer would stall the child
    out, err = process.communicate()
    other = err if stream == "stdout" else out
    code = process.returncode
    os.close(primary)
    return PtyRun(code, shown.replace("\r\n", "\n"), other.decode())  # the tty's onlcr


def read_all(primary: int) -> str:
    """Everything written to the terminal until every writer has closed it. One read is
    not enough: the kernel hands a terminal's output to its reader in pieces, later
    ones after a delay on a busy machine."""
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
