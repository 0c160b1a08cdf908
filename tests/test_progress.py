"""The progress line: on a terminal's stderr during history scans, and nowhere else."""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.progress import NullProgress, TerminalProgress, progress_for
from testing.gitrepo import GitRepo
from testing.terminal import run_on_terminal
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_terminal_progress_shows_done_of_total_and_throughput() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = TerminalProgress(stream, clock)
    progress.start(4, "commits")
    for _ in range(4):
        clock.now += 0.5  # two commits a second
        progress.advance()
    progress.finish()
    frames = stream.getvalue().split("\r")
    assert frames[-1] == "4/4 commits  2.0 commits/s\x1b[K\n"
    assert "2/4 commits" in stream.getvalue()  # redrawn along the way


def test_progress_only_on_a_terminal_and_never_when_quiet() -> None:
    primary, secondary = os.openpty()
    with os.fdopen(secondary, "w") as terminal:
        assert isinstance(progress_for(terminal, quiet=False), TerminalProgress)
        assert isinstance(progress_for(terminal, quiet=True), NullProgress)
    os.close(primary)
    assert isinstance(progress_for(io.StringIO(), quiet=False), NullProgress)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("progress") / "repo")
    for n in range(3):
        repo.write(f"f{n}.txt", f"key = {expand('AKIA{rand:A2:16}', n)}\n")
        repo.commit(f"c{n}")
    return repo.path


def scan_history(path: Path, *flags: str, stream: str):
    argv = [sys.executable, "-m", "spillguard", "scan", "--repo", str(path), *flags]
    return run_on_terminal(argv, stream=stream, env=os.environ)


def test_history_scan_shows_progress_on_a_terminal_stderr(history: Path) -> None:
    run = scan_history(history, "--format", "json", stream="stderr")
    assert run.code == 1
    assert "3/3 commits" in run.terminal
    assert "commits/s" in run.terminal
    assert "commits/s" not in run.piped  # the report itself carries none of it


def test_no_progress_when_stderr_is_not_a_terminal_or_quiet(history: Path) -> None:
    piped = scan_history(history, stream="stdout")
    assert piped.code == 1
    assert "commits/s" not in piped.piped + piped.terminal
    quiet = scan_history(history, "--quiet", "--format", "json", stream="stderr")
    assert "commits/s" not in quiet.terminal
