"""One tree (``scan --tree``) by git alone, in every repository, SHA-1 or SHA-256.

``git ls-tree`` lists the files, then each worker reads its chunk of them with
``git cat-file --batch``, a few hundred blobs at a time (memory stays bounded). The
revision is checked first (``git rev-parse --verify``), so a bad one fails with one
line. A file is judged whole: a submodule is skipped, a symlink's target is read as
text, ``decode.unread_reason`` leaves out large binaries and LFS pointers, and each
reading of the rest (``decode.readings``) is a Fragment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.core.decode import judged_as, skipped, unread_reason
from spillguard.core.errors import GitError
from spillguard.core.models import Fragment
from spillguard.sources.gitcli import git_dir_of, git_output, resolve
from spillguard.sources.staged_cli import blob_contents

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.core.models import Skipped

#: A file of a tree: its path, blob id and mode.
TreeFile = tuple[str, str, int]

_GITLINK_MODE = 0o160000
#: Blobs asked of one ``git cat-file``: few processes, and a bounded share in memory.
_BATCH = 256


def list_tree(path: str, rev: str) -> tuple[str, list[TreeFile]]:
    """The git directory and every file of the tree ``rev`` names, depth first, in
    git's order; no blob is read yet."""
    git_dir = git_dir_of(path)
    tree = resolve(git_dir, rev, "tree")
    files = []
    for entry in git_output(git_dir, "ls-tree", "-r", "-z", tree).split(b"\0")[:-1]:
        meta, _, name = entry.partition(b"\t")
        mode, _, object_id = meta.decode().split(" ")
        files.append((name.decode("utf-8", "surrogateescape"), object_id, int(mode, 8)))
    return git_dir, files


def read_tree_files(
    git_dir: str, files: Sequence[TreeFile], *, max_size: int
) -> Iterator[Fragment | Skipped]:
    """The Fragment or Skipped items of each listed file, in order."""
    for start in range(0, len(files), _BATCH):
        batch = files[start : start + _BATCH]
        blobs = [object_id for _, object_id, mode in batch if mode != _GITLINK_MODE]
        contents = blob_contents(git_dir, blobs)
        if contents is None:
            raise GitError(f"git could not read the blobs of {batch[0][0]} and after")
        for path, object_id, mode in batch:
            if mode == _GITLINK_MODE:
                yield skipped(path, "submodule")
                continue
            data = contents[object_id]
            reason = unread_reason(data, max_size)
            if reason is not None:
                yield skipped(path, reason)
                continue
            texts, unopened = judged_as(path, data, max_size)
            if unopened is not None:
                yield skipped(path, unopened)
            yield from (Fragment(path=where, text=text) for where, text in texts)
