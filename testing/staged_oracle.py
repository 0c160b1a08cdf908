"""The tests' second opinion on the staged changes: the index against ``HEAD`` by libgit2.

The hook reads them by git alone (``sources.staged_cli``); this reading, once the
hook's own path for changes that were not plain, stays as the oracle that
tests/test_staged_cli.py compares it with, item for item.

The index is git's, not the working tree: a partially staged file (``git add -p``)
is judged as staged, and under ``git commit -a`` or ``git commit PATH`` git names a
temporary index in ``GIT_INDEX_FILE``, which the repository is opened to honour.
With an unborn ``HEAD`` (the first commit) every staged file is new. While a merge
is in progress the lines that ``MERGE_HEAD`` already has are not the commit's own,
as in a history scan of the merge commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygit2

from spillguard import git
from spillguard.sources.commits import DIFF_FLAGS, find_renames, iter_diff_fragments

if TYPE_CHECKING:
    from spillguard.sources import Source


def iter_staged(repo: pygit2.Repository, *, max_size: int) -> Source:
    index = repo.index
    if repo.head_is_unborn:
        return (
            item
            for entry in index
            for item in git.blob_items(repo, entry.id, entry.path, entry.mode, max_size)
        )
    head = repo.head.peel(pygit2.Commit).tree
    diff = find_renames(index.diff_to_tree(head, flags=DIFF_FLAGS, context_lines=0))
    others = tuple(repo[oid].peel(pygit2.Commit).tree for oid in repo.listall_mergeheads())
    return iter_diff_fragments(repo, diff, others=others, max_size=max_size)


def staged_text(repo: pygit2.Repository, path: str) -> bytes | None:
    """The staged content of ``path``, or None when it is not in the index."""
    index = repo.index
    if path not in index:
        return None
    return repo[index[path].id].peel(pygit2.Blob).data
