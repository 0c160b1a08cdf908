"""Diffs from the git command line, parsed: pure Python, no libgit2.

``git diff-tree --raw --patch`` output becomes, per commit (or per pair of trees),
its raw entries (modes, blob ids, status, path) and the lines each file adds, by
new line number; with ``COMMIT_FORMAT``, each commit's author, date, message and
parent count come from the same output, so no commit is looked up twice. History
scans (``sources.gitdiff``) and the pre-commit fast path (``sources.staged_cli``)
build their fragments from it; ``fragments`` is shared with the libgit2 path so
both cut added lines into fragments the same way.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import functools
import itertools
import operator
import os
import re
import subprocess
import time
from pathlib import Path

from spillguard.core import gitcommand
from spillguard.core.archives import is_archive
from spillguard.core.decode import as_utf8, decode, marked_encoding
from spillguard.core.errors import GitError, missing_object
from spillguard.core.models import CommitInfo, Fragment, diff_fragment
from spillguard.core.values import Record
from spillguard.sources.context import around
from spillguard.sources.gitcli import BOUNDED_PACK_MAPS, Conversation

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import IO

#: How git is to diff, for commits and merges alike.
_DIFF_OPTIONS = (
    "--raw",
    "--patch",
    "--no-renames",
    # A deleted file adds nothing: its header, without every line it had.
    "--irreversible-delete",
    "--no-abbrev",
    "--full-index",
    "-r",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--diff-algorithm=myers",
    "--no-indent-heuristic",
)
DIFF_TREE = (
    "diff-tree",
    "--stdin",
    "--always",
    # No context: less to write and read, and git trims the files' common tail
    # before diffing, which saves it hashing those lines (a fifth of its time on the
    # bench repository). The trim can move an ambiguous run of added lines, so
    # ``blobdiff.text_added`` trims the same way wherever a diff is made in memory.
    "--unified=0",
    "--inter-hunk-context=0",
    "--root",
    *_DIFF_OPTIONS,
)
#: ``DIFF_TREE``'s raw entries without their patches (git 2.39's ``--no-patch`` drops
#: both, and ``--unified`` asks for a patch).
_RAW_DIFF_TREE = tuple(
    option
    for option in DIFF_TREE
    if option not in {"--patch", "--unified=0", "--inter-hunk-context=0"}
)
#: The merges among the given commits (``diff-tree`` gives a merge's header only), in
#: their order, each as its dense combined diff: only the files that differ from every
#: parent and, in them, only the hunks with a line no parent has; git diffs the merge
#: against each parent without context (and trims the common tail) as above, the one
#: line of context shows the lines it would hide (``_read_combined_hunks``).
MERGE_LOG = (
    "log",
    "--no-walk=unsorted",
    "--stdin",
    "--merges",
    "--cc",
    "--unified=1",
    "--no-notes",
    "--no-show-signature",
    "--no-use-mailmap",
    *_DIFF_OPTIONS,
)
#: A commit's header in ``git diff-tree --stdin`` output: NUL-separated fields after a
#: NUL, which starts no line of a diff: id and parent ids, the ``encoding`` header,
#: author name, email and time, and the raw message (which may span lines).
COMMIT_FORMAT = "--format=%x00%H %P%x00%e%x00%an%x00%ae%x00%at%x00%cn <%ce>%x00%B%x00"
_HEADER_NULS = COMMIT_FORMAT.count("%x00")
#: How git says it lacks an object (a partial clone's: spillguard's gits fetch nothing),
#: compiled once git has failed (``_failure``).
_UNREADABLE = (
    r"fatal: (?:unable to read ([0-9a-f]+)|could not fetch ([0-9a-f]+) from promisor remote)"
)
_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: A merge's hunk header (``--diff-merges=combined``): one ``@`` and one old range
#: per parent, besides the two of a plain hunk.
_COMBINED_HUNK = rb"@(@@+) ((?:-\d+(?:,\d+)? )+)\+(\d+)(?:,(\d+))? @@@+"


@functools.cache
def _combined_hunk() -> re.Pattern[bytes]:
    """``_COMBINED_HUNK`` compiled on the first merge read (a commit hook reads none)."""
    return re.compile(_COMBINED_HUNK)


# A commit's id, or the two tree ids of a pair of trees, on a line of its own.
_COMMIT_HEADER = re.compile(
    rb"([0-9a-f]{40}(?:[0-9a-f]{24})?)(?: [0-9a-f]{40}(?:[0-9a-f]{24})?)?\n"
)
REGULAR_MODES = frozenset({0o100644, 0o100755})
_LARGEST_SIZE = 1 << 62
#: The SHA-1 empty tree, the value that leaves attr.tree without any .gitattributes.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class FileDiff(Record):
    """One raw entry of a commit's diff and, from its patch, the lines it adds."""

    __slots__ = (
        "added",
        "also",
        "archive",
        "binary",
        "carry_within",
        "fresh",
        "lines",
        "needs_context",
        "new_id",
        "new_mode",
        "old_id",
        "old_path",
        "path",
        "removed_after",
        "status",
        "touches_block",
        "unsure",
    )

    new_mode: int
    old_id: str
    new_id: str
    status: str
    path: bytes
    binary: bool
    #: git's lines of this file are not to be taken as they are: an added or removed
    #: line holds a NUL (perhaps UTF-16/32 text, split on bytes), or a merge's hunk
    #: did not add up.
    unsure: bool
    #: Lines the new side has at least, by its hunks' line numbers.
    lines: int
    added: dict[int, bytes]
    #: Where hunks that only remove lines removed them: the new line before each.
    removed_after: list[int]
    #: A rename's old path (``--find-renames``), as git wrote it.
    old_path: bytes | None
    #: New to every parent (a merge's raw entry says ``A`` for each): every line of
    #: it is the commit's own, so a hunk must show them.
    fresh: bool
    #: A merge's renamed file: the lines new relative to every other parent too; only
    #: those of the lines the rename carried over are the merge's own.
    carry_within: set[int] | None
    #: The lines added in the bytes reading of a UTF-16/32 file, whose ``added`` are
    #: its decoded text's (``decode.readings``); None for any other file.
    also: dict[int, bytes] | None
    #: Whether an added line could lie in a PEM block (``pemblocks.may_touch_block``),
    #: once a history scan asked: it asks twice, for the blobs to read ahead and for
    #: the lines, and the answer searches every added line.
    touches_block: bool | None
    #: An archive's old and new content (``staged_cli``), its members judged once the
    #: size limit is known.
    archive: tuple[bytes | None, bytes] | None
    #: Whether an added line could be half of a name and its value on two lines
    #: (``context.may_need_context``), once it is known.
    needs_context: bool | None

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        new_mode: int,
        old_id: str,
        new_id: str,
        status: str,
        path: bytes,
        binary: bool = False,
        unsure: bool = False,
        lines: int = 0,
        added: dict[int, bytes] | None = None,
        removed_after: list[int] | None = None,
        old_path: bytes | None = None,
        fresh: bool = False,
        carry_within: set[int] | None = None,
        also: dict[int, bytes] | None = None,
        touches_block: bool | None = None,
        archive: tuple[bytes | None, bytes] | None = None,
        needs_context: bool | None = None,
    ) -> None:
        if added is None:
            added = {}
        if removed_after is None:
            removed_after = []
        self.new_mode = new_mode
        self.old_id = old_id
        self.new_id = new_id
        self.status = status
        self.path = path
        self.binary = binary
        self.unsure = unsure
        self.lines = lines
        self.added = added
        self.removed_after = removed_after
        self.old_path = old_path
        self.fresh = fresh
        self.carry_within = carry_within
        self.also = also
        self.touches_block = touches_block
        self.archive = archive
        self.needs_context = needs_context


class CommitDiff(Record):
    __slots__ = ("commit", "files", "info", "parents", "second_half", "sections", "strays")

    commit: str
    #: From a ``COMMIT_FORMAT`` header; None without one, or when the commit names an
    #: encoding (git re-encodes its text: the commit is read again on its own).
    info: CommitInfo | None
    #: From a ``COMMIT_FORMAT`` header: a merge's are what its diff is not against.
    parents: tuple[str, ...]
    files: list[FileDiff]
    sections: int
    #: A merge's patch sections that name no raw entry (``_combined_section``).
    strays: int
    #: A type change's patch comes in two sections (deletion, then creation) for one entry.
    second_half: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        commit: str,
        info: CommitInfo | None = None,
        parents: tuple[str, ...] = (),
        files: list[FileDiff] | None = None,
        sections: int = 0,
        strays: int = 0,
        second_half: bool = False,
    ) -> None:
        if files is None:
            files = []
        self.commit = commit
        self.info = info
        self.parents = parents
        self.files = files
        self.sections = sections
        self.strays = strays
        self.second_half = second_half


# A hunk line's first byte, as the int that indexing bytes gives.
_PLUS, _MINUS, _SPACE, _BACKSLASH = b"+- \\"
#: NUL as a byte's value, for ``_NUL in line``: ``b"\\0" in line`` first tries its
#: operand as an int and raises and clears a TypeError (CPython 3.11), which costs
#: nine times the search itself; this test runs on every changed line.
_NUL = 0
_HEADER_LENGTHS = frozenset({41, 65, 82, 130})  # one or two SHA-1 or SHA-256 ids
#: The first bytes of the lines ``_section_line`` takes (not ``index``, ``---``...).
_SECTION_TAGS = frozenset({b":", b"d", b"B"})


def plain_text(file: FileDiff, modes: frozenset[int] = REGULAR_MODES) -> bool:
    """A regular file (of ``modes``) git diffed as text, without a NUL in a changed line (UTF-16/32
    text, which git splits on bytes: libgit2 diffs it decoded) nor a byte order mark
    or an archive's first bytes opening an added first line (its text is read both
    ways; its members are read), and not a mode-only change: git's added lines for it
    are the simple path's."""
    return (
        file.new_mode in modes
        and not (file.binary or file.unsure)
        and file.old_id != file.new_id
        and not starts_wide(file.added)
        and not starts_archive(file.added)
    )


def starts_archive(added: Mapping[int, bytes]) -> bool:
    """Whether the added lines include a first line that opens as a zip or gzip file
    does (git calls most of them binary; a small one without a NUL, text)."""
    first = added.get(1)
    return first is not None and is_archive(first)


def starts_wide(added: Mapping[int, bytes]) -> bool:
    """Whether the added lines include a first line that opens with a UTF-16/32 mark."""
    first = added.get(1)
    return first is not None and marked_encoding(first) is not None


def _raw_entry(line: bytes) -> FileDiff:
    """``:old_mode new_mode old_id new_id status<TAB>path``; a merge's have a colon, a
    mode, an id and a status letter per parent (the first parent's are kept)."""
    parents = len(line) - len(line.lstrip(b":"))
    fields, _, path = line[parents:].rstrip(b"\n").partition(b"\t")
    modes_ids = fields.split(b" ")
    status = modes_ids.pop()
    new_mode, old_id, new_id = modes_ids[parents], modes_ids[parents + 1], modes_ids[-1]
    old_path = None
    if status[:1] in {b"R", b"C"}:  # ``old<TAB>new``: the new path is the file's
        old_path, _, path = path.rpartition(b"\t")
    return FileDiff(
        new_mode=int(new_mode, 8),
        old_id=old_id.decode(),
        new_id=new_id.decode(),
        status=status.decode()[:1],
        path=path,
        old_path=old_path,
        fresh=not status.strip(b"A"),
    )


def _read_hunk(
    lines: Iterator[bytes], header: bytes, file: FileDiff | None, added: dict[int, bytes]
) -> int | None:
    """Record the hunk's added lines by new line number, and what it says of ``file``
    (the raw entry its section belongs to, if any): whether an added or removed line
    holds a NUL, the last new line number it names (the line before it, when it only
    removes). Returns the last line's number when the hunk ends with an added line (a
    "no newline" marker may follow).

    Most hunks change a line or two (two in three of git/git's replace one line), so
    the cost per hunk counts as much as the cost per line: this runs for each.
    """
    match = _HUNK.match(header)
    if match is None:
        raise GitError(f"git diff-tree: unexpected hunk header {header[:80]!r}")
    old, start, new = match.groups()
    minus = 1 if old is None else int(old)
    number = int(start)
    plus = 1 if new is None else int(new)
    if minus + plus >= _BLOCK_LINES:
        last, nul = _read_blocks(lines, header, (minus, number, plus), added)
    else:
        last, nul = _read_lines(lines, minus, number, plus, added)
    if file is not None:
        extent = number + plus - 1 if plus else number
        if nul:
            file.unsure = True
        file.lines = extent  # hunks come in order: the last reaches furthest
        if not plus:
            file.removed_after.append(extent)
    return last


def _read_lines(
    lines: Iterator[bytes], minus: int, number: int, plus: int, added: dict[int, bytes]
) -> tuple[int | None, bool]:
    """``_read_hunk`` of a small hunk, line by line (``minus`` old lines, ``plus`` new
    ones from ``number`` on): the last line's number when it is an added one, and
    whether an added or removed line holds a NUL."""
    last = None
    nul = False
    if minus <= 0 and plus <= 0:
        return last, nul
    for line in lines:
        tag = line[0]
        if tag == _PLUS:
            if _NUL in line:
                nul = True
            added[number] = line[1:]
            last = number
            number += 1
            plus -= 1
        elif tag == _MINUS:
            if _NUL in line:
                nul = True
            minus -= 1
            last = None
        elif tag == _SPACE:
            number += 1
            plus -= 1
            minus -= 1
            last = None
        elif tag == _BACKSLASH:
            _no_newline(added, last)
            last = None
        else:
            raise GitError(f"git diff-tree: unexpected line in a hunk {line[:80]!r}")
        if minus <= 0 and plus <= 0:
            return last, nul
    raise GitError("git diff-tree: a hunk ends early")


def _read_combined_hunks(
    lines: Iterator[bytes], header: bytes, file: FileDiff | None, added: dict[int, bytes]
) -> bytes:
    """Record a merge's hunks from ``header`` on (``MERGE_OPTIONS``); returns the first
    line after them.

    Each line has a column of marks per parent, and is the merge's own (recorded)
    where every column is ``+``, for no parent has it. A line with a ``-`` is one a
    parent had and the merge lost: it is not the merge's. git shows the line such lost
    lines come before only with context (without, it hides it yet counts it in the
    hunk's range), hence one line of context; a hunk that still does not add up leaves
    its file to another reading (``unsure``). Hunks are read to the first line without marks:
    their counts are wrong for a file the merge deletes.
    """
    line = header
    combined_hunk = _combined_hunk()
    while line.startswith(b"@@@"):
        match = combined_hunk.match(line)
        if match is None:
            raise GitError(f"git diff-tree: unexpected hunk header {line[:80]!r}")
        columns, ranges, start, new = match.groups()
        parents = len(columns)
        if len(ranges.split()) != parents:
            raise GitError(f"git diff-tree: unexpected hunk header {line[:80]!r}")
        number, plus = int(start), (1 if new is None else int(new))
        first, own, unsure = number, b"+" * parents, False
        for line in lines:
            marks = line[:parents]
            if len(line) <= parents or marks.strip(b" +-"):
                break
            if _MINUS in marks:
                continue
            unsure = unsure or _NUL in line
            if marks == own:
                added[number] = line[parents:]
            number += 1
        else:
            line = b""
        unsure = unsure or number - first != plus
        if file is not None:
            file.unsure = file.unsure or unsure
            file.lines = first + max(plus, 1) - 1
    return line


#: From this many lines on, a hunk's blocks are taken whole (``_read_blocks``); below,
#: line by line costs less (the bench history's hunks average six lines).
_BLOCK_LINES = 24
#: A hunk line without its first byte, the tag.
_WITHOUT_TAG = operator.itemgetter(slice(1, None))


def _read_blocks(
    lines: Iterator[bytes],
    header: bytes,
    counts: tuple[int, int, int],
    added: dict[int, bytes],
) -> tuple[int | None, bool]:
    """``_read_hunk`` of a large hunk without context (``counts``: its header's, as
    ``_hunk`` reads them): its removed lines, then its added ones, each block taken
    whole in C (a new file's thousands of lines, say)."""
    minus, number, plus = counts
    removed = b"".join(itertools.islice(lines, minus))
    if not _whole_lines(removed, b"-", minus):
        raise GitError(f"git diff-tree: a hunk is not as its header says {header[:80]!r}")
    if not plus:
        return None, _NUL in removed
    first = next(lines, b"")
    if first.startswith(b"\\"):  # the old side's last line had no newline
        first = next(lines, b"")
    block = [first, *itertools.islice(lines, plus - 1)]
    joined = b"".join(block)
    if not _whole_lines(joined, b"+", plus):
        raise GitError(f"git diff-tree: a hunk is not as its header says {header[:80]!r}")
    added.update(zip(range(number, number + plus), map(_WITHOUT_TAG, block), strict=True))
    return number + plus - 1, _NUL in removed or _NUL in joined


def _whole_lines(block: bytes, tag: bytes, count: int) -> bool:
    """Whether ``block`` is ``count`` whole lines, each starting with ``tag``."""
    if not count:
        return not block
    return (
        block.startswith(tag)
        and block.count(b"\n" + tag) == count - 1
        and block.count(b"\n") == count
        and block.endswith(b"\n")
    )


def _no_newline(added: dict[int, bytes], last: int | None) -> None:
    """``\\ No newline at end of file`` after an added line: that line has none."""
    if last is not None:
        added[last] = added[last].removesuffix(b"\n")


def parse(stream: IO[bytes]) -> Iterator[CommitDiff]:
    """Each commit's raw entries and added lines, in git's output order.

    One loop with inlined hunk reading: this runs once per line of every diff.
    """
    current = CommitDiff(commit="")  # nothing comes before the first commit's id
    added: dict[int, bytes] = {}
    file: FileDiff | None = None  # the raw entry of the section hunks are in
    last: int | None = None
    lines = iter(stream)
    for line in lines:
        tag = line[:1]
        if tag == b"@":
            if not line.startswith(b"@@@"):
                last = _read_hunk(lines, line, file, added)
                continue
            # a merge's hunks end on the line after them, which is taken below
            line = _read_combined_hunks(lines, line, file, added)  # noqa: PLW2901
            if line.startswith(b"@"):
                raise GitError(f"git diff-tree: unexpected hunk after a merge's {line[:80]!r}")
            last, tag = None, line[:1]
        if tag == b"\\":
            _no_newline(added, last)
        elif (tag == b"\0" or len(line) in _HEADER_LENGTHS) and (
            started := _commit_start(tag, line, lines)
        ):
            if current.commit:
                yield current
            current, file = started, None
        elif tag in _SECTION_TAGS:
            added = _section_line(current, tag, line, added)
            file = _section_file(current)
        last = None
    if current.commit:
        yield current


def _section_file(current: CommitDiff) -> FileDiff | None:
    """The raw entry of the patch section the commit's output is in, if there is one."""
    if 0 < current.sections <= len(current.files):
        return current.files[current.sections - 1]
    return None


def _commit_start(tag: bytes, line: bytes, lines: Iterator[bytes]) -> CommitDiff | None:
    """The commit whose output starts on ``line``: a ``COMMIT_FORMAT`` header, or a
    line of commit or tree ids; None for any other line."""
    if tag == b"\0":
        return _commit_header(line, lines)
    if len(line) in _HEADER_LENGTHS and (header := _COMMIT_HEADER.fullmatch(line)):
        return CommitDiff(commit=header.group(1).decode())
    return None


def _commit_header(line: bytes, lines: Iterator[bytes]) -> CommitDiff:
    """A ``COMMIT_FORMAT`` header that starts on ``line`` (its message may span more)."""
    header = [line]
    count = line.count(b"\0")
    if count < _HEADER_NULS:
        # the message's lines: most hold no NUL (git/git's messages run to 16 lines)
        for more in lines:
            header.append(more)
            if _NUL in more:
                count += more.count(b"\0")
                if count >= _HEADER_NULS:
                    break
        else:
            raise GitError("git diff-tree: a commit header ends early")
    ids, encoding, name, email, when, committer, message, _ = b"".join(header)[1:].split(b"\0")
    commit, *parents = ids.decode().split()
    info = (
        None
        if encoding
        else commit_info_from(commit, name, email, seconds(when), message, committer=committer)
    )
    return CommitDiff(commit=commit, info=info, parents=tuple(parents))


def commit_info_from(  # noqa: PLR0913 - a commit's header fields, as git gives them
    commit: str,
    name: bytes,
    email: bytes,
    when: int | None,
    message: bytes,
    *,
    committer: bytes = b"",
) -> CommitInfo:
    """Who and when, as reports show them: the author date in ISO 8601 UTC (empty when
    the commit's author line has none git can read); ``committer`` is ``Name <email>``."""
    return CommitInfo(
        id=commit,
        author=name.decode("utf-8", "replace"),
        email=email.decode("utf-8", "replace"),
        date="" if when is None else iso_date(when),
        message=message.decode("utf-8", "replace"),
        committer=committer.decode("utf-8", "replace"),
    )


def seconds(author_time: bytes) -> int | None:
    """git's ``%at``; None when it printed none (an author line without an email or a
    time, which git reads as empty fields rather than failing)."""
    try:
        return int(author_time)
    except ValueError:
        return None


def iso_date(when: int) -> str:
    """Seconds since the epoch as ISO 8601 UTC (``2024-05-01T12:00:00Z``).

    A commit can claim any time: a year past 9999 gets more digits (``datetime`` would
    raise and stop the scan), and one no calendar holds is left as its seconds.
    """
    try:
        utc = time.gmtime(when)
    except (OverflowError, OSError, ValueError):
        return str(when)
    return (
        f"{utc.tm_year:04}-{utc.tm_mon:02}-{utc.tm_mday:02}"
        f"T{utc.tm_hour:02}:{utc.tm_min:02}:{utc.tm_sec:02}Z"
    )


def _section_line(
    current: CommitDiff, tag: bytes, line: bytes, added: dict[int, bytes]
) -> dict[int, bytes]:
    """Take a raw entry or a patch header line; returns where added lines go next."""
    if tag == b":":
        current.files.append(_raw_entry(line))
    elif tag == b"d" and line.startswith(b"diff --git "):
        return _next_section(current)
    elif tag == b"d" and line.startswith(_COMBINED_HEADER):
        return _combined_section(current, line[len(_COMBINED_HEADER) : -1])
    elif (
        tag == b"B"
        and line.startswith(b"Binary files ")
        and 0 < current.sections <= len(current.files)
    ):
        current.files[current.sections - 1].binary = True
    return added


def _next_section(current: CommitDiff) -> dict[int, bytes]:
    """The added-lines map of the raw entry the next patch section belongs to."""
    if current.second_half:
        current.second_half = False
        return current.files[current.sections - 1].added
    current.sections += 1
    if current.sections > len(current.files):
        return {}  # more sections than entries: _commit_items rejects the commit
    file = current.files[current.sections - 1]
    current.second_half = file.status == "T"
    return file.added


#: A merge's patch section (``--cc``): ``diff --cc PATH``, PATH quoted as in its raw entry.
_COMBINED_HEADER = b"diff --cc "


def _combined_section(current: CommitDiff, path: bytes) -> dict[int, bytes]:
    """The added-lines map of the merge's file ``path``: ``--cc`` gives a section only to
    the files with a line no parent has (or binary, or of a new mode), in the raw
    entries' order."""
    for index in range(current.sections, len(current.files)):
        if current.files[index].path == path:
            current.sections = index + 1
            return current.files[index].added
    current.strays += 1
    return {}


def git_command(
    git_dir: str, scratch: str, empty_tree: str = EMPTY_TREE, *, max_size: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """git, run so that nothing but the blobs' content shapes its diffs.

    ``scratch`` is an empty directory: the working directory, the work tree and
    the (absent) index, so no ``.gitattributes`` applies; attribute files, replace
    refs and diff drivers are switched off too, and git reads the repository's
    objects through a git directory of its own (``shadow_git_dir``), so neither the
    repository's ``info/attributes`` (which git 2.39 has no switch for) nor its
    configuration apply. ``empty_tree`` is the repository's empty tree id (it
    differs in SHA-256 repositories). With ``max_size``, git calls a file over that
    size binary, as it does files over ``core.bigFileThreshold``: a text diff from
    git then proves the file is small enough to scan.
    """
    env = gitcommand.environment()
    for name in (*_REPOSITORY_VARIABLES, "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS"):
        env.pop(name, None)
    env.update(
        GIT_INDEX_FILE=str(Path(scratch, "index")),
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OBJECT_DIRECTORY=object_directory(git_dir),
    )
    command = gitcommand.command(
        # Run from the empty directory too: from inside the real work tree git
        # would still find the .gitattributes there.
        "-C",
        scratch,
        f"--git-dir={shadow_git_dir(git_dir, scratch, sha256=len(empty_tree) != len(EMPTY_TREE))}",
        f"--work-tree={scratch}",
        "-c",
        f"core.attributesFile={Path(scratch, 'absent')}",  # git skips a missing file
        "-c",
        f"attr.tree={empty_tree}",
        "-c",
        "core.quotePath=false",
    )
    # A git per worker, each caching 96 MiB of delta bases besides the pack it maps:
    # with the maps bounded and a third of that cache, a 4,000-commit chunk of a
    # 171 MB pack takes 66 MB instead of 91 MB, in the same time. A commit read
    # again on its own took 128 MB of git/git without them.
    command += ["-c", "core.deltaBaseCacheLimit=32m", *BOUNDED_PACK_MAPS]
    if max_size is not None:
        # (git reads the size as a 64-bit number: no file is larger than the cap)
        command += ["-c", f"core.bigFileThreshold={min(max_size, _LARGEST_SIZE)}"]
    return command, env


#: What points git at a repository: the shadow git directory replaces them all.
_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def object_directory(git_dir: str) -> str:
    """Where the repository's objects are: a pre-receive hook's quarantine (git sets
    ``GIT_OBJECT_DIRECTORY``, the main store comes as an alternate), else the
    ``objects`` of its common directory (a linked work tree shares the main one's)."""
    given = os.environ.get("GIT_OBJECT_DIRECTORY")
    if given:
        return str(Path(git_dir, given))  # relative to the git directory, as git reads it
    return str(common_dir(git_dir) / "objects")


def common_dir(git_dir: str) -> Path:
    """The repository's own git directory: a linked work tree's names it in ``commondir``."""
    where = Path(git_dir)
    common = where / "commondir"
    return where / common.read_text().strip() if common.is_file() else where


def shadow_git_dir(git_dir: str, scratch: str, *, sha256: bool) -> str:
    """A git directory in ``scratch`` with no configuration, attributes, refs or
    grafts of its own, for git to read ``git_dir``'s objects through: what is judged
    is what git stores. The repository's ``shallow`` list comes along, so a shallow
    clone's oldest commits still read as roots."""
    shadow = Path(scratch, "git")
    (shadow / "refs").mkdir(parents=True, exist_ok=True)
    (shadow / "HEAD").write_text("ref: refs/heads/none\n")
    if sha256:
        (shadow / "config").write_text(
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n"
        )
    shallow = common_dir(git_dir) / "shallow"
    if shallow.is_file():
        (shadow / "shallow").write_bytes(shallow.read_bytes())
    return str(shadow)


def run_diff_tree(
    command: list[str],
    env: dict[str, str],
    stdin: bytes,
    scratch: str,
    *options: str,
    patch: bool = True,
) -> Iterator[CommitDiff]:
    """``git diff-tree`` over ``stdin`` (a commit id, or two tree ids, per line), parsed;
    without ``patch``, the raw entries alone."""
    how = DIFF_TREE if patch else _RAW_DIFF_TREE
    diffs = GitDiffs([*command, *how, *options], env, stdin, scratch, "diff-tree")
    try:
        yield from diffs
    finally:
        diffs.close()


class GitDiffs:
    """``command`` (a git) over ``stdin`` (commit ids), started at once and parsed as it
    writes: the caller judges one commit while git diffs the next, and a history scan
    runs its merges' git beside its commits' git (``sources.gitdiff``).

    The pipe is widened so that git rarely waits for the reader. What git finished
    before it failed still counts (a push keeps those findings); the commit it was
    writing may be cut short, so each is passed on only once the next begins.
    """

    def __init__(
        self, command: Sequence[str], env: dict[str, str], stdin: bytes, scratch: str, name: str
    ) -> None:
        ids = Path(scratch, f"{name}-ids")
        ids.write_bytes(stdin)
        self._errors = Path(scratch, f"{name}-errors")
        with ids.open("rb") as given, self._errors.open("wb") as told:
            self._git = gitcommand.start(
                command, env=env, stdin=given, stdout=subprocess.PIPE, stderr=told
            )
        assert self._git.stdout is not None  # noqa: S101 - Popen's promise for stdout=PIPE
        self._output = self._git.stdout
        with contextlib.suppress(OSError, AttributeError):  # Linux only; a hint, not a need
            fcntl.fcntl(self._output.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_SIZE)

    def __iter__(self) -> Iterator[CommitDiff]:
        complete = None
        try:
            for diff in parse(self._output):
                if complete is not None:
                    yield complete
                complete = diff
        except GitError:
            if self._git.wait() == 0:
                raise
        code = self._git.wait()
        if code != 0:
            raise GitError(_failure(self._errors.read_bytes(), code))
        if complete is not None:
            yield complete

    def close(self) -> None:
        """Stop git if it is still writing (the caller stopped early), and reap it."""
        if self._git.poll() is None:
            self._git.kill()
        self._output.close()
        self._git.wait()


#: The most blobs asked of ``BlobHeads``'s git ahead of reading them.
_AHEAD = 64
#: The pipe from git: 1 MiB, where Linux gives 64 KiB (fcntl's F_SETPIPE_SZ).
_PIPE_SIZE = 1 << 20


class BlobHeads:
    """The first bytes of blobs, from one ``git cat-file --batch`` started on first need
    and asked one blob at a time: git keeps the bases of deltified blobs while it reads,
    where libgit2 rebuilds every version of a large file from its pack (200 versions
    of a 2 MB binary: 1.4 s)."""

    def __init__(self, command: list[str], env: dict[str, str], size: int) -> None:
        self._git = Conversation([*command, "cat-file", "--batch"], env)
        self._size = size
        #: Blobs asked for and not read yet, in git's order; and those read early.
        self._asked: collections.deque[str] = collections.deque()
        self._early: dict[str, tuple[int, bytes] | None] = {}

    def head(self, blob: str) -> bytes | None:
        """The blob's first bytes; None when git has no such blob (or stopped)."""
        found = self.read(blob)
        return None if found is None else found[1]

    def expect(self, blobs: Iterable[str]) -> None:
        """Ask git now for blobs ``read`` will want next, in that order: one round trip
        for them all, where one each left both processes waiting on the other (a few
        thousand small reads on 3,500 commits of git/git). Few enough at a time that
        git's replies and the questions both fit their pipes."""
        wanted = [blob for blob in dict.fromkeys(blobs) if blob not in self._early]
        wanted = wanted[: max(0, _AHEAD - len(self._asked))]
        if wanted and self._send(wanted):
            self._asked.extend(wanted)

    def forget(self) -> None:
        """Drop what was read early or asked for and not wanted after all."""
        while self._asked:
            self._reply(self._size)
        self._early.clear()

    def read(self, blob: str, limit: int | None = None) -> tuple[int, bytes] | None:
        """The blob's size and first bytes (``limit`` of them, by default the size given
        at the start); None when git has no such blob (or stopped)."""
        if limit is None:
            if blob in self._early:
                return self._early.pop(blob)
            while self._asked:
                name = self._asked[0]
                found = self._reply(self._size)
                if name == blob:
                    return found
                self._early[name] = found
        while self._asked:  # replies stay in order: the ones asked for come first
            name = self._asked[0]
            self._early[name] = self._reply(self._size)
        return self._reply(limit or self._size) if self._send([blob]) else None

    def _send(self, blobs: Sequence[str]) -> bool:
        return self._git.ask("".join(f"{blob}\n" for blob in blobs).encode()) is not None

    def _reply(self, limit: int) -> tuple[int, bytes] | None:
        """The next reply: the blob's size and first ``limit`` bytes, or None."""
        if self._asked:
            self._asked.popleft()
        told = self._git.output
        assert told is not None  # noqa: S101 - a question was sent, so git runs
        header = told.readline().split()
        if len(header) != len(("id", "type", "size")):
            return None  # "<id> missing", or git stopped
        total = int(header[2])
        head = told.read(min(total, limit))
        _discard(told, total - len(head) + 1)  # the rest, and its newline
        return total, head

    def close(self) -> None:
        self._git.close()


def _discard(stream: IO[bytes], count: int) -> None:
    while count > 0:
        skipped = stream.read(min(count, 1 << 20))
        if not skipped:
            return
        count -= len(skipped)


def _failure(told: bytes, code: int) -> str:
    """git's last word, or the message every scan gives for an object that is missing."""
    lines = told.decode(errors="replace").strip().splitlines()
    last = lines[-1] if lines else str(code)
    unreadable = re.fullmatch(_UNREADABLE, last)
    if unreadable is None:
        return f"git diff-tree failed: {last}"
    return missing_object(unreadable.group(1) or unreadable.group(2))


def fragments(  # noqa: PLR0913 - a fragment's fields, and the file around it
    path: str,
    added: Mapping[int, bytes],
    info: CommitInfo | None,
    ref: str | None,
    moved_from: str | None = None,
    *,
    whole: Mapping[int, bytes] | None = None,
) -> Iterator[Fragment]:
    """One fragment per run of consecutive line numbers, each read as bytes (``decode``):
    a UTF-16/32 file's lines come here already decoded (``commits.text_added``). With
    ``whole``, the file's lines (``lines_by_number``), each carries the lines around
    it (``sources.context``).

    A run is where ``number - position`` stays the same; grouping those in C keeps
    Python's work per fragment, not per line (this runs on every added line).
    """
    numbers = list(added)
    if not numbers:
        return
    first = numbers[0]
    if numbers[-1] - first == len(numbers) - 1 and numbers == list(range(first, numbers[-1] + 1)):
        # one run, in order: most files of a commit
        text = decode(b"".join(added.values()), start=first == 1)
        context = _context(whole, first, numbers[-1])
        yield diff_fragment(path, text, first, info, ref, moved_from, context)
        return
    if numbers != sorted(numbers):
        added = dict(sorted(added.items()))
        numbers = list(added)
    lines = list(added.values())
    start = 0
    for _, run in itertools.groupby(map(operator.sub, numbers, itertools.count())):
        end = start + len(list(run))
        text = decode(b"".join(lines[start:end]), start=numbers[start] == 1)
        context = _context(whole, numbers[start], numbers[end - 1])
        yield diff_fragment(path, text, numbers[start], info, ref, moved_from, context)
        start = end


def _context(whole: Mapping[int, bytes] | None, first: int, last: int) -> tuple[str, str]:
    """The lines around lines ``first`` to ``last`` of the file, as text; none without it."""
    if whole is None:
        return _NO_CONTEXT
    before, after = around(whole, first, last)
    return decode(before, start=first - before.count(b"\n") == 1), decode(after, start=False)


_NO_CONTEXT = ("", "")


def lines_by_number(data: bytes) -> dict[int, bytes]:
    """A blob's lines (each with its newline, the last perhaps without), by 1-based
    number, split where git splits them; UTF-16/32 text as UTF-8, as diffs read it."""
    lines = as_utf8(data).split(b"\n")
    last = lines.pop()
    numbered = {number: line + b"\n" for number, line in enumerate(lines, start=1)}
    if last:
        numbered[len(lines) + 1] = last
    return numbered


def carried_lines(data: bytes, added: Mapping[int, bytes]) -> dict[int, bytes]:
    """The lines of a renamed file's new content that its diff did not add: what the
    rename carried over from the old path."""
    return {n: line for n, line in lines_by_number(data).items() if n not in added}
