"""The lines one version of a blob adds to another, diffed in memory.

Where git's diff of a commit cannot be taken as it is (text git calls binary, UTF-16/32
text, a binary's printable runs, a merge's other parents), both versions are read and
diffed here, placed where ``git diff -U0`` puts them. The diff itself is libgit2's
(``git.diff_buffers``: git has no in-memory diff of two buffers to call).
"""

from __future__ import annotations

from collections.abc import Callable

from spillguard.core.archives import is_archive, opened
from spillguard.core.decode import (
    as_utf8,
    is_binary,
    marked_encoding,
    printable_runs,
    runs_by_line,
    wide_encoding,
)

#: Lines of one file a commit adds: new line number -> raw line (with its newline).
AddedLines = dict[int, bytes]


def changes(old: bytes | None, new: bytes) -> tuple[AddedLines, list[int]]:
    """``text_changes``, or of a binary the printable runs it adds (nothing removed)."""
    if is_binary(new):
        return runs_added(old, new), []
    return text_changes(old, new)


def members_added(
    path: str, old: bytes | None, new: bytes, max_size: int
) -> list[tuple[str, AddedLines]] | str:
    """What the members of archive ``new`` add (``changes``), each at ``path!member``,
    to the members of the same name in ``old``; or why ``new`` cannot be opened within
    the limits (``archives.opened``), its own bytes then judged as a binary's."""
    found = opened(path, new, max_size=max_size)
    if isinstance(found, str):
        return found
    before = {}
    if old is not None and is_archive(old):
        previous = opened(path, old, max_size=max_size)
        if not isinstance(previous, str):
            before = {member.path: member.data for member in previous}
    return [
        (member.path, changes(before.get(member.path), member.data)[0])
        for member in found
        if before.get(member.path) != member.data
    ]


#: A way to find the lines one version of a blob adds to another (``diffs_for``).
Diff = Callable[[bytes | None, bytes], AddedLines]


def diffs_for(data: bytes) -> tuple[Diff, ...]:
    """How the lines a blob adds are found, one diff per reading (``decode.readings``):
    a binary's printable runs; UTF-16/32 text decoded, and as its bytes too
    (``bytes_added``); any other text as it is."""
    if is_binary(data):
        return (runs_added,)
    return (text_added, bytes_added) if wide_encoding(data) else (text_added,)


def bytes_added(old: bytes | None, new: bytes) -> AddedLines:
    """The lines UTF-16/32 text adds read as its bytes (``decode.readings``): as text,
    whatever byte order mark opens them; without a mark, as a binary's printable runs."""
    if marked_encoding(new) is None:
        return runs_added(old, new, wide=False)  # the decoded reading has those
    return text_added(old, new, as_bytes=True)


def runs_added(old: bytes | None, new: bytes, *, wide: bool = True) -> AddedLines:
    """The printable runs of binary content ``new`` that ``old`` does not hold, on their
    lines: a binary has no lines to diff, but the text it carries is judged
    (``decode.printable_runs``)."""
    known = frozenset(run for _, run in printable_runs(old, wide=wide)) if old else frozenset()
    return runs_by_line(printable_runs(new, wide=wide), known)


def text_added(old: bytes | None, new: bytes, *, as_bytes: bool = False) -> AddedLines:
    """The lines ``new`` adds to ``old``, as ``git diff -U0`` finds them: libgit2's
    diff of the two after git's trim of their common tail; when either side is
    UTF-16/32 text (a byte order mark), both are compared as UTF-8 text, unless
    ``as_bytes`` (the bytes reading of such text)."""
    return text_changes(old, new, as_bytes=as_bytes)[0]


def text_changes(
    old: bytes | None, new: bytes, *, as_bytes: bool = False
) -> tuple[AddedLines, list[int]]:
    """``text_added``, and where the hunks that only remove lines removed them (the new
    line before each, as ``git diff -U0`` numbers them)."""
    if not as_bytes and (wide_encoding(new) or (old is not None and wide_encoding(old))):
        old = None if old is None else as_utf8(old)
        new = as_utf8(new)
    if old is not None:
        old, new = trim_common_tail(old, new)
    # Here, not at the top: most commits never need it, and importing libgit2 costs a
    # hook ~25 ms (a push's pre-receive and pre-push read commits with git alone).
    from spillguard import git

    return git.diff_buffers(old, new)


#: git compares the files' tails in blocks of this many bytes.
_TAIL_BLOCK = 1024


def trim_common_tail(old: bytes, new: bytes) -> tuple[bytes, bytes]:
    """Both texts without the whole lines of the tail they share, as git trims it
    before a diff without context (``trim_common_tail`` in git's xdiff-interface.c).

    Whole 1024-byte blocks from the end are cut while they are equal, then the cut
    moves forward past the first newline, so only whole shared lines go. What goes
    cannot be a change, but it can move one: a run of added lines that the full
    texts would let slide down into the shared tail stays above it. The history
    fast path asks git for diffs without context, which git trims; every other diff
    is trimmed here the same way, so all paths place added lines alike.
    """
    trimmed = 0
    limit = min(len(old), len(new))
    while trimmed + _TAIL_BLOCK <= limit and (
        old[len(old) - trimmed - _TAIL_BLOCK : len(old) - trimmed]
        == new[len(new) - trimmed - _TAIL_BLOCK : len(new) - trimmed]
    ):
        trimmed += _TAIL_BLOCK
    if not trimmed:
        return old, new
    newline = old.find(b"\n", len(old) - trimmed)
    if newline < 0:
        return old, new  # no whole line to cut
    cut = len(old) - newline - 1
    return old[: len(old) - cut], new[: len(new) - cut]
