"""``spillguard install pre-push`` and real ``git push`` runs into a real bare repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable

OLD = expand("AKIA{rand:A2:16}", "pushed-long-ago")
NEW = expand("AKIA{rand:A2:16}", "pushed-now")


@pytest.fixture(autouse=True)
def _spillguard_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def run(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, check=False)


@pytest.fixture(params=["sha1", "sha256"])
def work(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[GitRepo, Callable[..., subprocess.CompletedProcess[str]]]:
    """A clone whose origin already has main, with an old key pushed before the hook;
    in both object formats (SHA-256: git alone reads the push)."""
    GitRepo(tmp_path / "origin.git", bare=True, object_format=request.param)
    repo = GitRepo(tmp_path / "work", object_format=request.param)
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    repo.write("old.py", f"key = '{OLD}'\n")
    repo.commit("old")
    repo.git("push", "-q", "origin", "main")
    installed = run([sys.executable, "-m", "spillguard", "install", "pre-push"], repo.path)
    assert installed.returncode == 0, installed.stderr

    def push(*args: str) -> subprocess.CompletedProcess[str]:
        return run(["git", "push", "-q", "origin", *args], repo.path)

    return repo, push


def remote_ref(repo: GitRepo, ref: str) -> str:
    return repo.git("ls-remote", "origin", ref).split("\t")[0]


def test_new_branch_sends_only_what_the_remote_lacks(work) -> None:
    repo, push = work
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("a.py", "x = 1\n")
    repo.commit("clean")
    result = push("feature")
    assert result.returncode == 0, result.stderr  # OLD is on the remote already: not judged
    assert "scanned 1 commit(s)" in result.stderr
    repo.write("b.py", f"y = 2\nkey = '{NEW}'\n")
    bad = repo.commit("leak")
    before = remote_ref(repo, "refs/heads/feature")
    result = push("feature")
    assert result.returncode != 0
    assert f"commit {bad[:10]}  Ada Tester <ada@example.com>" in result.stderr
    assert "Z  refs/heads/feature\n" in result.stderr
    assert "b.py:2:8  AWS_CLIENT_ID  blocking  AWS access key ID" in result.stderr
    assert "push blocked by 1 blocking finding(s)" in result.stderr
    assert NEW not in result.stderr
    assert "old.py" not in result.stderr
    assert remote_ref(repo, "refs/heads/feature") == before


def test_existing_branch_and_deletion(work) -> None:
    repo, push = work
    repo.git("push", "-q", "--no-verify", "origin", "main:doomed")
    repo.write("a.py", "x = 1\n")
    repo.commit("clean")
    result = push("main")
    assert result.returncode == 0, result.stderr
    assert "scanned 1 commit(s)" in result.stderr
    result = push(":doomed")  # a deletion sends nothing
    assert result.returncode == 0, result.stderr
    assert remote_ref(repo, "refs/heads/doomed") == ""


def test_bypass_token_skips_that_commit_and_says_so(work) -> None:
    repo, push = work
    repo.write("b.py", f"key = '{NEW}'\n")
    skipped = repo.commit("test fixture, skip-secret-scan")
    result = push("main")
    assert result.returncode == 0, result.stderr
    assert f"skipped commit {skipped[:10]}: its message contains 'skip-secret-scan'" in (
        result.stderr
    )
    assert "spillguard: push accepted: 1 commit not scanned (bypass token)" in result.stderr


def test_the_bypass_token_applies_to_its_own_commit_only(work) -> None:
    """Two commits with secrets, the first bypassed (by the server's token): rejected,
    for the second."""
    repo, push = work
    repo.write("b.py", f"key = '{NEW}'\n")
    bypassed = repo.commit("vendored, skip-soteri-security-check")
    repo.write("c.py", f"other = '{expand('AKIA{rand:A2:16}', 'second')}'\n")
    ordinary = repo.commit("ordinary")
    result = push("main")
    assert result.returncode == 1, result.stderr
    assert f"commit {ordinary[:10]}  Ada Tester" in result.stderr
    assert "c.py:1:10  AWS_CLIENT_ID  blocking" in result.stderr
    assert f"commit {bypassed[:10]}  Ada" not in result.stderr
    assert f"skipped commit {bypassed[:10]}" in result.stderr
    assert "push accepted" not in result.stderr
    assert remote_ref(repo, "refs/heads/main") != ordinary


def test_a_secret_in_a_commit_before_the_tip_blocks(work) -> None:
    repo, push = work
    repo.write("b.py", f"key = '{NEW}'\n")
    leak = repo.commit("leak")
    repo.write("b.py", "key = os.environ['KEY']\n")
    repo.commit("remove it again")
    result = push("main")
    assert result.returncode == 1, result.stderr
    assert f"commit {leak[:10]}  Ada Tester" in result.stderr
    assert "b.py:1:8  AWS_CLIENT_ID  blocking" in result.stderr
    assert "scanned 2 commit(s)" in result.stderr


@pytest.mark.parametrize("stdin", ["refs/heads/main abc\n", "a b c d e\n"])
def test_malformed_stdin_is_a_usage_error(repo: GitRepo, stdin: str) -> None:
    result = run([sys.executable, "-m", "spillguard", "hook", "pre-push"], repo.path, stdin)
    assert result.returncode == 2
    assert result.stderr.startswith("spillguard: error: pre-push: expected '<local ref> <sha>")
    assert len(result.stderr.splitlines()) == 1


def test_multi_ref_and_force_push(work) -> None:
    repo, push = work
    base = repo.head()
    repo.git("checkout", "-q", "-b", "one")
    repo.write("one.py", "x = 1\n")
    repo.commit("clean one")
    repo.git("checkout", "-q", "-b", "two", base)
    repo.write("two.py", f"key = '{NEW}'\n")
    leak = repo.commit("leak on two")
    result = push("one", "two")
    assert result.returncode != 0
    (header,) = [line for line in result.stderr.splitlines() if line.startswith("commit ")]
    assert header.startswith(f"commit {leak[:10]} ")
    assert header.endswith(" refs/heads/two")
    assert "scanned 2 commit(s)" in result.stderr
    assert (remote_ref(repo, "refs/heads/one"), remote_ref(repo, "refs/heads/two")) == ("", "")
    # rewrite the leak away and force-push: only the rewritten commit is judged
    repo.write("two.py", "key = os.environ['KEY']\n")
    repo.git("commit", "-q", "--amend", "-a", "--no-edit")
    assert push("--no-verify", "two").returncode == 0
    repo.write("two.py", "key = None\n")
    repo.git("commit", "-q", "--amend", "-a", "--no-edit")
    result = push("--force", "two")
    assert result.returncode == 0, result.stderr
    assert "scanned 1 commit(s)" in result.stderr


def test_summary_counts_commits_that_add_no_line(work) -> None:
    repo, push = work
    repo.commit("empty")
    repo.git("rm", "-q", "old.py")
    repo.commit("deletes")
    result = push("main")
    assert result.returncode == 0, result.stderr
    assert "scanned 2 commit(s), 0 file(s)" in result.stderr


def test_utf16_text_is_judged_not_skipped_as_binary(work) -> None:
    repo, push = work
    repo.write("notes.txt", f"x = 1\nkey = '{NEW}'\n".encode("utf-16"))
    repo.commit("wide")
    result = push("main")
    assert result.returncode != 0
    assert "notes.txt:2:8  AWS_CLIENT_ID  blocking  AWS access key ID" in result.stderr
