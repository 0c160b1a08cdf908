"""pre-push trusts nothing a pusher can write: real ``git push`` runs with the hook.

What the remote has comes from the remote shas git hands the hook and, where the
remote-tracking refs would spare more, from the remote itself (``git ls-remote``):
a tracking ref anyone can write, or one left from before a force push, never hides
a commit. Tags of blobs and trees are judged, and so is every commit however it was
recorded (``git cherry-pick``, ``revert``, ``am`` and ``rebase`` run no pre-commit).
"""

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

OLD = expand("AKIA{rand:A2:16}", "trust-old")
NEW = expand("AKIA{rand:A2:16}", "trust-new")
#: The hook scripts run ``spillguard`` from this interpreter's environment.
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"


@pytest.fixture(params=["sha1", "sha256"])
def work(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[GitRepo, Callable[..., subprocess.CompletedProcess[str]]]:
    """A clone whose origin has main (with a key pushed before the hooks), with
    spillguard's pre-commit and pre-push hooks installed."""
    GitRepo(tmp_path / "origin.git", bare=True, object_format=request.param)
    repo = GitRepo(tmp_path / "work", object_format=request.param)
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    repo.write("old.py", f"key = '{OLD}'\n")
    repo.commit("old")
    repo.git("push", "-q", "origin", "main")
    for hook in ("pre-commit", "pre-push"):
        installed = subprocess.run(
            [sys.executable, "-m", "spillguard", "install", hook],
            cwd=repo.path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert installed.returncode == 0, installed.stderr

    def push(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "push", "-q", "origin", *args],
            cwd=repo.path,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PATH": PATH},
        )

    return repo, push


def remote_refs(repo: GitRepo) -> str:
    return repo.git("ls-remote", "origin")


def leak(repo: GitRepo, branch: str) -> str:
    """A branch off main with one commit that adds NEW, committed past the hook."""
    repo.git("checkout", "-q", "-b", branch, "main")
    repo.write(f"{branch}.py", f"key = '{NEW}'\n")
    repo.git("add", f"{branch}.py")
    repo.git("commit", "-q", "--no-verify", "-m", f"{branch}")
    return repo.head()


def test_a_tracking_ref_anyone_can_write_hides_nothing(work) -> None:
    """``refs/remotes/origin/decoy`` at the commit with the key: the remote has no
    such ref, so the commit is judged."""
    repo, push = work
    commit = leak(repo, "feature")
    repo.git("update-ref", "refs/remotes/origin/decoy", commit)
    before = remote_refs(repo)
    result = push("feature")
    assert result.returncode == 1, result.stderr
    assert "feature.py:1:8  AWS_CLIENT_ID  blocking" in result.stderr
    assert remote_refs(repo) == before


def test_a_tracking_ref_from_before_a_force_push_hides_nothing(work) -> None:
    """The key reached origin once (before the hooks) and was force-pushed away; the
    clone's ``origin/feature`` still names it. Pushing it again under another name is
    judged: the remote no longer has it."""
    repo, push = work
    leak(repo, "feature")
    repo.git("push", "-q", "--no-verify", "origin", "feature")
    bare = Path(repo.git("remote", "get-url", "origin").strip())
    main = repo.git("rev-parse", "main").strip()
    subprocess.run(
        ["git", f"--git-dir={bare}", "update-ref", "refs/heads/feature", main], check=True
    )
    assert repo.git("rev-parse", "origin/feature") != repo.git("rev-parse", "main")
    result = push("feature:refs/heads/again")
    assert result.returncode == 1, result.stderr
    assert "feature.py:1:8  AWS_CLIENT_ID  blocking" in result.stderr


def test_a_branch_off_what_the_remote_has_judges_only_the_new_commits(work) -> None:
    """The tracking refs are checked against the remote, not dropped: main's old key
    is on origin, so a new branch off main is judged on its own commit only."""
    repo, push = work
    repo.git("checkout", "-q", "-b", "clean", "main")
    repo.write("a.py", "x = 1\n")
    repo.commit("clean")
    result = push("clean")
    assert result.returncode == 0, result.stderr
    assert "scanned 1 commit(s)" in result.stderr


@pytest.mark.parametrize(("kind", "annotated"), [("blob", True), ("tree", False)])
def test_a_tag_of_a_blob_or_a_tree_is_judged(work, kind: str, annotated: bool) -> None:
    repo, push = work
    blob = repo.git("hash-object", "-w", "--stdin", input_text=f"key = '{NEW}'\n").strip()
    target = blob
    if kind == "tree":
        target = repo.git("mktree", input_text=f"100644 blob {blob}\tprod.env\n").strip()
    tag = ["tag", "-a", "-m", "stash"] if annotated else ["tag"]
    repo.git(*tag, "hidden", target)
    result = push("refs/tags/hidden")
    assert result.returncode == 1, result.stderr
    assert "AWS_CLIENT_ID  blocking" in result.stderr
    assert "refs/tags/hidden" not in remote_refs(repo)


def _cherry_pick(repo: GitRepo) -> None:
    source = leak(repo, "elsewhere")
    repo.git("checkout", "-q", "main")
    repo.git("cherry-pick", source)


def _revert(repo: GitRepo) -> None:
    """Reverting the commit that removed main's old key adds it back."""
    repo.write("old.py", "key = None\n")
    repo.commit("drop the key")
    repo.git("revert", "--no-edit", "HEAD")


def _am(repo: GitRepo) -> None:
    leak(repo, "elsewhere")
    patch = repo.git("format-patch", "-1", "--stdout")
    repo.git("checkout", "-q", "main")
    repo.git("am", "-q", input_text=patch)


def _rebase(repo: GitRepo) -> None:
    leak(repo, "elsewhere")
    repo.git("checkout", "-q", "main")
    repo.write("other.py", "y = 2\n")
    repo.commit("other")
    repo.git("checkout", "-q", "elsewhere")
    repo.git("rebase", "-q", "main")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "elsewhere")


# One object format: which git command recorded a commit does not change how it is read.
@pytest.mark.parametrize("work", ["sha1"], indirect=True)
@pytest.mark.parametrize(
    "record", [_cherry_pick, _revert, _am, _rebase], ids=["cherry-pick", "revert", "am", "rebase"]
)
def test_a_commit_recorded_without_the_pre_commit_hook_is_judged_on_push(
    work, record: Callable[[GitRepo], None]
) -> None:
    repo, push = work
    record(repo)
    result = push("main")
    assert result.returncode == 1, result.stderr
    assert "AWS_CLIENT_ID  blocking" in result.stderr
