"""``spillguard install HOOK`` and ``uninstall``: hook scripts in a repository's hooks directory.

The directory is ``core.hooksPath`` when set (relative to the working tree, or to
the repository itself when bare, as git reads it), else ``hooks`` in the common
git directory, so linked worktrees share it. The script runs spillguard with the
Python that installed it. A hook that spillguard did not write is replaced only
with ``--force``, kept as ``HOOK.bak`` and run first by the new one; ``uninstall``
removes only spillguard's hooks and puts such a ``HOOK.bak`` back.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard import git
from spillguard.core import gitcommand
from spillguard.core.errors import ExitCode, UsageError
from spillguard.hooks.scripts import HOOK_KINDS, MARKER, hook_script

if TYPE_CHECKING:
    import pygit2

    from spillguard.commands.setup_options import InstallOptions, UninstallOptions


def _config_value(repo: pygit2.Repository, name: str) -> str | None:
    config = repo.config
    return str(config[name]) if name in config else None


def hooks_directory(repo: pygit2.Repository) -> Path:
    git_dir = Path(repo.path)
    configured = _config_value(repo, "core.hooksPath")
    if configured:
        base = git_dir if repo.is_bare else Path(repo.workdir)
        return base / Path(str(configured)).expanduser()
    common = git_dir / "commondir"  # a linked worktree points at the main git directory
    if common.is_file():
        git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    return git_dir / "hooks"


def _is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _backup(target: Path) -> Path:
    return target.with_name(f"{target.name}.bak")


def _make_room(target: Path, *, force: bool) -> None:
    """Refuse to overwrite a foreign hook, or (with --force) keep it as .bak."""
    if not _exists(target) or _is_ours(target):
        return
    backup = _backup(target)
    if not force:
        raise UsageError(
            f"{target} exists and was not written by spillguard; rerun with --force "
            f"to keep it as {backup.name}, which then runs before spillguard"
        )
    if _exists(backup):
        raise UsageError(f"{backup} exists too; move it away, then rerun with --force")
    target.rename(backup)
    print(f"spillguard: kept the previous hook as {backup}; it runs before spillguard")


def _write_executable(target: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        Path(temporary).chmod(0o755)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _layout(path: str) -> tuple[bool, Path]:
    """Whether the repository at ``path`` is bare, and its hooks directory."""
    if git.object_format(path) not in {None, "sha1"}:
        return _layout_from_git(path)
    repo = git.open_repository(path)  # outside a repository: it names the problem
    return repo.is_bare, hooks_directory(repo)


def _layout_from_git(path: str) -> tuple[bool, Path]:
    """As git reports it (SHA-256: libgit2 cannot open it); core.hooksPath included."""
    completed = gitcommand.run(
        gitcommand.command("-C", path, "rev-parse", "--is-bare-repository", "--git-path", "hooks")
    )
    lines = completed.stdout.decode().splitlines()
    if completed.returncode != 0 or len(lines) != 2:  # the two answers asked for
        told = completed.stderr.decode(errors="replace").strip()
        raise UsageError(f"{path}: cannot read the repository: {told}")
    return lines[0] == "true", Path(path, lines[1].strip()).resolve()


def run_install_command(options: InstallOptions) -> int:
    bare, directory = _layout(options.repo)
    if options.hook == "pre-receive" and not bare:
        raise UsageError(
            f"{options.repo}: a pre-receive hook belongs in the server's bare repository "
            "(git init --bare); this repository has a working tree"
        )
    # The interpreter as invoked, not resolved: a virtual environment's python is a
    # symlink whose own path is what selects the environment's packages.
    python = str(Path(sys.executable).absolute())
    try:
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / options.hook
        _make_room(target, force=options.force)
        chained = _exists(_backup(target))
        _write_executable(target, hook_script(options.hook, python=python, chained=chained))
    except OSError as error:
        raise UsageError(f"{directory}: cannot write the hook: {error.strerror}") from None
    print(f"spillguard: installed the {options.hook} hook: {target} (it runs {python})")
    return ExitCode.CLEAN


def run_uninstall_command(options: UninstallOptions) -> int:
    _, directory = _layout(options.repo)
    kinds = (options.hook,) if options.hook else HOOK_KINDS
    found = [directory / kind for kind in kinds if _exists(directory / kind)]
    foreign = [target for target in found if not _is_ours(target)]
    if options.hook and foreign:
        raise UsageError(f"{foreign[0]} was not written by spillguard; it is left as it is")
    ours = [target for target in found if _is_ours(target)]
    if not ours:
        print(f"spillguard: no spillguard hook to remove in {directory}")
    try:
        for target in ours:
            _remove(target)
    except OSError as error:
        raise UsageError(f"{directory}: cannot remove the hook: {error.strerror}") from None
    return ExitCode.CLEAN


def _remove(target: Path) -> None:
    """Remove spillguard's hook, putting back the one ``install --force`` kept."""
    backup = _backup(target)
    if _exists(backup):
        backup.replace(target)
        print(f"spillguard: removed the {target.name} hook; restored the previous one: {target}")
    else:
        target.unlink()
        print(f"spillguard: removed the {target.name} hook: {target}")
