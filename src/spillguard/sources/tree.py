"""The contents of one tree (``scan --tree REV``): every file as it is at REV."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard import git

if TYPE_CHECKING:
    from spillguard.sources import Source


def iter_tree_at(repo_path: str, rev: str, *, max_size: int) -> Source:
    repo = git.open_repository(repo_path)
    tree = git.resolve_tree(repo, rev)
    return git.iter_tree(repo, tree, max_size=max_size)
