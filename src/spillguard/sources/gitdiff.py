"""The lines commits add, read from ``git diff-tree``: the one reader of commits.

History scans, pushes (pre-receive and pre-push) and the audit read commits here, in
SHA-1 and SHA-256 repositories alike. One ``git diff-tree --stdin`` diffs a batch of
commits and its output becomes the Fragments and Skipped items of each commit. A
merge comes as git's combined diff: only the files that differ from every parent (a
file the merge took from one of them as it is adds nothing), and in each the lines
every parent lacks; a clean merge costs git no diff at all. Where one reading of
that output could be wrong, the commit is read again by git on its own
(``received_cli.iter_commit``: renames as ``git log -M`` pairs them, type changes,
text git calls binary, NUL lines, quoted paths):

- commits in which git pairs a file they add with one they delete, as ``git log -M``
  would (a merge: against its first parent), asked of git by their trees alone
  (``sources.renames``); type changes; merges when git is older than 2.31 (no
  ``--diff-merges``), and merges of 32 parents or more, which git's combined diff
  cannot speak for (``COMBINED_PARENTS_MOST``); a merge's file new to every parent
  of which git shows no line;
- files git calls binary that are not binaries within the size limit, files with a
  NUL in a changed line or a byte order mark opening an added first line (UTF-16/32
  text is diffed decoded, and as bytes), and mode-only changes;
- paths git has to quote (control characters, quotes, backslashes), and commits with
  an encoding header (git re-encodes their message).

git runs with everything that could colour its diff switched off: no attributes (an
empty work tree and index, no attribute files, and a git directory of its own that
reads the repository's objects, so not even ``info/attributes`` applies), no replace
refs, no external diff or textconv, the plain Myers algorithm without the indent
heuristic. It calls files over
the size limit binary (``core.bigFileThreshold``), so a text diff from git is of a
file that is neither large nor binary; binaries are judged by their printable runs,
and blobs are read through one ``git cat-file`` for the chunk. libgit2
(``sources.commits``) reads a history's commits only where git is not installed (a
hook then fails closed instead).
"""

from __future__ import annotations

import functools
import os
import re
from contextlib import ExitStack
from pathlib import Path

from spillguard.core.archives import is_archive
from spillguard.core.decode import (
    LARGE_BINARY,
    LFS_POINTER_LIMIT,
    SNIFF_BYTES,
    is_binary,
    is_lfs_pointer,
    printable_runs,
    runs_by_line,
    skipped,
    unread_reason,
    wide_encoding,
)
from spillguard.core.errors import GitError
from spillguard.core.models import CommitWalked, Skipped, is_zero_id
from spillguard.sources.attributes import (
    attributes_asked,
    is_attribute_file,
    named,
    names_attributes,
)
from spillguard.sources.blobdiff import bytes_added, changes, members_added, runs_added
from spillguard.sources.blobsizes import BlobSizes
from spillguard.sources.checkout import Change, Checkouts
from spillguard.sources.context import may_need_context
from spillguard.sources.diffparse import (
    COMMIT_FORMAT,
    DIFF_TREE,
    EMPTY_TREE,
    MERGE_LOG,
    REGULAR_MODES,
    BlobHeads,
    GitDiffs,
    fragments,
    git_command,
    lines_by_number,
    plain_text,
)
from spillguard.sources.gitcli import LOOKUP_GIT_MEMORY, SIDE_GIT_MEMORY, run_git
from spillguard.sources.messages import commit_message
from spillguard.sources.pemblocks import may_touch_block, with_touched_blocks
from spillguard.sources.received_cli import commit_details, iter_commit
from spillguard.sources.renames import Renames
from spillguard.sources.scratch import scratch as scratch_in
from spillguard.sources.scratch import temporary_parent
from spillguard.sources.staged_cli import empty_tree_id, unquote

#: How every line of an LFS pointer file starts (``decode.is_lfs_pointer`` has the format).
_POINTER_PREFIXES = (b"version https://git-lfs", b"ext-", b"oid sha256:", b"size ")
#: The most lines an LFS pointer file can have: under 1024 bytes, a version line (43),
#: extension lines (80 or more each), an oid line (76) and a size line (7 or more).
_POINTER_LINES = 3 + (1024 - 43 - 76 - 7) // 80

#: A gitlink (a submodule's commit) and a symlink (its target's text), by mode.
GITLINK_MODE = 0o160000
SYMLINK_MODE = 0o120000
#: Modes whose blobs git diffs as text the simple path judges as text.
_TEXT_MODES = REGULAR_MODES | {SYMLINK_MODE}

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    import pygit2

    from spillguard.core.decode import Run
    from spillguard.core.models import CommitInfo, Fragment
    from spillguard.sources import Source, SourceItem
    from spillguard.sources.diffparse import CommitDiff, FileDiff


def usable() -> bool:
    """Whether git is on PATH (attributes never change what it reads: ``git_command``).
    Not ``shutil.which``: its import (bz2, lzma) costs a push's hook milliseconds."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, "git")  # noqa: PTH118
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):  # noqa: PTH113
            return True
    return False


def iter_commits_fast(  # noqa: PLR0913 - keyword-only knobs of one reading
    git_dir: str,
    commits: Sequence[str],
    *,
    max_size: int,
    refs: Mapping[str, str] | None = None,
    parents: Mapping[str, Sequence[str]] | None = None,
    merge_diffs: bool = True,
) -> Source:
    """The items of each commit (ids), in order, as ``iter_walked_commit`` would yield
    them; ``refs`` names the ref each commit's fragments come with (a push's), and
    ``parents`` every commit's parents where the caller's listing gave them.

    git diffs every commit, a merge as its combined diff (where git can), in a git of
    its own that runs beside the commits' while Python judges what both wrote. A
    commit whose diff needs more than one reading of git's output (renames git pairs,
    type changes, text git calls binary, quoted paths...) is read again by git, alone,
    with renames found as ``git log -M`` finds them (``received_cli.iter_commit``).
    SHA-1 and SHA-256 repositories alike: nothing here needs libgit2. Without
    ``merge_diffs``, a merge gives only its message (no git diffs merges).
    """
    git_dir = str(Path(git_dir).resolve())  # git runs from a scratch directory
    parent = temporary_parent()
    with scratch_in(parent, mode=0o700) as scratch, ExitStack() as running:
        if scratch is None:
            raise GitError(f"{parent}: no scratch folder can be made there for git")
        empty = EMPTY_TREE if not commits or len(commits[0]) == len(EMPTY_TREE) else None
        empty = empty or empty_tree_id(git_dir)
        command, env = git_command(git_dir, scratch, empty, max_size=max_size)
        ids = "".join(f"{commit}\n" for commit in commits).encode()
        diffs = GitDiffs([*command, *DIFF_TREE, COMMIT_FORMAT], env, ids, scratch, "commits")
        running.callback(diffs.close)
        merged = None
        # The merges' git only where a merge may be: a hook's push rarely has one, and
        # each git started costs a hook milliseconds.
        merges_among = merge_diffs and (
            parents is None or any(len(parents[each]) > 1 for each in commits)
        )
        # The gits beside the commits' read far fewer objects: less memory is enough.
        side = [*command, *SIDE_GIT_MEMORY]
        if merges_among and combined_merges():
            merges = GitDiffs([*side, *MERGE_LOG, COMMIT_FORMAT], env, ids, scratch, "merges")
            running.callback(merges.close)
            merged = iter(merges)
        heads = BlobHeads(side, env, max_size)
        running.callback(heads.close)
        lookups = [*command, *LOOKUP_GIT_MEMORY]
        sizes = BlobSizes(lookups, env)
        running.callback(sizes.close)
        blobs = _Blobs(heads, sizes, max_size)
        renames = Renames(lookups, env)
        running.callback(renames.close)
        ordered = iter(diffs)
        written = _Written(git_dir, commits, parents)
        for commit in commits:
            ref = None if refs is None else refs.get(commit)
            header = _next(ordered, commit)
            diff: CommitDiff | None = header
            if len(header.parents) > 1 and not merge_diffs:
                yield from _merge_message(git_dir, header, ref)
                continue
            if len(header.parents) > 1:
                diff = None if merged is None else _next(merged, commit)
                if len(header.parents) >= COMBINED_PARENTS_MOST:
                    diff = None  # git's combined diff cannot speak for it
            written.note(header, diff, ref)
            items = None if diff is None else _commit_items(diff, ref, blobs, renames)
            if items is None:
                known = None if header.info is None else (header.info, header.parents)
                # a commit with one parent and a rename: its diff with renames from the
                # chunk's git, not from gits started for it
                renamed = known is not None and len(known[1]) == 1 and renames.paired == commit
                yield from iter_commit(
                    git_dir,
                    commit,
                    max_size=max_size,
                    ref=ref,
                    known=known,
                    empty_tree=empty,
                    first=renames.diff(commit) if renamed else None,
                )
            else:
                yield CommitWalked(commit=commit)
                yield from items
        yield from written.items()


_Seen = tuple[str, tuple[str, ...], list[Change], "CommitInfo | None", str | None]


class _Written:
    """The chunk's commits as their checkouts write them (``sources.checkout``), judged
    after the chunk: only where an attribute file of the trees it starts from, or a
    line it adds to one, names an attribute that makes a checkout differ."""

    def __init__(
        self, git_dir: str, commits: Sequence[str], parents: Mapping[str, Sequence[str]] | None
    ) -> None:
        self._git_dir = git_dir
        self._chunk = set(commits)
        self._named = False
        # Where the listing gave the parents (a push), git is asked now, beside the diffs.
        self._asked = (
            None if parents is None else attributes_asked(git_dir, self._boundary(parents))
        )
        #: Each commit, its parents, what it changed, its details if git gave them, its ref.
        self._seen: list[_Seen] = []

    def note(self, header: CommitDiff, diff: CommitDiff | None, ref: str | None) -> None:
        """A commit of the chunk, as git diffed it (before its lines are taken)."""
        files = (diff or header).files
        self._named = self._named or any(
            is_attribute_file(unquote(file.path))
            and (file.binary or file.unsure or names_attributes(file.added.values()))
            for file in files
        )
        changes = [
            Change(
                path=_utf8(unquote(file.path)),
                old=None if is_zero_id(file.old_id) else file.old_id,
                new=None if file.status == "D" else file.new_id,
            )
            for file in files
        ]
        self._seen.append((header.commit, tuple(header.parents), changes, header.info, ref))

    def _boundary(self, parents: Mapping[str, Sequence[str]]) -> list[str]:
        """The commits outside the chunk that its commits start from."""
        return sorted({parent for each in parents.values() for parent in each} - self._chunk)

    def items(self) -> Iterator[Fragment]:
        if not self._seen:
            named(self._asked)  # git's answer read: it has stopped
            return
        if self._asked is None:
            found = {commit: parents for commit, parents, _, _, _ in self._seen}
            self._asked = attributes_asked(self._git_dir, self._boundary(found))
        if not (named(self._asked) or self._named):
            return
        checkouts = Checkouts(self._git_dir)
        for commit, parents, changed, info, ref in self._seen:
            parent = parents[0] if parents else None
            known = info or commit_details(self._git_dir, commit)[0]
            yield from checkouts.items(commit, parent, changed, known, ref)


def _merge_message(git_dir: str, header: CommitDiff, ref: str | None) -> Source:
    """A merge walked, and its message: git's, as ``git log`` re-encodes one that names
    an encoding (asked of git for that merge alone)."""
    info = header.info or commit_details(git_dir, header.commit)[0]
    yield CommitWalked(commit=header.commit)
    yield from commit_message(info, ref)


def _next(diffs: Iterator[CommitDiff], commit: str) -> CommitDiff:
    diff = next(diffs, None)
    if diff is None or diff.commit != commit:
        raise GitError(f"git diff-tree lost its place at commit {commit}")
    return diff


#: The fewest parents git's combined diff cannot speak for: it keeps a line's parents
#: in the bits of one C ``unsigned long``, and from 64 parents on (32 where a long has
#: 32 bits, as on Windows) it shows a merge's files without their lines, or with marks
#: that say no line is new. Such merges are diffed against each parent on their own
#: (``received_cli.iter_commit``); no honest merge tool writes one.
COMBINED_PARENTS_MOST = 32
#: git gives merges' combined diffs by ``--diff-merges`` from 2.31 on; older ones are
#: left to the commit-by-commit reading (the tests check both ways).
_COMBINED_SINCE = (2, 31)


@functools.cache
def combined_merges() -> bool:
    """Whether this git gives merges' combined diffs (else merges are read one by one)."""
    found = re.search(rb"(\d+)\.(\d+)", run_git("version") or b"")
    return found is not None and tuple(map(int, found.groups())) >= _COMBINED_SINCE


def _commit_items(
    diff: CommitDiff, ref: str | None, blobs: _Blobs, renames: Renames
) -> list[SourceItem] | None:
    """The commit's items, or None when git's output alone does not give the exact answer."""
    statuses = {file.status for file in diff.files}
    merge = len(diff.parents) > 1
    if not statuses <= {"A", "M", "D"}:
        return None  # a type change
    # A merge's sections are only its files with lines to show (``--cc``); without an
    # info, the commit names an encoding, and git re-encodes its message as it shows it.
    if (diff.strays if merge else diff.sections != len(diff.files)) or diff.info is None:
        return None
    if _renamed(diff, merge, statuses, renames):
        return None
    info = diff.info
    blobs.start(_wanted(diff.files, merge))
    items: list[SourceItem] = [*commit_message(info, ref)]
    for file in diff.files:
        if file.status == "D":
            continue
        # a quoted path, or a file new to every parent of which git shows no line
        # (never read as "nothing added"): the commit is read file by file
        unsure = file.path.startswith(b'"') or (merge and file.fresh and not file.added)
        path = None if unsure else _utf8(file.path)
        found = None if path is None else _file_items(file, path, info, ref, merge, blobs)
        if found is None:
            return None
        items.extend(found)
        file.added = {}  # in its fragments now: a commit of many files holds each once
    return items


def _renamed(diff: CommitDiff, merge: bool, statuses: set[str], renames: Renames) -> bool:
    """Whether git pairs one of the files the commit adds with one it deletes.

    A merge's entries are the files that differ from every parent, with their status
    against the first: one added there could be paired with a file the first parent's
    diff deletes, which the combined diff does not list (the other parent lacks it
    too). A file a rename brings that is not listed is the other parent's as it is:
    not the merge's own, whatever git pairs it with.
    """
    if "A" not in statuses or not (merge or "D" in statuses):
        return False
    added = {file.path for file in diff.files if file.status == "A"}
    return renames.pair(diff.commit, diff.parents[0] if merge else None, added)


def _file_items(  # noqa: PLR0913, PLR0917 - one file of one commit, and where it goes
    file: FileDiff, path: str, info: CommitInfo, ref: str | None, merge: bool, blobs: _Blobs
) -> list[SourceItem] | None:
    """The file's items; None when the commit has to be read file by file (content
    git's diff does not show as the simple path reads it, a blob git lacks).

    A symlink's target is text, diffed as such; a submodule is left out.
    """
    if file.new_mode == GITLINK_MODE:
        return [skipped(path, "submodule", info.id)]
    runs = None if merge else blobs.runs_added(file)
    if runs is not None:
        return list(fragments(path, runs, info, ref))
    if not plain_text(file, _TEXT_MODES):
        return None if merge else _exact_items(file, path, info, ref, blobs)
    if _may_be_lfs_pointer(file):
        data = blobs.small(file.new_id)
        if data is None:
            return None
        if is_lfs_pointer(data):
            # git diffed it as text: not binary, so only a pointer file could be left out.
            return [Skipped(path=path, reason="LFS pointer", commit=info.id)]
    found = _text_added(file, merge, blobs)
    return None if found is None else list(_text_fragments(file, path, found, info, ref))


def _text_fragments(
    file: FileDiff,
    path: str,
    found: tuple[dict[int, bytes], bytes | None],
    info: CommitInfo,
    ref: str | None,
) -> Iterator[Fragment]:
    """The fragments of a text file's added lines (``_text_added``), with the lines
    around them where they could be half of a name and its value."""
    added, whole = found
    around = None if whole is None or not _needs_context(file) else lines_by_number(whole)
    return fragments(path, added, info, ref, whole=around)


def _exact_items(
    file: FileDiff, path: str, info: CommitInfo, ref: str | None, blobs: _Blobs
) -> list[SourceItem] | None:
    """A file git's diff does not show as the simple path reads it (text git calls
    binary, UTF-16/32 text, a NUL in a changed line, a mode-only change): both of its
    versions diffed in memory (``sources.blobdiff``), the UTF-16/32 text as its
    decoded text and as its bytes; None if git lacks a blob."""
    new = blobs.content(file.new_id)
    old = (None, b"") if is_zero_id(file.old_id) else blobs.content(file.old_id, whole=True)
    if new is None or old is None:
        return None
    reason, data = new
    if reason is not None:
        return [skipped(path, reason, info.id)]
    base = None if is_zero_id(file.old_id) else old[1]
    if is_archive(data):
        return _archive_items(path, base, data, info, ref, blobs.max_size)
    added, removed_after = changes(base, data)
    extra = bytes_added(base, data) if wide_encoding(data) else {}
    around = None
    if not is_binary(data):
        if removed_after or may_touch_block(added):
            added = with_touched_blocks(added, data, removed_after)
        if may_need_context(added):
            around = lines_by_number(data)
    return [*fragments(path, added, info, ref, whole=around), *fragments(path, extra, info, ref)]


def _archive_items(  # noqa: PLR0913, PLR0917 - one file of one commit, and its limit
    path: str, base: bytes | None, data: bytes, info: CommitInfo, ref: str | None, max_size: int
) -> list[SourceItem]:
    """An archive's members' added lines, each at ``path!member``; where it cannot be
    opened within the limits, why (for ``on_unscannable``) and its printable runs."""
    found = members_added(path, base, data, max_size)
    if isinstance(found, str):
        return [skipped(path, found, info.id), *fragments(path, runs_added(base, data), info, ref)]
    return [item for member, added in found for item in fragments(member, added, info, ref)]


def _wanted(files: Iterable[FileDiff], merge: bool) -> Iterator[tuple[str, bool]]:
    """The blobs ``_file_items`` will read (most likely), in the order it reads them,
    each with whether it is read only if small enough to be an LFS pointer."""
    for file in files:
        if file.status == "D" or not plain_text(file, _TEXT_MODES):
            continue
        removed = file.removed_after and not merge
        last = merge and file.added and max(file.added) >= file.lines
        if removed or last or _touches_block(file) or _needs_context(file):
            yield file.new_id, False
        elif _may_be_lfs_pointer(file):
            yield file.new_id, True


def _needs_context(file: FileDiff) -> bool:
    """``context.may_need_context`` of the file's added lines, searched once per file."""
    if file.needs_context is None:
        file.needs_context = may_need_context(file.added)
    return file.needs_context


def _touches_block(file: FileDiff) -> bool:
    """``may_touch_block`` of the file's added lines, searched once per file."""
    if file.touches_block is None:
        file.touches_block = may_touch_block(file.added)
    return file.touches_block


def _utf8(path: bytes) -> str:
    """A path as libgit2 names it: UTF-8, other bytes kept as surrogates (reports
    show them as ``\\xNN`` and give the bytes)."""
    return path.decode("utf-8", "surrogateescape")


def _text_added(
    file: FileDiff, merge: bool, blobs: _Blobs
) -> tuple[dict[int, bytes], bytes | None] | None:
    """A text file's added lines, as the simple path finds them, and the whole file
    where it was read (its last line, a PEM block, the lines around an edit); None
    if a blob is missing.

    A merge's file is one that differs from every parent, and git's combined diff kept
    only the lines no parent has, as the simple path does pair by pair; it calls the
    file text when no side has a NUL in its first bytes, which no binary blob lacks,
    but it ends a last line that has no newline with one, so a file whose last line is
    the merge's is read. A merge's removals are not shown by git's combined diff: the
    simple path drops them too.
    """
    added = file.added
    removed_after = [] if merge else file.removed_after
    whole = None
    if merge and added and max(added) >= file.lines:
        whole = blobs.whole(file.new_id)
        if whole is None:
            return None
        added = _without_missing_newline(added, whole)
    if removed_after or _touches_block(file) or _needs_context(file):
        whole = blobs.whole(file.new_id) if whole is None else whole
        if whole is None:
            return None
        added = with_touched_blocks(added, whole, removed_after)
    return added, whole


def _without_missing_newline(added: dict[int, bytes], data: bytes) -> dict[int, bytes]:
    """``added`` with the file's last line as the file has it, without a newline."""
    if not data or data.endswith(b"\n"):
        return added
    last = data.count(b"\n") + 1
    if last in added:
        added[last] = added[last].removesuffix(b"\n")
    return added


class _Blobs:
    """Blobs of the chunk, each read by its one ``git cat-file`` (``BlobHeads``): the
    printable runs of those git called binary (and of their old versions), and whole
    text files where a merge's last line or a PEM block needs them."""

    def __init__(self, heads: BlobHeads, sizes: BlobSizes, max_size: int) -> None:
        self._heads = heads
        self._sizes = sizes
        self.max_size = max_size
        self._runs: dict[str, tuple[bool, list[Run]] | None] = {}
        #: The commit's blobs read so far (its LFS check, then its PEM blocks).
        self._read: dict[str, tuple[int, bytes] | None] = {}
        #: The sizes of the commit's blobs read only if they could be LFS pointers.
        self._size: dict[str, int] = {}

    def start(self, wanted: Iterable[tuple[str, bool]]) -> None:
        """A new commit, which will read ``wanted`` (``_wanted``): git is asked for
        them at once, those to be read only if small once their sizes are known."""
        self._read.clear()
        self._heads.forget()
        blobs = list(wanted)
        maybe = [blob for blob, only_small in blobs if only_small]
        self._size = self._sizes.sizes(maybe) if maybe else {}
        self._heads.expect(
            blob
            for blob, only_small in blobs
            if not only_small or self._size.get(blob, 0) < LFS_POINTER_LIMIT
        )

    def _head(self, blob: str) -> tuple[int, bytes] | None:
        if blob not in self._read:
            self._read[blob] = self._heads.read(blob)
        return self._read[blob]

    def runs_added(self, file: FileDiff) -> dict[int, bytes] | None:
        """``commits.runs_added`` of a regular file git called binary that the simple
        path takes for binary too (a NUL in its first bytes, no UTF-16/32 mark, within
        the size limit); None leaves the file to the usual checks."""
        if not file.binary or file.new_mode not in REGULAR_MODES:
            return None
        new = self._blob_runs(file.new_id)
        old = (False, []) if is_zero_id(file.old_id) else self._blob_runs(file.old_id)
        if new is None or not new[0] or old is None:
            return None
        return runs_by_line(new[1], frozenset(run for _, run in old[1]))

    def whole(self, blob: str) -> bytes | None:
        """All of a text blob git diffed; None if git has none."""
        found = self.content(blob, whole=True)
        return None if found is None else found[1]

    def small(self, blob: str) -> bytes | None:
        """A blob small enough to be an LFS pointer, else b""; None if git has none."""
        if self._size.get(blob, 0) >= LFS_POINTER_LIMIT:
            return b""
        found = self._head(blob)
        if found is None:
            return None
        return found[1] if found[0] < LFS_POINTER_LIMIT else b""

    def content(self, blob: str, *, whole: bool = False) -> tuple[str | None, bytes] | None:
        """Why the blob is left out (``decode.unread_reason``) or None, and its content
        (all of it, however large, with ``whole``); None when git has no such blob.
        A binary over the size limit is known by its first bytes, never read whole."""
        found = self._head(blob)
        if found is None:
            return None
        size, data = found
        if size > len(data):
            if not whole and len(data) >= SNIFF_BYTES and is_binary(data):
                return LARGE_BINARY, b""
            found = self._heads.read(blob, size)
            if found is None:
                return None
            data = found[1]
        reason = None if whole else unread_reason(data, self.max_size)
        return (reason, b"") if reason is not None else (None, data)

    def _blob_runs(self, blob: str) -> tuple[bool, list[Run]] | None:
        """Whether the blob is binary, and its printable runs; None for a blob over the
        size limit or missing (the commit is then read file by file)."""
        if blob not in self._runs:
            found = self._heads.read(blob)
            within = found is not None and found[0] <= self.max_size
            # Only the digest is kept: memory holds one blob at a time.
            self._runs[blob] = _binary_runs(found[1]) if within and found else None
        return self._runs[blob]


def _binary_runs(data: bytes) -> tuple[bool, list[Run]]:
    """Whether a whole blob is binary (and no archive, whose members are read), and its
    printable runs."""
    return is_binary(data) and not is_archive(data), printable_runs(data)


def _may_be_lfs_pointer(file: FileDiff) -> bool:
    """False when the file has more lines than a pointer file can, or an added line that
    could not be one of a pointer's; no line added (only removed) proves nothing."""
    if file.lines > _POINTER_LINES:
        return False
    return all(line.startswith(_POINTER_PREFIXES) for line in file.added.values())


def iter_commit_chunk(
    git_dir: str,
    commits: Sequence[str],
    *,
    max_size: int,
    opened: Callable[[str], pygit2.Repository] | None = None,
    merge_diffs: bool = True,
) -> Source:
    """The items of these commits (ids, in this order), read by git; libgit2 reads them
    (the repository ``opened`` gives, by default a new one) only where git is not
    installed. Without ``merge_diffs`` a merge gives only its message, as ``git log
    -p`` shows it."""
    if usable():
        return iter_commits_fast(git_dir, commits, max_size=max_size, merge_diffs=merge_diffs)
    import pygit2  # here: git reads commits wherever it can

    from spillguard.git import open_repository
    from spillguard.sources.commits import iter_walked_commit, walked_message

    repo = (opened or open_repository)(git_dir)

    def read(commit: str) -> Source:
        found = repo[commit].peel(pygit2.Commit)
        if not merge_diffs and len(found.parent_ids) > 1:
            return walked_message(found)
        return iter_walked_commit(repo, found, max_size=max_size)

    return (item for commit in commits for item in read(commit))
