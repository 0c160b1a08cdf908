"""Tree scans by git alone: SHA-256 repositories, which libgit2 cannot open.

The revision is checked first (``git rev-parse --verify``), so a bad one fails with
the same line as in a SHA-1 repository. History scans of every repository read
their commits through ``sources.gitdiff``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.sources.gitcli import git_dir_of, resolve
from spillguard.sources.received_cli import iter_tree_cli

if TYPE_CHECKING:
    from spillguard.sources import Source


def iter_tree_at_cli(path: str, rev: str, *, max_size: int) -> Source:
    git_dir = git_dir_of(path)
    tree = resolve(git_dir, rev, "tree")
    return iter_tree_cli(git_dir, tree, max_size=max_size)
