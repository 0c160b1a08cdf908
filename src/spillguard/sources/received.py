"""The commits a push brings into a server repository, as pre-receive sees it.

A commit is new when no existing ref reaches it (``git rev-list NEW --not --all``):
a force push brings only the commits the old history lacked, and a new branch or
tag on a commit the server already has brings none.
"""

from __future__ import annotations

import dataclasses
import subprocess
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import FileMode, SortMode

from spillguard import git
from spillguard.core import gitcommand
from spillguard.core.errors import GitError
from spillguard.core.models import Fragment, is_zero_id
from spillguard.sources.messages import parse_tag, tag_fragment

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from spillguard.core.models import RefUpdate
    from spillguard.sources import Source, SourceItem


_BLOB = int(FileMode.BLOB)
_ORDER = SortMode.TOPOLOGICAL | SortMode.REVERSE


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedCommit:
    commit: pygit2.Commit
    #: The first ref of the push (in git's order) that brings the commit.
    ref: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Received:
    #: Oldest first; a commit that several refs bring appears once.
    commits: tuple[ReceivedCommit, ...]
    #: How many new commits were left out by the cap (0 when all fit).
    over_cap: int = 0
    #: Trees and blobs that a tag names directly (``git tag NAME TREE-OR-BLOB``) with
    #: their ref: no commit carries them, so their whole content is judged.
    objects: tuple[tuple[pygit2.Tree | pygit2.Blob, str], ...] = ()
    #: Annotated tags pushed (each tag a tag names too) with their ref: their messages
    #: are judged.
    tags: tuple[tuple[pygit2.Tag, str], ...] = ()


def received_commits(
    repo: pygit2.Repository, updates: Iterable[RefUpdate], *, limit: int
) -> Received:
    """The new commits of every update, at most ``limit`` of them; deletions bring none.

    One walk from every pushed tip hides every existing ref, whatever the number of
    refs in the push; each new commit is then credited to the first ref that reaches it.
    """
    tips: list[tuple[pygit2.Oid, str]] = []
    objects: list[tuple[pygit2.Tree | pygit2.Blob, str]] = []
    tags: list[tuple[pygit2.Tag, str]] = []
    for update in updates:
        if is_zero_id(update.new):
            continue
        target = _pushed_object(repo, update.new)
        while isinstance(target, pygit2.Tag):  # an annotated tag, perhaps of a tag
            tags.append((target, update.ref))
            target = target.get_object()
        commit = _commit_of(target)
        if commit is not None:
            tips.append((commit, update.ref))
        elif isinstance(target, (pygit2.Tree, pygit2.Blob)):
            objects.append((target, update.ref))
    new = _walk(repo, [tip for tip, _ in tips])
    owners = _owners(new, tips)
    commits = tuple(ReceivedCommit(commit=commit, ref=owners[commit.id]) for commit in new)
    return Received(
        commits=commits[:limit],
        over_cap=max(0, len(commits) - limit),
        objects=tuple(objects),
        tags=tuple(tags),
    )


def _walk(repo: pygit2.Repository, tips: list[pygit2.Oid]) -> list[pygit2.Commit]:
    """``git rev-list --topo-order --reverse TIPS --not --all``, run by git itself.

    libgit2 reads the whole history behind every commit a walk hides (~0.1 s on
    20,000 commits, whatever the push); git stops early, and at once where the
    server keeps a commit-graph. git is there, since git runs this hook; should it
    fail to start, libgit2 walks instead (the same commits, topologically ordered).
    """
    if not tips:
        return []
    hidden = list(_existing_tips(repo))
    lines = [str(tip) for tip in tips] + [f"^{commit}" for commit in hidden]
    env = {**gitcommand.environment(), "GIT_NO_REPLACE_OBJECTS": "1"}  # as libgit2 reads
    try:
        completed = subprocess.run(
            gitcommand.command(
                f"--git-dir={repo.path}", "rev-list", "--topo-order", "--reverse", "--stdin"
            ),
            input="".join(f"{line}\n" for line in lines).encode(),
            capture_output=True,
            check=False,
            env=env,
        )
    except OSError:
        return list(_walker(repo, tips, hidden, _ORDER))
    if completed.returncode != 0:
        message = completed.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git rev-list failed: {message[-1] if message else completed.returncode}")
    return [repo[commit].peel(pygit2.Commit) for commit in completed.stdout.decode().split()]


def _walker(
    repo: pygit2.Repository,
    tips: list[pygit2.Oid],
    hidden: Iterable[pygit2.Oid],
    order: SortMode,
) -> pygit2.Walker:
    walker = repo.walk(tips[0], order)
    for tip in tips[1:]:
        walker.push(tip)
    for commit in hidden:
        walker.hide(commit)
    return walker


def _owners(new: list[pygit2.Commit], tips: list[tuple[pygit2.Oid, str]]) -> dict[pygit2.Oid, str]:
    """The first ref, in push order, from whose tip each new commit is reachable."""
    by_id = {commit.id: commit for commit in new}
    owners: dict[pygit2.Oid, str] = {}
    for tip, ref in tips:
        pending = [tip]
        while pending:
            object_id = pending.pop()
            if object_id in owners or object_id not in by_id:
                continue  # credited already (with its ancestors), or not new
            owners[object_id] = ref
            pending.extend(by_id[object_id].parent_ids)
    return owners


def _existing_tips(repo: pygit2.Repository) -> Iterator[pygit2.Oid]:
    """The commit of every ref the repository has before the push."""
    for reference in repo.references.iterator():
        target = _commit_of(reference)
        if target is not None:  # a tag of a tree or blob hides nothing
            yield target


def _pushed_object(repo: pygit2.Repository, object_id: str) -> pygit2.Object:
    try:
        return repo[object_id]
    except (KeyError, ValueError):
        raise GitError(f"pushed object {object_id} is missing from the repository") from None


def _commit_of(target: pygit2.Object | pygit2.Reference) -> pygit2.Oid | None:
    try:
        return target.peel(pygit2.Commit).id
    except (pygit2.InvalidSpecError, pygit2.GitError, KeyError, ValueError):
        return None


def iter_tagged_objects(repo: pygit2.Repository, received: Received, *, max_size: int) -> Source:
    """The message of every annotated tag pushed, and the whole content of every tree or
    blob a tag names, as fragments of that ref."""
    yield from tag_messages_of(repo, received.tags)
    for target, ref in received.objects:
        items: Iterable[SourceItem]
        if isinstance(target, pygit2.Blob):
            items = git.blob_items(repo, target.id, ref, _BLOB, max_size)
        else:
            items = git.iter_tree(repo, target, max_size=max_size, prefix=f"{ref}:")
        for item in items:
            yield dataclasses.replace(item, ref=ref) if isinstance(item, Fragment) else item


def tag_messages_of(repo: pygit2.Repository, tags: Iterable[tuple[pygit2.Tag, str]]) -> Source:
    """The messages of these annotated tags, each with its ref."""
    for tag, ref in tags:
        info = parse_tag(str(tag.id), repo.odb.read(tag.id)[1])[0]
        fragment = tag_fragment(info, ref)
        if fragment is not None:
            yield fragment
