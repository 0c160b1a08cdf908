"""The commits a push brings into a server repository, as pre-receive sees it.

A commit is new when no existing ref reaches it (``git rev-list NEW --not --all``):
a force push brings only the commits the old history lacked, and a new branch or
tag on a commit the server already has brings none.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import SortMode

from spillguard.errors import GitError
from spillguard.git import is_zero_id

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.models import RefUpdate


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedCommit:
    commit: pygit2.Commit
    #: The first ref of the push (in git's order) that brings the commit.
    ref: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Received:
    #: Oldest first within each ref; a commit that several refs bring appears once.
    commits: tuple[ReceivedCommit, ...]
    #: How many new commits were left out by the cap (0 when all fit).
    over_cap: int = 0
    notices: tuple[str, ...] = ()


def received_commits(
    repo: pygit2.Repository, updates: Iterable[RefUpdate], *, limit: int
) -> Received:
    """The new commits of every update, at most ``limit`` of them; deletions bring none."""
    existing = tuple(_existing_tips(repo))
    seen: set[pygit2.Oid] = set()
    commits: list[ReceivedCommit] = []
    notices: list[str] = []
    over = 0
    for update in updates:
        if is_zero_id(update.new):
            continue
        tip = _peel_commit(repo, update.new)
        if tip is None:
            notices.append(f"{update.ref}: points at no commit; nothing to scan")
            continue
        walker = repo.walk(tip, SortMode.TOPOLOGICAL | SortMode.REVERSE)
        for hidden in existing:
            walker.hide(hidden)
        for commit in walker:
            if commit.id in seen:
                continue
            seen.add(commit.id)
            if len(commits) < limit:
                commits.append(ReceivedCommit(commit=commit, ref=update.ref))
            else:
                over += 1
    return Received(commits=tuple(commits), over_cap=over, notices=tuple(notices))


def _existing_tips(repo: pygit2.Repository) -> Iterator[pygit2.Oid]:
    """The commit of every ref the repository has before the push."""
    for reference in repo.references.iterator():
        target = _commit_of(reference)
        if target is not None:  # a tag of a tree or blob hides nothing
            yield target


def _peel_commit(repo: pygit2.Repository, object_id: str) -> pygit2.Oid | None:
    """The commit an id names, through annotated tags; None for a tree or blob."""
    try:
        target = repo[object_id]
    except (KeyError, ValueError):
        raise GitError(f"pushed object {object_id} is missing from the repository") from None
    return _commit_of(target)


def _commit_of(target: pygit2.Object | pygit2.Reference) -> pygit2.Oid | None:
    try:
        return target.peel(pygit2.Commit).id
    except (pygit2.InvalidSpecError, pygit2.GitError, KeyError, ValueError):
        return None
