"""History scans: the commits a revision selection names, each judged on its own.

Revisions read like ``git rev-list``'s: ``REV`` (everything reachable from it),
``^REV`` (minus everything reachable from it), ``A..B`` (``B ^A``), ``A...B``
(reachable from either but not both), plus ``--all`` (every ref and ``HEAD``) and
``--branch NAME``. With none of them, ``HEAD``. ``since``/``until`` keep commits
whose committer date is in ``[since, until)``, as ``git log`` reads dates.
"""

from __future__ import annotations

import dataclasses
import shutil
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import SortMode

from spillguard import git
from spillguard.core.errors import GitError
from spillguard.sources.commits import iter_walked_commit

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.core.models import Selection
    from spillguard.sources import Source


@dataclasses.dataclass(slots=True)
class _Plan:
    include: list[pygit2.Oid] = dataclasses.field(default_factory=list)
    exclude: list[pygit2.Oid] = dataclasses.field(default_factory=list)


def iter_history(repo: pygit2.Repository, selection: Selection, *, max_size: int) -> Source:
    """The added-line fragments of every selected commit, newest first.

    Revisions are resolved now, so a bad one fails before anything is scanned.
    """
    commits = select_commits(repo, selection)
    return (
        item for commit in commits for item in iter_walked_commit(repo, commit, max_size=max_size)
    )


def select_commits(repo: pygit2.Repository, selection: Selection) -> Iterator[pygit2.Commit]:
    """The selected commits, children before parents; revisions are resolved at the call.

    git lists them where it is installed (``sources.listing``: faster than a
    libgit2 walk, which also leaves what it cached to free); libgit2 walks in the
    same order otherwise (they may differ only between commits made the same second).
    """
    if shutil.which("git") is None:
        return _walk(repo, _plan(repo, selection), selection)
    from spillguard.sources.gitcli import selected_ids

    return (repo[commit].peel(pygit2.Commit) for commit in selected_ids(repo.path, selection))


def _walk(repo: pygit2.Repository, plan: _Plan, selection: Selection) -> Iterator[pygit2.Commit]:
    if not plan.include:
        return
    walker = repo.walk(None, SortMode.TOPOLOGICAL | SortMode.TIME)
    for oid in plan.include:
        walker.push(oid)
    for oid in plan.exclude:
        walker.hide(oid)
    for commit in walker:
        when = commit.commit_time
        if selection.since is not None and when < selection.since:
            continue
        if selection.until is not None and when >= selection.until:
            continue
        yield commit


def _plan(repo: pygit2.Repository, selection: Selection) -> _Plan:
    plan = _Plan()
    plan.include.extend(_branch(repo, name) for name in selection.branches)
    if selection.all_refs:
        plan.include.extend(_all_tips(repo))
    for rev in selection.revs:
        _add_rev(repo, rev, plan)
    if not (selection.revs or selection.branches or selection.all_refs):
        plan.include.append(_commit_id(repo, "HEAD"))
    return plan


def _add_rev(repo: pygit2.Repository, rev: str, plan: _Plan) -> None:
    if rev.startswith("^"):
        plan.exclude.append(_commit_id(repo, rev[1:]))
    elif "..." in rev:
        left, right = (_commit_id(repo, side or "HEAD") for side in rev.split("...", 1))
        plan.include.extend((left, right))
        plan.exclude.extend(_common_boundary(repo, left, right))
    elif ".." in rev:
        left, right = (_commit_id(repo, side or "HEAD") for side in rev.split("..", 1))
        plan.exclude.append(left)
        plan.include.append(right)
    else:
        plan.include.append(_commit_id(repo, rev))


def _commit_id(repo: pygit2.Repository, rev: str) -> pygit2.Oid:
    if rev in {"HEAD", "@"} and repo.head_is_unborn:
        raise GitError("the repository has no commits yet (HEAD is unborn)")
    return git.resolve_commit(repo, rev).id


def _branch(repo: pygit2.Repository, name: str) -> pygit2.Oid:
    branch = repo.branches.local.get(name)
    if branch is None:
        raise GitError(f"no branch named {name!r}")
    return branch.peel(pygit2.Commit).id


def _all_tips(repo: pygit2.Repository) -> Iterator[pygit2.Oid]:
    """Every ref (and HEAD) that leads to a commit; tags of trees or blobs lead nowhere."""
    names: Iterable[str] = repo.references
    if not repo.head_is_unborn:
        names = ["HEAD", *names]
    for name in names:
        target = repo.references[name].peel()
        if isinstance(target, pygit2.Commit):
            yield target.id


def _common_boundary(
    repo: pygit2.Repository, left: pygit2.Oid, right: pygit2.Oid
) -> set[pygit2.Oid]:
    """Commits whose ancestry is exactly what ``left`` and ``right`` share.

    ``A...B`` hides every merge base; libgit2 exposes only one, so the hidden set
    is found from the symmetric difference itself: the tips that are not in it,
    and the parents of its commits that are not in it.
    """
    only: dict[pygit2.Oid, pygit2.Commit] = {}
    for tip, other in ((left, right), (right, left)):
        walker = repo.walk(tip)
        walker.hide(other)
        only.update((commit.id, commit) for commit in walker)
    boundary = {tip for tip in (left, right) if tip not in only}
    for commit in only.values():
        boundary.update(parent for parent in commit.parent_ids if parent not in only)
    return boundary
