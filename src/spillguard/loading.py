"""Find the configuration files that apply to a scan and resolve them into one Config.

Layers, lowest first: built-in rules; the global file (``--config``, else the
user's ``$XDG_CONFIG_HOME/spillguard/config.toml``; on a server the administrator's
``spillguard.toml`` in the bare repository); the synced server cache
(``sync_cache``, skipped with ``--offline``); the
per-repository ``.spillguard.toml``; command-line flags.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spillguard.config import (
    REPOSITORY_FILE,
    Config,
    Layer,
    load_layer_file,
    load_layer_text,
    read_text_file,
    resolve,
)
from spillguard.errors import ConfigError
from spillguard.reviewed import REVIEWED_FILE, entries, parse_reviewed
from spillguard.rules import builtin_rules
from spillguard.sync_cache import DEFAULT_MAX_AGE_HOURS, SyncedConfig, load_synced

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import pygit2

    from spillguard.models import ReviewedEntry

#: The administrator's file inside a bare repository on a server.
SERVER_FILE = "spillguard.toml"

#: (text, source) of a per-repository file read from somewhere other than the disk
#: (the index, a commit), or None when there is none.
RepositoryText = tuple[str, str] | None


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/spillguard/config.toml``, by default under ``~/.config``."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~"), ".config"))
    return Path(base).expanduser() / "spillguard" / "config.toml"


def global_layers(config_path: str | None, environ: Mapping[str, str]) -> list[Layer]:
    """The administrator's file given with --config, else the user's own file if present."""
    if config_path is not None:
        # Absolute, as every other layer's source is shown (rules, config check).
        return [load_layer_file(Path(config_path).absolute(), role="global")]
    user = user_config_path(environ)
    return [load_layer_file(user, role="global")] if user.is_file() else []


def _repository_layer(root: str | None, repository_text: RepositoryText | bool) -> list[Layer]:
    found = _repository_file(root, REPOSITORY_FILE, repository_text)
    if found is None:
        return []
    text, source = found
    return [load_layer_text(text, source=source, role="repository")]


def _reviewed_entries(
    root: str | None, reviewed_text: RepositoryText | bool
) -> tuple[ReviewedEntry, ...]:
    found = _repository_file(root, REVIEWED_FILE, reviewed_text)
    if found is None:
        return ()
    text, source = found
    return entries(parse_reviewed(text, source))


def _repository_file(
    root: str | None, name: str, given: RepositoryText | bool
) -> tuple[str, str] | None:
    """(text, source) of a repository file: ``given`` text, or ``root/name`` when True."""
    if isinstance(given, tuple):
        return given
    if given is not True or root is None:
        return None
    path = Path(root, name)
    if not path.is_file():
        return None
    return read_text_file(path), str(path)


def load_config(  # noqa: PLR0913 - keyword-only options of one call
    *,
    root: str | None,
    config_path: str | None = None,
    include_allowlisted: bool = False,
    environ: Mapping[str, str] | None = None,
    repository_text: RepositoryText | bool = True,
    reviewed_text: RepositoryText | bool = True,
    offline: bool = False,
) -> Config:
    """The configuration of a local scan or client hook.

    ``repository_text`` and ``reviewed_text`` (``.spillguard.toml`` and
    ``.spillguard-reviewed.toml``): True reads the file under ``root`` from disk;
    a ``(text, source)`` pair uses that text instead (the staged version, for
    pre-commit); None or False means no such file. ``offline`` ignores the rules
    and reviewed lines synced from the server.
    """
    env = os.environ if environ is None else environ
    own = global_layers(config_path, env)
    repository = _repository_layer(root, repository_text)
    synced = SyncedConfig() if offline else _synced(root or ".", env, [*own, *repository])
    reviewed = _reviewed_entries(root, reviewed_text)
    try:
        config = resolve(
            builtin_rules(),
            [*own, *synced.layers, *repository],
            reviewed=(*synced.reviewed, *reviewed),
            include_allowlisted=include_allowlisted,
        )
    except ConfigError as error:
        if not synced.layers:
            raise
        # The cache clashes with the local files: a broken cache never breaks a scan.
        config = resolve(
            builtin_rules(),
            [*own, *repository],
            reviewed=reviewed,
            include_allowlisted=include_allowlisted,
        )
        return _with_notices(config, (f"warning: ignoring the sync cache: {error}",))
    return _with_notices(config, synced.notices)


def _with_notices(config: Config, notices: tuple[str, ...]) -> Config:
    if not notices:
        return config
    return dataclasses.replace(config, notices=(*notices, *config.notices))


def _synced(root: str, environ: Mapping[str, str], layers: list[Layer]) -> SyncedConfig:
    """The sync cache of the repository at ``root``, read as the local files ask."""
    sync: dict[str, Any] = {}
    for layer in layers:
        sync.update(layer.data.get("sync", {}))
    names = frozenset(rule.name for rule in builtin_rules())
    custom = frozenset(name for layer in layers for name in layer.data.get("custom_rules", {}))
    return load_synced(
        root,
        environ,
        builtin_names=names,
        max_age_hours=float(sync.get("max_age", DEFAULT_MAX_AGE_HOURS)),
        keep_local=bool(sync.get("keep_local_rules", False)),
        local_rule_names=custom,
    )


#: A per-repository file larger than this is no configuration file.
MAX_REPOSITORY_FILE = 1024 * 1024


def default_branch_file(repo: pygit2.Repository, name: str) -> RepositoryText:
    """A repository file on the default branch before a push, never a pushed one.

    In pre-receive no ref has moved yet, so HEAD's branch is still at its old tip.
    """
    from spillguard import git

    data = git.file_at_head(repo, name, MAX_REPOSITORY_FILE)
    return decoded(data, f"{name} on {repo.references['HEAD'].target}")


def default_branch_file_cli(repo_dir: str, name: str) -> RepositoryText:
    """``default_branch_file`` by git alone (SHA-256 repositories: libgit2 cannot open them)."""
    from spillguard.sources.staged_cli import run_git

    where = f"--git-dir={repo_dir}"
    listed = run_git(where, "ls-tree", "HEAD", "--", name)  # None while HEAD is unborn
    fields = (listed or b"").split(b"\t")[0].split()
    if len(fields) != 3 or fields[0] not in {b"100644", b"100755"}:  # mode, type, id
        return None
    size = run_git(where, "cat-file", "-s", fields[2].decode())
    if size is None or int(size) > MAX_REPOSITORY_FILE:
        return None
    branch = (run_git(where, "symbolic-ref", "-q", "HEAD") or b"HEAD").decode().strip()
    return decoded(run_git(where, "cat-file", "blob", fields[2].decode()), f"{name} on {branch}")


def decoded(data: bytes | None, source: str) -> RepositoryText:
    """A file read from git as (text, source); None stays None, non-UTF-8 is an error."""
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig"), source
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None


def admin_config_path(repo_dir: str, config_path: str | None) -> Path | None:
    """The administrator's file: ``--config``, else ``spillguard.toml`` in the bare repository."""
    if config_path:
        return Path(config_path)
    path = Path(repo_dir, SERVER_FILE)
    return path if path.is_file() else None


def _no_file() -> RepositoryText:
    return None


def load_server_config(
    *,
    repo_dir: str,
    config_path: str | None,
    read_repository_file: Callable[[], RepositoryText],
    read_reviewed_file: Callable[[], RepositoryText] = _no_file,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """The configuration of a pre-receive hook in a bare repository.

    The administrator's file decides whether a per-repository file is honoured
    (``repository_config``); only then are ``read_repository_file`` and
    ``read_reviewed_file`` called, and they must read the files from the default
    branch as it was before the push, never from the pushed commits. The
    repository file sets only rules there (``SERVER_REPOSITORY_KEYS``), and never
    the locked ones; a repository file that does not load is ignored, with a notice.
    """
    env = os.environ if environ is None else environ
    admin_path = admin_config_path(repo_dir, config_path)
    admin = [] if admin_path is None else [load_layer_file(admin_path, role="global")]
    synced = _synced(repo_dir, env, admin)
    policy = resolve(builtin_rules(), admin)
    repository: list[Layer] = []
    reviewed = synced.reviewed
    notices = list(synced.notices)
    if policy.repository_config:
        try:
            repository = _repository_layer(None, read_repository_file())
            reviewed = (*reviewed, *_reviewed_entries(None, read_reviewed_file()))
        except ConfigError as error:
            # Rejecting would also reject the push that fixes the file: it is judged by
            # the file as it was before the push. The administrator's rules still apply.
            repository = []
            notices.append(f"repository configuration ignored: {error}")
        repository = _server_trusted(repository, notices)
    try:
        config = resolve(builtin_rules(), [*admin, *synced.layers, *repository], reviewed=reviewed)
    except ConfigError as error:
        if not repository:
            raise
        notices.append(f"repository configuration ignored: {error}")
        config = resolve(builtin_rules(), [*admin, *synced.layers], reviewed=synced.reviewed)
    return _with_notices(config, tuple(notices))


#: What a repository file may set on a server: its rules, as the server app's
#: per-repository file. Policy (mode, bypass, budgets, trust) is the administrator's.
SERVER_REPOSITORY_KEYS = frozenset(
    {
        "inherit_builtin_rules",
        "inherit_custom_rules",
        "rules",
        "disabled_rules",
        "allowlist_paths",
        "custom_rules",
    }
)


def _server_trusted(layers: list[Layer], notices: list[str]) -> list[Layer]:
    trusted: list[Layer] = []
    for layer in layers:
        ignored = sorted(set(layer.data) - SERVER_REPOSITORY_KEYS)
        notices.extend(
            f"{layer.source}: {key} is the administrator's setting; ignored" for key in ignored
        )
        data = {key: value for key, value in layer.data.items() if key in SERVER_REPOSITORY_KEYS}
        trusted.append(dataclasses.replace(layer, data=data))
    return trusted
