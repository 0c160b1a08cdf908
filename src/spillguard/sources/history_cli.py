"""History and tree scans by git alone: SHA-256 repositories, which libgit2 cannot open.

Revisions are checked one by one first (``git rev-parse --verify``), so a bad one
fails with the same line as in a SHA-1 repository; ``git rev-list`` then selects
the commits, and ``sources.received_cli`` diffs them as a push is diffed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.sources.gitcli import checked_revisions, git_dir_of, resolve
from spillguard.sources.received_cli import history_commits, iter_received, iter_tree_cli

if TYPE_CHECKING:
    from spillguard.core.models import Selection
    from spillguard.sources import Source


def iter_history_cli(path: str, selection: Selection, *, max_size: int) -> Source:
    """The added-line fragments of every selected commit, newest first (revisions
    are checked at the call)."""
    git_dir = git_dir_of(path)
    commits = history_commits(
        git_dir, checked_revisions(git_dir, selection), since=selection.since, until=selection.until
    )
    return iter_received(git_dir, commits, max_size=max_size)


def iter_tree_at_cli(path: str, rev: str, *, max_size: int) -> Source:
    git_dir = git_dir_of(path)
    tree = resolve(git_dir, rev, "tree")
    return iter_tree_cli(git_dir, tree, max_size=max_size)
