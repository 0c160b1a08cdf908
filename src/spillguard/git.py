"""The one boundary with pygit2: opening repositories, resolving revisions, reading blobs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DiffOption, FileMode, RepositoryOpenFlag

from spillguard.core import gitcommand
from spillguard.core.decode import (
    LFS_POINTER_LIMIT,
    is_lfs_pointer,
    judged_as,
    skipped,
    unread_reason,
)
from spillguard.core.errors import GitError, UsageError
from spillguard.core.models import Fragment, Skipped

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

GITLINK_MODE = int(FileMode.COMMIT)
# FORCE_TEXT: a `-diff` or `binary` attribute in .gitattributes must not hide a
# file's lines from the scan; real binaries are recognised by content first.
DIFF_FLAGS = DiffOption.FORCE_TEXT
TREE_MODE = int(FileMode.TREE)


def bound_pack_memory() -> None:
    """Keep at most 16 MiB of pack files mapped and 8 MiB of parsed objects cached
    (libgit2 allows 8 GiB and 256 MiB by default).

    A history scan reads the whole pack and parses every commit and tree; without a
    bound, the process's memory grows with the repository.
    """
    pygit2.settings.mwindow_size = 4 << 20
    pygit2.settings.mwindow_mapped_limit = 16 << 20
    pygit2.settings.cache_max_size(8 << 20)


def object_format(path: str) -> str | None:
    """``sha1`` or ``sha256`` for the repository at ``path`` (git's answer); None outside one.

    libgit2 opens SHA-1 repositories only: SHA-256 ones are read through the git CLI.
    """
    return _git_answer(path, "rev-parse", "--show-object-format")


def _git_answer(path: str, *args: str) -> str | None:
    """git's one-line answer about the repository at ``path``; None when it has none
    (or git is not installed: libgit2 then does everything)."""
    try:
        completed = gitcommand.run(gitcommand.command("-C", path, *args))
    except FileNotFoundError:
        return None
    return completed.stdout.decode().strip() or None if completed.returncode == 0 else None


def open_repository(path: str = ".") -> pygit2.Repository:
    """The repository containing ``path`` (a work tree or a bare repository)."""
    found = pygit2.discover_repository(path)
    if found is None:
        raise GitError(f"{path}: not a git repository")
    return _open(found, path)


def open_from_environment(path: str = ".") -> pygit2.Repository:
    """The repository as git's environment names it inside a hook.

    ``GIT_DIR``, ``GIT_INDEX_FILE`` (``git commit -a`` stages into a temporary
    index), ``GIT_OBJECT_DIRECTORY`` and the alternates are honoured; without
    ``GIT_DIR`` the repository is discovered from ``path``.
    """
    if "GIT_DIR" not in os.environ and pygit2.discover_repository(path) is None:
        raise GitError(f"{path}: not a git repository")
    return _open(path, path, RepositoryOpenFlag.FROM_ENV)


def _open(
    found: str, path: str, flags: RepositoryOpenFlag = RepositoryOpenFlag.DEFAULT
) -> pygit2.Repository:
    try:
        return pygit2.Repository(found, flags)
    except pygit2.GitError as error:
        if "object format" in str(error):
            raise GitError(
                f"{path}: repositories in the SHA-256 object format are not supported yet "
                "(libgit2 reads SHA-1 only)"
            ) from None
        raise GitError(f"{path}: cannot open repository: {error}") from None


def work_tree_root(path: str) -> str | None:
    """The top of the work tree containing ``path``; None outside one (or in a bare repository)."""
    found = pygit2.discover_repository(path)
    if found is None:
        return None
    try:
        workdir = pygit2.Repository(found).workdir
    except pygit2.GitError:  # SHA-256: libgit2 cannot open it, git can
        return _git_answer(path, "rev-parse", "--show-toplevel")
    return workdir.rstrip("/\\") if workdir else None


def config_root(path: str) -> str:
    """Where a command run at ``path`` finds ``.spillguard.toml``: the top of its work
    tree, as git finds its files from a subdirectory; ``path`` itself otherwise."""
    if not Path(path).is_dir():
        raise UsageError(f"--repo {path}: not a directory")
    try:
        return work_tree_root(path) or path
    except pygit2.GitError:  # unreadable here (SHA-256): opening it says why, clearly
        return path


def user_identity(path: str, environ: Mapping[str, str]) -> str:
    """``Name <email>`` as git would record an author here: the environment, then the config."""
    found = pygit2.discover_repository(path)
    try:
        config = pygit2.Repository(found).config if found else _global_config()
    except pygit2.GitError:  # SHA-256: libgit2 cannot open it, git reads its config
        name = environ.get("GIT_AUTHOR_NAME") or _git_config_value(path, "user.name")
        email = environ.get("GIT_AUTHOR_EMAIL") or _git_config_value(path, "user.email")
    else:
        name = environ.get("GIT_AUTHOR_NAME") or _config_value(config, "user.name")
        email = environ.get("GIT_AUTHOR_EMAIL") or _config_value(config, "user.email")
    return f"{name} <{email}>" if email else name


def _git_config_value(path: str, key: str) -> str:
    return _git_answer(path, "config", "--get", key) or ""


def _global_config() -> pygit2.Config | None:
    try:
        return pygit2.Config.get_global_config()
    except (OSError, pygit2.GitError):
        return None  # no ~/.gitconfig: the environment alone names the user


def _config_value(config: pygit2.Config | None, key: str) -> str:
    if config is None:
        return ""
    try:
        return str(config[key])
    except (KeyError, pygit2.GitError):
        return ""


def resolve_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """The commit a revision names; a missing ref is a GitError that names it."""
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise _unknown_revision(repo, rev) from None


def resolve_tree(repo: pygit2.Repository, rev: str) -> pygit2.Tree:
    try:
        return repo.revparse_single(rev).peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise _unknown_revision(repo, rev) from None


def _unknown_revision(repo: pygit2.Repository, rev: str) -> GitError:
    if rev in {"HEAD", "@"} and repo.head_is_unborn:
        return GitError("the repository has no commits yet (HEAD is unborn)")
    return GitError(f"unknown revision {rev!r}")


def skip_reason(
    repo: pygit2.Repository, object_id: pygit2.Oid, mode: int, max_size: int
) -> tuple[str | None, bytes]:
    """Why a blob is left out (a submodule, ``decode.unread_reason``), or None and its
    content. A symlink's blob is its target's text, which git stores whatever it
    holds (``git update-index --cacheinfo 120000,BLOB,PATH``): it is read as text."""
    if mode == GITLINK_MODE:
        return "submodule", b""
    data: bytes = repo.odb.read(object_id)[1]
    reason = unread_reason(data, max_size)
    return (reason, b"") if reason is not None else (None, data)


def is_lfs_pointer_blob(repo: pygit2.Repository, object_id: pygit2.Oid) -> bool:
    """Whether the blob is a Git LFS pointer file, read only when it is small enough."""
    if repo.odb.read_header(object_id)[1] >= LFS_POINTER_LIMIT:
        return False
    return is_lfs_pointer(repo.odb.read(object_id)[1])


def blob_items(
    repo: pygit2.Repository, object_id: pygit2.Oid, path: str, mode: int, max_size: int
) -> tuple[Fragment | Skipped, ...]:
    """A blob's text as a Fragment per reading (``decode.readings``), or why it is left
    out (submodule, binary...)."""
    reason, data = skip_reason(repo, object_id, mode, max_size)
    if reason is not None:
        return (skipped(path, reason),)
    texts, unopened = judged_as(path, data, max_size)
    found = tuple(Fragment(path=where, text=text) for where, text in texts)
    return found if unopened is None else (skipped(path, unopened), *found)


#: A file of a tree: its path, blob id (hex) and mode.
TreeFile = tuple[str, str, int]


def iter_tree(
    repo: pygit2.Repository, tree: pygit2.Tree, *, max_size: int, prefix: str = ""
) -> Iterator[Fragment | Skipped]:
    """Every file of a tree, depth first, in git's order."""
    return read_tree_files(repo, list_tree(repo, tree, prefix), max_size=max_size)


def list_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> list[TreeFile]:
    """Every file of a tree, depth first, in git's order; no blob is read yet."""
    files: list[TreeFile] = []
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.filemode == TREE_MODE:
            files += list_tree(repo, repo[entry.id].peel(pygit2.Tree), f"{path}/")
        else:
            files.append((path, str(entry.id), entry.filemode))
    return files


def read_tree_files(
    repo: pygit2.Repository, files: Iterable[TreeFile], *, max_size: int
) -> Iterator[Fragment | Skipped]:
    """The Fragment or Skipped item of each listed file of a tree, in order."""
    for path, object_id, mode in files:
        yield from blob_items(repo, pygit2.Oid(hex=object_id), path, mode, max_size)


def file_at_head(repo: pygit2.Repository, path: str, max_size: int) -> bytes | None:
    """A regular file's bytes in the commit HEAD points at (the default branch of a bare
    repository); None when HEAD is unborn or has no such file.
    """
    if repo.head_is_unborn:
        return None
    try:
        entry = repo.head.peel(pygit2.Commit).tree[path]
    except KeyError:
        return None
    if entry.filemode not in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
        return None
    _, size = repo.odb.read_header(entry.id)
    if size > max_size:
        return None
    data: bytes = repo.odb.read(entry.id)[1]
    return data


def diff_buffers(old: bytes | None, new: bytes) -> tuple[dict[int, bytes], list[int]]:
    """The lines ``new`` adds to ``old`` (by new line number, with their newlines) and
    where hunks that only remove lines removed them (the new line before each), in
    libgit2's diff without context: git's command line diffs only objects and files."""
    patch = pygit2.Patch.create_from(old, new, flag=DIFF_FLAGS, context_lines=0)
    added = {
        line.new_lineno: line.raw_content
        for hunk in patch.hunks
        for line in hunk.lines
        if line.origin == "+"
    }
    return added, [hunk.new_start for hunk in patch.hunks if not hunk.new_lines]
