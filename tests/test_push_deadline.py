"""The time budget is a deadline for the whole pre-receive hook, git's work included.

git's listing and reading of a push are bounded by the budget: one git lists a push
of any number of refs, and a git still reading when the budget runs out is stopped
there. Real pushes into bare repositories; which gits ran, and whether each ran to
its end, comes from git's own trace (``GIT_TRACE2_EVENT``), not from a clock.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from spillguard.core import gitcommand
from spillguard.core.errors import GitTimeoutError
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

KEY = expand("AKIA{rand:A2:16}", "deadline")


def traced(path: Path) -> list[tuple[list[str], int | None]]:
    """Each git the trace saw start: its arguments, and its exit code (None: it never
    exited on its own, it was killed)."""
    started: dict[str, list[str]] = {}
    exited: dict[str, int] = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "start":
            started[event["sid"]] = event["argv"]
        elif event["event"] == "exit":
            exited[event["sid"]] = event["code"]
    return [(argv, exited.get(sid)) for sid, argv in started.items()]


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    """A bare repository whose main has one commit; the test installs the hook."""
    server = Server(tmp_path, object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    return server


def fast_import(server: Server, branches: int, key_at: int) -> None:
    """``branches`` branches ``b0000``..., each one commit on main adding a file of its
    own; branch ``key_at``'s file holds a key."""
    base = server.work.head()
    stream = []
    for number in range(branches):
        text = f"AWS_ID={KEY}\n" if number == key_at else f"n = {number}\n"
        stream += [
            f"commit refs/heads/b{number:04}",
            f"committer Ada Tester <ada@example.com> {1700000000 + number} +0000",
            "data 2\nc\n",
            f"from {base}",
            f"M 100644 inline f{number}.env\ndata {len(text)}\n{text}",
        ]
    server.work.git("fast-import", "--quiet", input_text="\n".join(stream) + "\n")


def test_a_push_of_many_refs_is_listed_by_one_git(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 new branches: the hook lists their commits with one git (it started one per
    ref), and the key is still credited to the branch that brings it."""
    fast_import(server, 300, key_at=217)
    install_hook(server.bare.path)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    code, output = server.push("refs/heads/b*:refs/heads/b*")
    assert code == 1, output
    assert "refs/heads/b0217  f217.env:1  AWS_CLIENT_ID" in output
    assert "300 new commit(s) on 300 ref(s)" in output
    assert len(traced(trace)) < 40


def big_text(seed: int) -> str:
    """600,000 lines, each one of a thousand, in an order the seed draws. Every line is
    on both sides many times, so git can neither set one aside as unique nor trim a
    common head or tail: its diff of two seeds takes seconds (8 s on a quiet 2-core
    machine; 0.4 s when every other line of a numbered file differed)."""
    draw = random.Random(seed)  # noqa: S311 - a reproducible shuffle, not a secret
    return "".join(f"line {draw.randrange(1000)}\n" for _ in range(600_000))


def test_a_git_still_reading_when_the_budget_runs_out_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push whose diff takes git longer than the budget: the diff is stopped at the
    deadline, not waited for, and the verdict names the budget (one object format:
    the same git diffs both)."""
    server = Server(tmp_path)
    # Sent whole and uncompressed: a delta search or zlib would cost the push seconds.
    server.work.git("config", "core.bigFileThreshold", "1m")
    server.work.git("config", "pack.compression", "0")
    server.work.write("big.txt", big_text(1))
    server.work.commit("big")
    # The server gets it before the hook (only the change is judged), linked, not sent.
    shutil.rmtree(server.bare.path)
    server.work.git("clone", "-q", "--bare", "--local", ".", str(server.bare.path))
    install_hook(server.bare.path)
    server.admin('time_budget = 0.5\non_error = "accept"\n')
    server.work.write("big.txt", big_text(2))
    server.work.commit("half of it changed")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    code, output = server.push("main")
    assert code == 0, output
    assert (
        "push accepted UNCHECKED by policy (on_error = accept): "
        "the time budget of 0.5 s ran out before the whole push was judged"
    ) in output
    diffs = [code for argv, code in traced(trace) if "diff-tree" in argv]
    assert 0 not in diffs  # each was killed, or never started


def test_no_git_starts_past_the_deadline_and_one_running_is_killed() -> None:
    command = gitcommand.command("hash-object", "--stdin")  # waits for its input
    with gitcommand.deadline(time.monotonic() + 0.2):
        with gitcommand.start(
            command, env=gitcommand.environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        ) as waiting:
            assert waiting.wait(timeout=60) < 0  # a signal ended it
        with pytest.raises(GitTimeoutError):
            gitcommand.run(gitcommand.command("version"))
        with pytest.raises(GitTimeoutError):
            gitcommand.start(command, env=gitcommand.environment())
    assert gitcommand.run([sys.executable, "-c", "pass"]).returncode == 0  # none after
