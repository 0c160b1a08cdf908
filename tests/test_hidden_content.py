"""End to end: content a pusher could hope to hide from the scan is judged everywhere.

Each case stages a change the way a hostile pusher would (a byte order mark in the
middle of a file, a secret stored as a symlink's target, ...), then shows that the
pre-commit hook blocks the commit, that a real ``git push`` into a bare repository
with the pre-receive hook is rejected, and that ``spillguard scan`` reports the same
path and line; in SHA-1 and SHA-256 repositories alike (git alone reads the latter).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.server import Server, hooked_commit, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from testing.gitrepo import GitRepo

KEY = expand("AKIA{rand:A2:16}", "hidden-content")
NOTES = "".join(f"note {number}\n" for number in range(1, 6))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Server:
    """main holds notes.txt; the pre-receive hook guards the bare repository and the
    pre-commit hook the clone."""
    server = Server(tmp_path_factory.mktemp("server"), object_format=request.param)
    server.work.write("notes.txt", NOTES)
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    installed = subprocess.run(
        [sys.executable, "-m", "spillguard", "install", "pre-commit", "--repo", "."],
        cwd=server.work.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    return server


@pytest.fixture
def pushed(server: Server) -> Iterator[Server]:
    """The server, its clone back on main (detached) for each test."""
    server.work.git("checkout", "-q", "--detach", "main")
    yield server
    (server.bare.path / "spillguard.toml").unlink(missing_ok=True)
    server.work.git("reset", "-q", "--hard")
    server.work.git("clean", "-q", "-fdx")


def scan_findings(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """``spillguard scan main..HEAD``: its exit code and each finding's ``path:line``."""
    code = main(["scan", "--repo", str(repo.path), "--format", "json", "main..HEAD"])
    report = json.loads(capsys.readouterr().out)
    return code, sorted(f"{item['path']}:{item['line']}" for item in report["findings"])


def judged_everywhere(
    server: Server, capsys: pytest.CaptureFixture[str], stage: Callable[[GitRepo], None], where: str
) -> str:
    """Stage the change, then: the pre-commit hook blocks it, the push of its commit is
    rejected, and a history scan reports it; each names ``where``. Returns what the
    pusher saw."""
    work = server.work
    stage(work)
    blocked = hooked_commit(work)
    assert blocked.returncode == 1, blocked.stderr
    assert where in blocked.stderr
    committed = hooked_commit(work, "--no-verify")
    assert committed.returncode == 0, committed.stderr
    before = server.refs()
    code, output = server.push("HEAD:refs/heads/hidden")
    assert code != 0, output
    assert "push rejected: it adds secrets" in output
    assert f"{where}  AWS_CLIENT_ID" in output
    assert KEY not in output
    assert server.refs() == before
    assert scan_findings(work, capsys) == (1, [where])
    return output


def stage_symlink(work: GitRepo) -> None:
    """A blob stored as a symlink: git keeps any content under mode 120000."""
    blob = work.git("hash-object", "-w", "--stdin", input_text=f"aws_key = {KEY}\n").strip()
    work.git("update-index", "--add", "--cacheinfo", f"120000,{blob},id_rsa")


def test_symlink_target_is_judged_as_text(pushed: Server, capsys) -> None:
    judged_everywhere(pushed, capsys, stage_symlink, "id_rsa:1")


def test_symlink_on_disk_is_judged_by_a_files_scan(tmp_path, capsys) -> None:
    (tmp_path / "creds").symlink_to(f"aws_key={KEY}")
    (tmp_path / "dir-link").symlink_to(tmp_path)
    code = main(["scan", "--files", str(tmp_path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [item["path"] for item in report["findings"]] == [f"{tmp_path}/creds"]
    assert report["skipped"] == []
