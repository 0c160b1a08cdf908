"""History and tree scans by git alone: SHA-256 repositories, which libgit2 cannot open.

Revisions are checked one by one first (``git rev-parse --verify``), so a bad one
fails with the same line as in a SHA-1 repository; ``git rev-list`` then selects
the commits, and ``sources.received_cli`` diffs them as a push is diffed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.core.errors import GitError
from spillguard.sources.listing import revision_arguments
from spillguard.sources.received_cli import (
    history_commits,
    history_ids,
    iter_received,
    iter_tree_cli,
)
from spillguard.sources.staged_cli import run_git

if TYPE_CHECKING:
    from spillguard.core.models import Selection
    from spillguard.sources import Source


def git_dir_of(path: str) -> str:
    found = run_git("-C", path, "rev-parse", "--absolute-git-dir")
    if found is None:
        raise GitError(f"{path}: not a git repository")
    return found.decode().strip()


def selected_ids(path: str, selection: Selection) -> list[str]:
    """The selected commits' ids, children first (revisions are checked at the call)."""
    git_dir = git_dir_of(path)
    revisions = _revisions(git_dir, selection)
    return history_ids(git_dir, revisions, since=selection.since, until=selection.until)


def iter_history_cli(path: str, selection: Selection, *, max_size: int) -> Source:
    """The added-line fragments of every selected commit, newest first (revisions
    are checked at the call)."""
    git_dir = git_dir_of(path)
    commits = history_commits(
        git_dir, _revisions(git_dir, selection), since=selection.since, until=selection.until
    )
    return iter_received(git_dir, commits, max_size=max_size)


def iter_tree_at_cli(path: str, rev: str, *, max_size: int) -> Source:
    git_dir = git_dir_of(path)
    tree = _resolve(git_dir, rev, "tree")
    return iter_tree_cli(git_dir, tree, max_size=max_size)


def _revisions(git_dir: str, selection: Selection) -> list[str]:
    """The selection's ``git rev-list`` arguments, each revision checked first, so a bad
    one fails with a message that names it."""
    for name in selection.branches:
        if (
            run_git(f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", f"refs/heads/{name}")
            is None
        ):
            raise GitError(f"no branch named {name!r}")
    for rev in selection.revs:
        bare = rev.removeprefix("^")
        for side in bare.split("...", 1) if "..." in bare else bare.split("..", 1):
            _resolve(git_dir, side or "HEAD", "commit")
    if not (selection.revs or selection.branches or selection.all_refs):
        _resolve(git_dir, "HEAD", "commit")
    return revision_arguments(selection)


def _resolve(git_dir: str, rev: str, kind: str) -> str:
    """The id of the ``kind`` (commit, tree) ``rev`` names; a GitError that names it."""
    found = None
    if not rev.startswith("-"):  # never an option to git
        found = run_git(f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", f"{rev}^{{{kind}}}")
    if found is not None:
        return found.decode().strip()
    if (
        rev in {"HEAD", "@"}
        and run_git(f"--git-dir={git_dir}", "rev-parse", "-q", "--verify", "HEAD") is None
    ):
        raise GitError("the repository has no commits yet (HEAD is unborn)")
    raise GitError(f"unknown revision {rev!r}")
