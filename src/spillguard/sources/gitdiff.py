"""The lines commits add, read from ``git diff-tree``: the fast path under history scans.

git produces the diffs of many commits several times faster than libgit2 does. This
module runs one ``git diff-tree --stdin`` over a batch of commits and turns its
output into exactly the Fragments and Skipped items that ``sources.commits`` yields
for each commit. Wherever git's view could differ from libgit2's, the commit (or the
file) goes through ``sources.commits`` instead:

- merges (their combined view), and commits that add and delete files or change a
  file's type (libgit2 may pair them as renames);
- files git calls binary (``sources.commits`` judges only the new side's content),
  and mode-only changes;
- paths git has to quote (control characters, quotes, backslashes).

git runs with everything that could colour its diff switched off: no attributes (an
empty work tree and index, no attribute files), no replace refs, no external diff or
textconv, the plain Myers algorithm without the indent heuristic, as libgit2 diffs.
Sizes, LFS pointers, symlinks and submodules are decided by ``git.skip_reason`` on
the same blobs, in the same order, as the simple path.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pygit2

from spillguard import git
from spillguard.errors import GitError
from spillguard.models import Skipped
from spillguard.sources.commits import (
    DIFF_FLAGS,
    _fragments,
    _patch_added,
    commit_info,
    iter_commit_fragments,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.models import CommitInfo
    from spillguard.sources import Source, SourceItem

_DIFF_TREE = (
    "diff-tree",
    "--stdin",
    "--always",
    "--raw",
    "--patch",
    # One line of context, not none: with none, git trims the files' common tail
    # before diffing, which moves ambiguous runs of added lines away from where
    # libgit2 (and git itself, with context) puts them.
    "--unified=1",
    "--inter-hunk-context=0",
    "--no-renames",
    "--no-abbrev",
    "-r",
    "--root",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--diff-algorithm=myers",
    "--no-indent-heuristic",
)
_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_COMMIT_HEADER = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\n")
_REGULAR_MODES = frozenset({0o100644, 0o100755})
#: Empty tree, the value that leaves attr.tree without any .gitattributes.
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclasses.dataclass(slots=True)
class _File:
    """One raw entry of a commit's diff and, from its patch, the lines it adds."""

    new_mode: int
    old_id: str
    new_id: str
    status: str
    path: bytes
    binary: bool = False
    added: dict[int, bytes] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class _CommitDiff:
    commit: str
    files: list[_File] = dataclasses.field(default_factory=list)
    sections: int = 0


# A hunk line's first byte, as the int that indexing bytes gives.
_PLUS, _MINUS, _SPACE, _BACKSLASH = b"+- \\"
_HEADER_LENGTHS = frozenset({41, 65})  # a SHA-1 or SHA-256 id and its newline


def _raw_entry(line: bytes) -> _File:
    """``:old_mode new_mode old_id new_id status<TAB>path``."""
    fields, _, path = line[1:].rstrip(b"\n").partition(b"\t")
    _, new_mode, old_id, new_id, status = fields.split(b" ")
    return _File(
        new_mode=int(new_mode, 8),
        old_id=old_id.decode(),
        new_id=new_id.decode(),
        status=status.decode()[:1],
        path=path,
    )


def _hunk(line: bytes) -> tuple[int, int, int]:
    """(lines of the old side, first line of the new side, lines of the new side)."""
    match = _HUNK.match(line)
    if match is None:
        raise GitError(f"git diff-tree: unexpected hunk header {line[:80]!r}")
    old, start, new = match.groups()
    return (1 if old is None else int(old)), int(start), (1 if new is None else int(new))


def _read_hunk(lines: Iterator[bytes], header: bytes, added: dict[int, bytes]) -> int | None:
    """Record the hunk's added lines by new line number; returns the last line's number
    when the hunk ends with an added line (a "no newline" marker may follow)."""
    minus, number, plus = _hunk(header)
    last = None
    while minus > 0 or plus > 0:
        line = next(lines)
        tag = line[0]
        if tag == _PLUS:
            added[number] = line[1:]
            last = number
            number += 1
            plus -= 1
        elif tag == _SPACE:
            number += 1
            plus -= 1
            minus -= 1
            last = None
        elif tag == _MINUS:
            minus -= 1
            last = None
        elif tag == _BACKSLASH:
            _no_newline(added, last)
            last = None
        else:
            raise GitError(f"git diff-tree: unexpected line in a hunk {line[:80]!r}")
    return last


def _no_newline(added: dict[int, bytes], last: int | None) -> None:
    """``\\ No newline at end of file`` after an added line: that line has none."""
    if last is not None:
        added[last] = added[last].removesuffix(b"\n")


def parse(stream: IO[bytes]) -> Iterator[_CommitDiff]:
    """Each commit's raw entries and added lines, in git's output order.

    One loop with inlined hunk reading: this runs once per line of every diff.
    """
    current = _CommitDiff(commit="")  # nothing comes before the first commit's id
    added: dict[int, bytes] = {}
    last: int | None = None
    lines = iter(stream)
    for line in lines:
        tag = line[:1]
        if tag == b"@":
            last = _read_hunk(lines, line, added)
            continue
        if tag == b"\\":
            _no_newline(added, last)
        elif len(line) in _HEADER_LENGTHS and _COMMIT_HEADER.fullmatch(line):
            if current.commit:
                yield current
            current = _CommitDiff(commit=line[:-1].decode())
        else:
            added = _section_line(current, tag, line, added)
        last = None
    if current.commit:
        yield current


def _section_line(
    current: _CommitDiff, tag: bytes, line: bytes, added: dict[int, bytes]
) -> dict[int, bytes]:
    """Take a raw entry or a patch header line; returns where added lines go next."""
    if tag == b":":
        current.files.append(_raw_entry(line))
    elif tag == b"d" and line.startswith(b"diff --git "):
        return _next_section(current)
    elif (
        tag == b"B"
        and line.startswith(b"Binary files ")
        and 0 < current.sections <= len(current.files)
    ):
        current.files[current.sections - 1].binary = True
    return added


def _next_section(current: _CommitDiff) -> dict[int, bytes]:
    """The added-lines map of the raw entry the next patch section belongs to."""
    current.sections += 1
    if current.sections > len(current.files):
        return {}  # more sections than entries: _commit_items rejects the commit
    return current.files[current.sections - 1].added


def _git_command(repo: pygit2.Repository, scratch: str) -> tuple[list[str], dict[str, str]]:
    """git diff-tree with no attributes, replace refs or diff drivers in the way."""
    empty = os.path.join(scratch, "empty")  # noqa: PTH118 - plain strings for argv
    with open(empty, "w", encoding="utf-8"):  # noqa: PTH123
        pass
    command = [
        "git",
        f"--git-dir={repo.path}",
        f"--work-tree={scratch}",
        "-c",
        f"core.attributesFile={empty}",
        "-c",
        f"attr.tree={_EMPTY_TREE}",
        "-c",
        "core.quotePath=false",
        *_DIFF_TREE,
    ]
    env = dict(os.environ)
    env.update(
        GIT_INDEX_FILE=os.path.join(scratch, "index"),  # noqa: PTH118 - absent: no index
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_CONFIG_NOSYSTEM=env.get("GIT_CONFIG_NOSYSTEM", "0"),
    )
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS"):
        env.pop(name, None)
    return command, env


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
    repo: pygit2.Repository, commits: Sequence[pygit2.Commit], *, max_size: int
) -> Source:
    """The items of each commit, in order, as ``sources.commits`` would yield them."""
    plain = [commit for commit in commits if len(commit.parent_ids) <= 1]
    with tempfile.TemporaryDirectory(prefix="spillguard-") as scratch:
        diffs = _run_git(repo, plain, scratch)
        for commit in commits:
            if len(commit.parent_ids) > 1:
                yield from iter_commit_fragments(repo, commit, max_size=max_size)
                continue
            diff = next(diffs, None)
            if diff is None or diff.commit != str(commit.id):
                raise GitError(f"git diff-tree lost its place at commit {commit.id}")
            items = _commit_items(repo, commit, diff, max_size)
            if items is None:
                yield from iter_commit_fragments(repo, commit, max_size=max_size)
            else:
                yield from items


def _run_git(
    repo: pygit2.Repository, commits: Sequence[pygit2.Commit], scratch: str
) -> Iterator[_CommitDiff]:
    command, env = _git_command(repo, scratch)
    with tempfile.TemporaryFile() as ids, tempfile.TemporaryFile() as errors:
        ids.write(b"".join(b"%s\n" % str(commit.id).encode() for commit in commits))
        ids.seek(0)
        with subprocess.Popen(
            command, stdin=ids, stdout=subprocess.PIPE, stderr=errors, env=env
        ) as process:
            if process.stdout is not None:
                yield from parse(process.stdout)
        if process.returncode != 0:
            errors.seek(0)
            lines = errors.read().decode(errors="replace").strip().splitlines()
            raise GitError(f"git diff-tree failed: {lines[-1] if lines else process.returncode}")


def _commit_items(
    repo: pygit2.Repository, commit: pygit2.Commit, diff: _CommitDiff, max_size: int
) -> list[SourceItem] | None:
    """The commit's items, or None when only the simple path gives the exact answer."""
    statuses = {file.status for file in diff.files}
    if not statuses <= {"A", "M", "D"} or {"A", "D"} <= statuses:
        return None  # possible renames or type changes
    if diff.sections != len(diff.files):
        return None
    info = commit_info(commit)
    items: list[SourceItem] = []
    for file in diff.files:
        if file.status == "D":
            continue
        if file.path.startswith(b'"'):
            return None  # a quoted path: let pygit2 name it
        try:
            path = file.path.decode("utf-8")
        except UnicodeDecodeError:
            return None
        items.extend(_file_items(repo, file, path, info, max_size))
    return items


def _file_items(
    repo: pygit2.Repository, file: _File, path: str, info: CommitInfo, max_size: int
) -> Iterator[SourceItem]:
    new_id = pygit2.Oid(hex=file.new_id)
    regular = file.new_mode in _REGULAR_MODES
    size = repo.odb.read_header(new_id)[1] if regular else 0
    exact = not regular or size < git.LFS_POINTER_LIMIT or file.binary or file.old_id == file.new_id
    if exact or size > max_size:
        reason, _ = git.skip_reason(repo, new_id, file.new_mode, max_size)
        if reason is not None:
            yield Skipped(path=path, reason=reason, commit=info.id)
            return
    added = (
        _exact_added(repo, file, new_id)
        if file.binary or file.old_id == file.new_id
        else file.added
    )
    if added:
        yield from _fragments(path, added, info, None)


def _exact_added(repo: pygit2.Repository, file: _File, new_id: pygit2.Oid) -> dict[int, bytes]:
    """libgit2's own text diff of the file, as the simple path makes it."""
    old = None if git.is_zero_id(file.old_id) else repo[file.old_id].peel(pygit2.Blob)
    new = repo[new_id].peel(pygit2.Blob)
    patch = pygit2.Patch.create_from(old, new, flag=DIFF_FLAGS, context_lines=0)
    return _patch_added(patch)


def iter_commit_chunk(repo: pygit2.Repository, commits: Sequence[str], *, max_size: int) -> Source:
    """The items of these commits (ids, in this order): git's fast path wherever it is exact."""
    objects = [repo[commit].peel(pygit2.Commit) for commit in commits]
    if usable(repo):
        return iter_commits_fast(repo, objects, max_size=max_size)
    return (
        item
        for commit in objects
        for item in iter_commit_fragments(repo, commit, max_size=max_size)
    )
