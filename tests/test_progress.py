"""The progress line: on a terminal's stderr during history scans, and nowhere else."""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.scanning import parallel
from spillguard.scanning.progress import NullProgress, TerminalProgress, progress_for
from testing.gitrepo import GitRepo
from testing.reports import sample_ruleset
from testing.terminal import read_all, run_on_terminal
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def test_terminal_progress_is_a_bar_with_count_rate_and_eta() -> None:
    primary, secondary = os.openpty()
    with os.fdopen(secondary, "w") as terminal:
        progress = TerminalProgress(terminal)
        progress.start(4, "commits")
        for done in range(1, 5):
            progress.update(done)
        progress.finish()
    shown = read_all(primary)
    os.close(primary)
    assert "━" in shown  # a bar
    assert "4/4" in shown
    assert "commits/s" in shown
    assert "ETA" in shown


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
    assert "3/3" in run.terminal
    assert "commits/s" in run.terminal
    assert "ETA" in run.terminal
    assert "commits/s" not in run.piped  # the report itself carries none of it


def test_no_progress_when_stderr_is_not_a_terminal_or_quiet(history: Path) -> None:
    piped = scan_history(history, stream="stdout")
    assert piped.code == 1
    assert "commits/s" not in piped.piped + piped.terminal
    quiet = scan_history(history, "--quiet", "--format", "json", stream="stderr")
    assert "commits/s" not in quiet.terminal


class Recorded:
    """A Progress that keeps every count it is told."""

    def __init__(self) -> None:
        self.counts: list[int] = []
        self.total = 0
        self.unit = ""

    def start(self, total: int, unit: str) -> None:
        self.total, self.unit = total, unit

    def update(self, done: int) -> None:
        self.counts.append(done)

    def finish(self) -> None:
        self.counts.append(self.total)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_count_moves_within_a_chunk_on_every_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """Workers count commits as they go: the bar is not stuck at 0 until a chunk ends."""
    repo = GitRepo(tmp_path / "repo")
    body = "".join(f"line {n} of text\n" for n in range(300))
    stream = "".join(
        f"commit refs/heads/main\ncommitter A <a@b> {1700000000 + n} +0000\ndata 1\nc\n"
        f"M 644 inline f{n % 7}.txt\ndata {len(body) + len(str(n))}\n{n}{body}\n"
        for n in range(600)
    )
    repo.git("fast-import", "--quiet", input_text=stream)
    commits = repo.git("rev-list", "main").split()
    monkeypatch.setattr(parallel, "REDRAW_INTERVAL", 0.001)
    shown = Recorded()
    result = parallel.scan_commits(
        str(repo.path / ".git"),
        commits,
        sample_ruleset(),
        max_size=1 << 20,
        jobs=jobs,
        progress=shown,
    )
    assert result.stats.commits == 600
    assert shown.counts[-1] == 600
    assert shown.counts == sorted(shown.counts)
    assert set(shown.counts) - {0, 600}, shown.counts  # counted along the way
