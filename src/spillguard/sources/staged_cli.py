"""The staged changes from the git command line: the pre-commit fast path, without libgit2.

A commit hook runs on every commit, and importing libgit2 alone costs more than the
rest of the hook. When the staged changes are plain, a few short git commands give
exactly the items ``sources.staged`` gives: the index written as a tree (``git
write-tree``), that tree diffed against ``HEAD``'s (``git diff-tree``, set up as for
history scans), then the sizes of the new blobs and the content of the small ones
and of the staged configuration files (``git cat-file``).

Plain means: ``HEAD`` exists (SHA-1), no merge is in progress, nothing is
conflicted, nothing is added and deleted together (libgit2 could pair them as a
rename), and every changed file is a regular file whose content git diffs as text,
without a NUL in a changed line (UTF-16/32 text), under an unquoted UTF-8 path.
Otherwise ``read_staged`` returns None and the hook takes the libgit2 path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.decode import LFS_POINTER_LIMIT, is_lfs_pointer
from spillguard.errors import GitError
from spillguard.models import Skipped
from spillguard.sources.diffparse import REGULAR_MODES, fragments, git_command, run_diff_tree

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from spillguard.sources import Source
    from spillguard.sources.diffparse import CommitDiff, FileDiff

_SHA1_LENGTH = 40


@dataclasses.dataclass(frozen=True, slots=True)
class Staged:
    """What the index holds against ``HEAD``, read once, judged once ``max_size`` is known."""

    #: (path, its diff, the new blob's size), in git's order.
    files: tuple[tuple[str, FileDiff, int], ...]
    #: Content of the new blobs small enough to be LFS pointers, by blob id.
    small: dict[str, bytes]
    #: The staged content of each requested file, or None when it is not staged.
    texts: dict[str, bytes | None]

    def items(self, *, max_size: int) -> Source:
        for path, file, size in self.files:
            if size > max_size:
                yield Skipped(path=path, reason="too large")
            elif is_lfs_pointer(self.small.get(file.new_id, b"")):
                yield Skipped(path=path, reason="LFS pointer")
            else:
                yield from fragments(path, file.added, None, None)


def _git(*args: str, stdin: bytes = b"") -> bytes | None:
    """git's output, or None when it fails (the hook then takes the libgit2 path)."""
    completed = subprocess.run(["git", *args], input=stdin, capture_output=True, check=False)
    return completed.stdout if completed.returncode == 0 else None


def read_staged(paths: Sequence[str]) -> Staged | None:
    """The staged changes and the staged content of ``paths``; None when not plain."""
    trees = _trees()
    if trees is None:
        return None
    git_dir, head_tree, index_tree = trees
    with _scratch(git_dir) as scratch:
        if scratch is None:
            return None
        command, env = git_command(git_dir, scratch)
        stdin = f"{head_tree} {index_tree}\n".encode()
        try:
            diffs = list(run_diff_tree(command, env, stdin, scratch))
        except GitError:
            return None
    files = _plain_files(diffs[0]) if diffs else []
    if files is None:
        return None
    return _with_blobs(git_dir, index_tree, files, paths)


def _trees() -> tuple[str, str, str] | None:
    """The git directory, HEAD's tree and the index written as a tree; None when
    HEAD is unborn (or not SHA-1), a merge is in progress or the index has conflicts."""
    located = _git("rev-parse", "--absolute-git-dir", "HEAD^{tree}")
    if located is None:
        return None  # unborn HEAD, or not a repository: the libgit2 path says which
    git_dir, head_tree = located.decode().split("\n")[:2]
    if len(head_tree) != _SHA1_LENGTH or Path(git_dir, "MERGE_HEAD").exists():
        return None
    written = _git("write-tree")  # fails on conflicts
    return None if written is None else (git_dir, head_tree, written.decode().strip())


@contextlib.contextmanager
def _scratch(git_dir: str) -> Iterator[str | None]:
    """An empty directory inside the git directory for the run, or None if none can be made.

    Not ``tempfile``: importing it (and shutil, bz2, lzma) costs a hook several ms.
    """
    path = Path(git_dir, f"spillguard-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        path.mkdir()
    except OSError:
        yield None
        return
    try:
        yield str(path)
    finally:
        for child in path.iterdir():
            child.unlink()
        path.rmdir()


def _plain_files(diff: CommitDiff) -> list[tuple[str, FileDiff]] | None:
    statuses = {file.status for file in diff.files}
    if not statuses <= {"A", "M", "D"} or {"A", "D"} <= statuses:
        return None
    if diff.sections != len(diff.files):
        return None
    files = []
    for file in diff.files:
        if file.status == "D":
            continue
        # A NUL in a changed line may be UTF-16/32 text: libgit2's path decodes it.
        plain = file.new_mode in REGULAR_MODES and not file.binary and not file.nul
        if not plain or file.old_id == file.new_id or file.path.startswith(b'"'):
            return None
        try:
            files.append((file.path.decode("utf-8"), file))
        except UnicodeDecodeError:
            return None
    return files


def _with_blobs(
    git_dir: str, tree: str, files: list[tuple[str, FileDiff]], paths: Sequence[str]
) -> Staged | None:
    blobs = [file.new_id for _, file in files]
    staged = [f"{tree}:{path}" for path in paths]
    sizes = _sizes(git_dir, blobs + staged)
    if sizes is None:
        return None
    small = [blob for blob in blobs if sizes.get(blob, LFS_POINTER_LIMIT) < LFS_POINTER_LIMIT]
    contents = _contents(git_dir, small + [name for name in staged if name in sizes])
    if contents is None:
        return None
    return Staged(
        files=tuple((path, file, sizes[file.new_id]) for path, file in files),
        small={name: data for name, data in contents.items() if ":" not in name},
        texts={path: contents.get(f"{tree}:{path}") for path in paths},
    )


def _sizes(git_dir: str, names: Sequence[str]) -> dict[str, int] | None:
    """The size of each named blob; names that are missing or not blobs are left out."""
    output = _git(f"--git-dir={git_dir}", "cat-file", "--batch-check", stdin=_lines(names))
    if output is None:
        return None
    sizes = {}
    for name, line in zip(names, output.decode().splitlines(), strict=True):
        fields = line.split(" ")
        if len(fields) == 3 and fields[1] == "blob":  # id, type, size
            sizes[name] = int(fields[2])
    return sizes


def _contents(git_dir: str, names: Sequence[str]) -> dict[str, bytes] | None:
    """The content of each named blob (all of them exist)."""
    if not names:
        return {}
    output = _git(f"--git-dir={git_dir}", "cat-file", "--batch", stdin=_lines(names))
    if output is None:
        return None
    contents = {}
    position = 0
    for name in names:
        header_end = output.index(b"\n", position)
        size = int(output[position:header_end].split(b" ")[2])
        contents[name] = output[header_end + 1 : header_end + 1 + size]
        position = header_end + 1 + size + 1
    return contents


def _lines(names: Iterable[str]) -> bytes:
    return "".join(f"{name}\n" for name in names).encode()
