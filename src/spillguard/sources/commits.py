"""The lines one commit adds, as Fragments: the source under history, push and receive scans.

What a commit *adds*:

- an ordinary commit: the ``+`` lines of its diff against its parent, placed where
  ``git diff -U0`` puts them (``text_added``), with renames detected so that moving a
  file does not report it again (a file with a deleted file's very content always
  counts as moved; other renames are libgit2's similarity search's); a root commit is
  diffed against the empty tree;
- a merge: only the lines that **no parent had**, that is lines added relative to
  every parent (git's combined-diff view). A merge that takes a side branch's file
  as it is adds nothing, so the branch's findings are reported once, by the commits
  that introduced them; a line written while resolving a conflict is the merge's own.
  Renames are detected against the first parent only.

Each fragment is a run of consecutive added lines; ``start_line`` is its 1-based
line number in the commit's version of the file. A renamed file's other lines follow
as fragments marked with the old path (``moved_from``): the scan judges them only when
the two paths meet different rules. A message comes first (``sources.messages``), and
a PEM block an added line lies in is judged whole (``sources.pemblocks``). Deleted
files add nothing.
A symlink's target is text; a binary blob adds the printable runs its old version
lacks. Submodules (gitlinks), Git LFS pointer files and binaries over ``max_size``
are left out and yielded as ``Skipped`` so the summary can say so.
Text that is not UTF-8 is read as Latin-1, so no byte sequence stops a scan. Text
with a UTF-16 or UTF-32 byte order mark (either side of a change) is diffed decoded,
so its lines and line numbers are the text's, not its bytes'; a blob that starts with
such a mark is diffed as its bytes too, since the mark alone proves nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus, DiffFind

from spillguard import git
from spillguard.core.archives import is_archive
from spillguard.core.decode import (
    is_binary,
    skipped,
    wide_encoding,
)
from spillguard.core.models import CommitInfo, CommitWalked, is_zero_id
from spillguard.sources.blobdiff import (
    AddedLines,
    Diff,
    bytes_added,
    changes,
    members_added,
    runs_added,
    text_added,
)
from spillguard.sources.context import may_need_context
from spillguard.sources.diffparse import (
    REGULAR_MODES,
    carried_lines,
    commit_info_from,
    fragments,
    lines_by_number,
)
from spillguard.sources.messages import commit_message
from spillguard.sources.pemblocks import may_touch_block, with_touched_blocks

if TYPE_CHECKING:
    from collections.abc import Iterator

    from spillguard.sources import Source

DIFF_FLAGS = git.DIFF_FLAGS
# A deleted file adds nothing; a conflicted one cannot be committed as it is.
_NOTHING_ADDED = frozenset({DeltaStatus.DELETED, DeltaStatus.CONFLICTED})


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    """Who and when: the author and the author date in ISO 8601 UTC."""
    author, committer = commit.author, commit.committer
    return commit_info_from(
        str(commit.id),
        author.raw_name,
        author.raw_email,
        author.time,
        commit.raw_message,
        committer=committer.raw_name + b" <" + committer.raw_email + b">",
    )


def iter_commit_fragments(
    repo: pygit2.Repository, commit: pygit2.Commit, *, max_size: int, ref: str | None = None
) -> Source:
    """The fragments of added lines that ``commit`` introduces (see the module doc)."""
    parents = commit.parents
    diff = tree_diff(parents[0].tree if parents else None, commit.tree)
    others = tuple(parent.tree for parent in parents[1:])
    return iter_diff_fragments(
        repo, diff, others=others, max_size=max_size, commit=commit_info(commit), ref=ref
    )


def iter_walked_commit(
    repo: pygit2.Repository, commit: pygit2.Commit, *, max_size: int, ref: str | None = None
) -> Source:
    """``commit`` marked as walked (the summary counts every commit), then its message
    and the fragments of its files."""
    yield CommitWalked(commit=str(commit.id))
    yield from commit_message(commit_info(commit), ref)
    yield from iter_commit_fragments(repo, commit, max_size=max_size, ref=ref)


def walked_message(commit: pygit2.Commit, ref: str | None = None) -> Source:
    """``commit`` marked as walked, then its message: a merge whose own lines are not
    judged (``--no-merge-diffs``)."""
    yield CommitWalked(commit=str(commit.id))
    yield from commit_message(commit_info(commit), ref)


def iter_diff_fragments(  # noqa: PLR0913 - keyword-only knobs of one diff
    repo: pygit2.Repository,
    diff: pygit2.Diff,
    *,
    others: tuple[pygit2.Tree, ...] = (),
    max_size: int,
    commit: CommitInfo | None = None,
    ref: str | None = None,
) -> Source:
    """The added-line fragments of a diff (tree to tree, or tree to index).

    ``others`` are the trees of a merge's other parents: only lines new relative
    to each of them too are kept.
    """
    commit_id = commit.id if commit else None
    for path, item, moved_from, whole in _added_by_file(repo, diff, others, max_size):
        if isinstance(item, str):
            yield skipped(path, item, commit_id)
        else:
            yield from fragments(path, item, commit, ref, moved_from, whole=whole)


def _added_by_file(
    repo: pygit2.Repository, diff: pygit2.Diff, others: tuple[pygit2.Tree, ...], max_size: int
) -> Iterator[tuple[str, AddedLines | str, str | None, AddedLines | None]]:
    """Each file's added lines, or why it is left out; and after a renamed file's added
    lines, the lines the rename carried over, with the path they came from; each with
    the file's lines where the lines around them are judged too (``sources.context``)."""
    moved = _deleted_contents(diff)
    for delta in diff.deltas:
        if delta.status in _NOTHING_ADDED:
            continue
        new = delta.new_file
        if any(same_blob(tree, new.path, new.id) for tree in others):
            continue  # a merge that took this file from another parent adds nothing here
        reason, data = git.skip_reason(repo, new.id, new.mode, max_size)
        if reason is not None:
            yield new.path, reason, None, None
            continue
        if is_archive(data):
            yield from _archive_lines(new.path, _old_content(repo, delta), data, max_size)
            continue
        added, carried, source, removed_after = _file_lines(repo, delta, data, moved)
        primary = runs_added if is_binary(data) else text_added
        for tree in others:
            added = also_added_against(repo, tree, new.path, new.id, added, diff=primary)
            carried = also_added_against(repo, tree, new.path, new.id, carried, diff=primary)
        if others:
            removed_after = []  # as git's combined diff of a merge, which shows none
        if primary is text_added and (removed_after or may_touch_block(added)):
            added = with_touched_blocks(added, data, removed_after)
            carried = {n: line for n, line in carried.items() if n not in added}
        extra = _bytes_reading(repo, delta, data, others) if source is None else {}
        whole = lines_by_number(data) if primary is text_added and may_need_context(added) else None
        readings = ((added, None, whole), (carried, source, None), (extra, None, None))
        yield from ((new.path, lines, where, around) for lines, where, around in readings if lines)


def _archive_lines(
    path: str, old: bytes | None, data: bytes, max_size: int
) -> Iterator[tuple[str, AddedLines | str, None, None]]:
    """An archive's members' added lines, each at ``path!member``; where it cannot be
    opened within the limits, why (for ``on_unscannable``) and its printable runs."""
    found = members_added(path, old, data, max_size)
    if isinstance(found, str):
        yield path, found, None, None
        yield path, runs_added(old, data), None, None
        return
    for member, added in found:
        yield member, added, None, None


def _bytes_reading(
    repo: pygit2.Repository, delta: pygit2.DiffDelta, data: bytes, others: tuple[pygit2.Tree, ...]
) -> AddedLines:
    """The lines UTF-16/32 text adds read as its bytes too (``decode.readings``); none
    for any other file."""
    if not wide_encoding(data):
        return {}
    new = delta.new_file
    extra = bytes_added(_old_content(repo, delta), data)
    for tree in others:
        extra = also_added_against(repo, tree, new.path, new.id, extra, diff=bytes_added)
    return extra


def _old_content(repo: pygit2.Repository, delta: pygit2.DiffDelta) -> bytes | None:
    old_id = delta.old_file.id
    return None if is_zero_id(str(old_id)) else repo.odb.read(old_id)[1]


def _file_lines(
    repo: pygit2.Repository, delta: pygit2.DiffDelta, data: bytes, moved: dict[str, list[str]]
) -> tuple[AddedLines, AddedLines, str | None, list[int]]:
    """The lines the file adds, those a rename carried over, the path it came from, and
    where lines were only removed (``changes``)."""
    source = _moved(delta, moved)
    if source is not None:  # a deleted file's content under a new name: nothing added
        return {}, _carried(data, {}), source, []
    added, removed_after = changes(_old_content(repo, delta), data)
    if delta.status != DeltaStatus.RENAMED:
        return added, {}, None, removed_after
    return added, _carried(data, added), delta.old_file.path, removed_after


def _carried(data: bytes, added: AddedLines) -> AddedLines:
    """``carried_lines``; of a binary, the printable runs it does not add."""
    if not is_binary(data):
        return carried_lines(data, added)
    return {n: line for n, line in runs_added(None, data).items() if n not in added}


def tree_diff(old: pygit2.Tree | None, new: pygit2.Tree) -> pygit2.Diff:
    if old is None:
        return new.diff_to_tree(flags=DIFF_FLAGS, context_lines=0, swap=True)
    return find_renames(old.diff_to_tree(new, flags=DIFF_FLAGS, context_lines=0))


def find_renames(diff: pygit2.Diff) -> pygit2.Diff:
    """The diff with deleted and added files paired as renames by libgit2's similarity
    search, unless every added file is a deleted one's content (a renamed directory,
    say): those add nothing (``_moved``), and the search, quadratic, would take seconds
    for thousands of files and stop pairing past about a thousand."""
    contents = _deleted_contents(diff)
    added = [delta for delta in diff.deltas if delta.status == DeltaStatus.ADDED]
    if not (added and all(_moved(delta, contents) is not None for delta in added)):
        diff.find_similar(flags=DiffFind.FIND_RENAMES)
    return diff


def _deleted_contents(diff: pygit2.Diff) -> dict[str, list[str]]:
    """The paths of the regular files the diff deletes (and does not pair as renames),
    by blob id."""
    contents: dict[str, list[str]] = {}
    for delta in diff.deltas:
        if delta.status == DeltaStatus.DELETED and delta.old_file.mode in REGULAR_MODES:
            contents.setdefault(str(delta.old_file.id), []).append(delta.old_file.path)
    return contents


def _moved(delta: pygit2.DiffDelta, contents: dict[str, list[str]]) -> str | None:
    """The deleted path whose content ``delta`` adds as a regular file, or None; the
    path is taken from ``contents``, so each deletion explains one addition (a second
    copy of the same content is an added file)."""
    if delta.status != DeltaStatus.ADDED or delta.new_file.mode not in REGULAR_MODES:
        return None
    paths = contents.get(str(delta.new_file.id))
    return paths.pop() if paths else None


def _entry(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
    try:
        return tree[path]
    except KeyError:
        return None


def same_blob(tree: pygit2.Tree, path: str, object_id: pygit2.Oid) -> bool:
    entry = _entry(tree, path)
    return entry is not None and entry.id == object_id


def also_added_against(  # noqa: PLR0913 - one file of a merge, and how it is read
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    path: str,
    object_id: pygit2.Oid,
    added: AddedLines,
    *,
    diff: Diff = text_added,
) -> AddedLines:
    """The lines of ``added`` (found by ``diff``) that are also new relative to
    ``tree``'s version of ``path``."""
    entry = _entry(tree, path)
    if not added or entry is None or not isinstance(entry, pygit2.Blob):
        return added
    also = diff(entry.data, repo[object_id].peel(pygit2.Blob).data)
    return {number: line for number, line in added.items() if number in also}
