"""The lines commits add, read from ``git diff-tree``: the fast path under history scans.

git produces the diffs of many commits several times faster than libgit2 does. This
module runs one ``git diff-tree --stdin`` over a batch of commits and turns its
output into exactly the Fragments and Skipped items that ``sources.commits`` yields
for each commit. A merge comes as git's combined diff: only the files that differ
from every parent (a file the merge took from one of them as it is adds nothing),
and in each the lines every parent lacks, which is what the simple path keeps of its
diffs against each parent; a clean merge costs git no diff at all. Wherever git's
view could differ from libgit2's, the commit (or the file) goes through
``sources.commits`` instead:

- commits that add and delete files or change a file's type (libgit2 may pair them
  as renames), merges with a file new to the first parent (it could be paired with
  one the first parent's diff deletes), and merges when git is older than 2.31 (no
  ``--diff-merges``);
- files git calls binary (``sources.commits`` judges only the new side's content),
  files with a NUL in a changed line or a byte order mark opening an added first
  line (UTF-16/32 text is diffed decoded, and as bytes), and mode-only changes;
- paths git has to quote (control characters, quotes, backslashes).

git runs with everything that could colour its diff switched off: no attributes (an
empty work tree and index, no attribute files), no replace refs, no external diff or
textconv, the plain Myers algorithm without the indent heuristic, as libgit2 diffs.
It calls files over the size limit binary (``core.bigFileThreshold``), so a text
diff from git is of a file that is neither large nor binary; binaries are judged by
their printable runs, read through one ``git cat-file`` for the chunk, and larger
text, symlinks, submodules and files that might be LFS pointers are decided by
libgit2 on the same blobs as the simple path.
"""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from spillguard import git
from spillguard.core.decode import is_binary, printable_runs, runs_by_line, skipped, wide_encoding
from spillguard.core.errors import GitError
from spillguard.core.models import CommitWalked, Skipped
from spillguard.sources.commits import (
    also_added_against,
    bytes_added,
    changes,
    commit_info,
    iter_walked_commit,
    runs_added,
    text_added,
)
from spillguard.sources.diffparse import (
    COMMIT_FORMAT,
    DIFF_TREE,
    MERGE_LOG,
    REGULAR_MODES,
    BlobHeads,
    GitDiffs,
    fragments,
    git_command,
    plain_text,
)
from spillguard.sources.gitcli import run_git
from spillguard.sources.messages import commit_message
from spillguard.sources.pemblocks import may_touch_block, with_touched_blocks

#: How every line of an LFS pointer file starts (``decode.is_lfs_pointer`` has the format).
_POINTER_PREFIXES = (b"version https://git-lfs", b"ext-", b"oid sha256:", b"size ")
#: The most lines an LFS pointer file can have: under 1024 bytes, a version line (43),
#: extension lines (80 or more each), an oid line (76) and a size line (7 or more).
_POINTER_LINES = 3 + (1024 - 43 - 76 - 7) // 80

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from spillguard.core.decode import Run
    from spillguard.core.models import CommitInfo
    from spillguard.sources import Source, SourceItem
    from spillguard.sources.commits import Diff
    from spillguard.sources.diffparse import CommitDiff, FileDiff


def usable(repo: pygit2.Repository) -> bool:
    """False without git on PATH, or when a repository-wide attribute file could
    make git's diff differ."""
    if shutil.which("git") is None:
        return False
    git_dir = Path(repo.path)
    common = git_dir / "commondir"  # a linked work tree shares the main one's info/
    shared = git_dir / common.read_text().strip() if common.is_file() else git_dir
    return not any((where / "info" / "attributes").exists() for where in (git_dir, shared))


def iter_commits_fast(
    repo: pygit2.Repository,
    commits: Sequence[str],
    *,
    max_size: int,
    refs: Mapping[str, str] | None = None,
) -> Source:
    """The items of each commit (ids), in order, as ``iter_walked_commit`` would yield
    them; ``refs`` names the ref each commit's fragments come with (a push's).

    git diffs every commit, a merge as its combined diff (where git can), in a git of
    its own that runs beside the commits' while Python judges what both wrote; libgit2
    takes every commit, and every file, git's diff could get wrong.
    """
    with tempfile.TemporaryDirectory(prefix="spillguard-") as scratch, ExitStack() as running:
        command, env = git_command(repo.path, scratch, max_size=max_size)
        ids = "".join(f"{commit}\n" for commit in commits).encode()
        diffs = GitDiffs([*command, *DIFF_TREE, COMMIT_FORMAT], env, ids, scratch, "commits")
        running.callback(diffs.close)
        merged = None
        if combined_merges():
            merges = GitDiffs([*command, *MERGE_LOG, COMMIT_FORMAT], env, ids, scratch, "merges")
            running.callback(merges.close)
            merged = iter(merges)
        heads = BlobHeads(command, env, max_size)
        running.callback(heads.close)
        binaries = _Binaries(repo, heads, max_size)
        ordered = iter(diffs)
        for commit in commits:
            ref = None if refs is None else refs.get(commit)
            diff: CommitDiff | None = _next(ordered, commit)
            if diff is not None and len(diff.parents) > 1:
                diff = None if merged is None else _next(merged, commit)
            items = None if diff is None else _commit_items(repo, diff, max_size, ref, binaries)
            if items is None:
                yield from iter_walked_commit(
                    repo, _commit(repo, commit), max_size=max_size, ref=ref
                )
            else:
                yield CommitWalked(commit=commit)
                yield from items


def _next(diffs: Iterator[CommitDiff], commit: str) -> CommitDiff:
    diff = next(diffs, None)
    if diff is None or diff.commit != commit:
        raise GitError(f"git diff-tree lost its place at commit {commit}")
    return diff


#: git gives merges' combined diffs by ``--diff-merges`` from 2.31 on; older ones are
#: left to libgit2 (the tests check both ways).
_COMBINED_SINCE = (2, 31)


@functools.cache
def combined_merges() -> bool:
    """Whether this git gives merges' combined diffs (else libgit2 diffs merges)."""
    found = re.search(rb"(\d+)\.(\d+)", run_git("version") or b"")
    return found is not None and tuple(map(int, found.groups())) >= _COMBINED_SINCE


def _commit(repo: pygit2.Repository, commit: str) -> pygit2.Commit:
    return repo[commit].peel(pygit2.Commit)


def _commit_items(
    repo: pygit2.Repository,
    diff: CommitDiff,
    max_size: int,
    ref: str | None = None,
    binaries: _Binaries | None = None,
) -> list[SourceItem] | None:
    """The commit's items, or None when only the simple path gives the exact answer."""
    statuses = {file.status for file in diff.files}
    merge = len(diff.parents) > 1
    # A merge's entries are the files that differ from every parent, with their status
    # against the first: one added there could be a file the simple path pairs as a
    # rename with one the first parent's diff deletes (which no entry shows).
    if not statuses <= ({"M", "D"} if merge else {"A", "M", "D"}) or {"A", "D"} <= statuses:
        return None  # possible renames or type changes
    # A merge's sections are only its files with lines to show (``--cc``).
    if diff.strays if merge else diff.sections != len(diff.files):
        return None
    info = diff.info or commit_info(_commit(repo, diff.commit))
    # A merge's lines are its own only where no other parent has them either.
    others = _OtherParents(repo, diff.parents[1:])
    items: list[SourceItem] = [*commit_message(info, ref)]
    for file in diff.files:
        if file.status == "D":
            continue
        if file.path.startswith(b'"'):
            return None  # a quoted path: let pygit2 name it
        try:
            path = file.path.decode("utf-8")
        except UnicodeDecodeError:
            return None
        items.extend(
            _file_items(repo, file, path, info, max_size, ref=ref, others=others, binaries=binaries)
        )
        file.added = {}  # in its fragments now: a commit of many files holds each once
    return items


class _OtherParents:
    """The trees of a merge's parents after the first, looked up on first need: most
    merges' files need git's combined diff alone."""

    def __init__(self, repo: pygit2.Repository, parents: Sequence[str]) -> None:
        self._repo = repo
        self.parents = parents
        self._trees: tuple[pygit2.Tree, ...] | None = None

    def trees(self) -> tuple[pygit2.Tree, ...]:
        if self._trees is None:
            self._trees = tuple(_commit(self._repo, parent).tree for parent in self.parents)
        return self._trees


def _file_items(  # noqa: PLR0913 - one file of one commit, and where it goes
    repo: pygit2.Repository,
    file: FileDiff,
    path: str,
    info: CommitInfo,
    max_size: int,
    *,
    ref: str | None,
    others: _OtherParents,
    binaries: _Binaries | None,
) -> Iterable[SourceItem]:
    """The file's items; ``others``, a merge's other parents.

    A merge's file is one that differs from every parent, and git's combined diff kept
    only the lines no parent has, as the simple path does pair by pair; it calls the
    file text when no side has a NUL in its first bytes, which no binary blob lacks,
    but it ends a last line that has no newline with one, so a file whose last line is
    the merge's is read.
    """
    new_id = pygit2.Oid(hex=file.new_id)
    runs = None if binaries is None or others.parents else binaries.runs_added(file)
    if runs is not None:
        return fragments(path, runs, info, ref)
    data = None
    extra: dict[int, bytes] = {}  # the bytes reading of UTF-16/32 text (decode.readings)
    # A merge's removals are not shown by git's combined diff: the simple path drops them.
    removed_after = [] if others.parents else file.removed_after
    if not plain_text(file):
        reason, data = git.skip_reason(repo, new_id, file.new_mode, max_size)
        if reason is not None:
            return (skipped(path, reason, info.id),)
        added, removed = _exact_changes(repo, file, new_id)
        removed_after = [] if others.parents else removed
        primary = runs_added if is_binary(data) else text_added
        for tree in others.trees():
            added = also_added_against(repo, tree, path, new_id, added, diff=primary)
        if wide_encoding(data):
            extra = _exact_added(repo, file, path, others.trees(), diff=bytes_added)
    elif _may_be_lfs_pointer(file) and git.is_lfs_pointer_blob(repo, new_id):
        # git diffed it as text: not binary, so only a pointer file could be left out.
        return (Skipped(path=path, reason="LFS pointer", commit=info.id),)
    else:
        added = file.added
        if others.parents and added and max(added) >= file.lines:
            data = repo.odb.read(new_id)[1]
            added = _without_missing_newline(added, data)
    binary = data is not None and is_binary(data)  # its lines are its printable runs
    if not binary and (removed_after or may_touch_block(added)):
        whole = repo.odb.read(new_id)[1] if data is None else data
        added = with_touched_blocks(added, whole, removed_after)
    return [*fragments(path, added, info, ref), *fragments(path, extra, info, ref)]


def _without_missing_newline(added: dict[int, bytes], data: bytes) -> dict[int, bytes]:
    """``added`` with the file's last line as the file has it, without a newline."""
    if not data or data.endswith(b"\n"):
        return added
    last = data.count(b"\n") + 1
    if last in added:
        added[last] = added[last].removesuffix(b"\n")
    return added


class _Binaries:
    """The printable runs of the blobs git called binary (and of their old versions),
    each read once by the chunk's ``git cat-file`` (``BlobHeads``): libgit2 would
    rebuild every version of a large binary from its pack."""

    def __init__(self, repo: pygit2.Repository, heads: BlobHeads, max_size: int) -> None:
        self._repo = repo
        self._heads = heads
        self._max_size = max_size
        self._runs: dict[str, tuple[bool, list[Run]] | None] = {}

    def runs_added(self, file: FileDiff) -> dict[int, bytes] | None:
        """``commits.runs_added`` of a regular file git called binary that the simple
        path takes for binary too (a NUL in its first bytes, no UTF-16/32 mark, within
        the size limit); None leaves the file to the usual checks."""
        if not file.binary or file.new_mode not in REGULAR_MODES:
            return None
        new = self._blob_runs(file.new_id)
        old = (False, []) if git.is_zero_id(file.old_id) else self._blob_runs(file.old_id)
        if new is None or not new[0] or old is None:
            return None
        return runs_by_line(new[1], frozenset(run for _, run in old[1]))

    def _blob_runs(self, blob: str) -> tuple[bool, list[Run]] | None:
        """Whether the blob is binary, and its printable runs; None for a blob over the
        size limit or missing (left for ``skip_reason`` to judge or report)."""
        if blob not in self._runs:
            head = self._heads.head(blob) if self._within_limit(blob) else None
            # Only the digest is kept: memory holds one blob at a time.
            self._runs[blob] = None if head is None else _binary_runs(head)
        return self._runs[blob]

    def _within_limit(self, blob: str) -> bool:
        """A blob skip_reason would read (a missing one is left for it to report)."""
        try:
            return self._repo.odb.read_header(pygit2.Oid(hex=blob))[1] <= self._max_size
        except KeyError:
            return False


def _binary_runs(data: bytes) -> tuple[bool, list[Run]]:
    """Whether a whole blob is binary, and its printable runs."""
    return is_binary(data), printable_runs(data)


def _may_be_lfs_pointer(file: FileDiff) -> bool:
    """False when the file has more lines than a pointer file can, or an added line that
    could not be one of a pointer's; no line added (only removed) proves nothing."""
    if file.lines > _POINTER_LINES:
        return False
    return all(line.startswith(_POINTER_PREFIXES) for line in file.added.values())


def _exact_changes(
    repo: pygit2.Repository, file: FileDiff, new_id: pygit2.Oid
) -> tuple[dict[int, bytes], list[int]]:
    """libgit2's own text diff of the file (a binary's printable runs), as the simple
    path makes it."""
    old = None if git.is_zero_id(file.old_id) else repo[file.old_id].peel(pygit2.Blob).data
    return changes(old, repo[new_id].peel(pygit2.Blob).data)


def _exact_added(
    repo: pygit2.Repository,
    file: FileDiff,
    path: str,
    others: tuple[pygit2.Tree, ...],
    *,
    diff: Diff,
) -> dict[int, bytes]:
    """The file's added lines found by ``diff`` (one reading), as the simple path finds
    them (a merge's: only the lines new against ``others`` too)."""
    new_id = pygit2.Oid(hex=file.new_id)
    old = None if git.is_zero_id(file.old_id) else repo[file.old_id].peel(pygit2.Blob).data
    added = diff(old, repo[new_id].peel(pygit2.Blob).data)
    for tree in others:
        added = also_added_against(repo, tree, path, new_id, added, diff=diff)
    return added


def iter_commit_chunk(repo: pygit2.Repository, commits: Sequence[str], *, max_size: int) -> Source:
    """The items of these commits (ids, in this order): git's fast path wherever it is exact."""
    if usable(repo):
        return iter_commits_fast(repo, commits, max_size=max_size)
    return (
        item
        for commit in commits
        for item in iter_walked_commit(repo, _commit(repo, commit), max_size=max_size)
    )
