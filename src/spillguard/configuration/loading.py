"""Find the configuration files that apply to a scan and resolve them into one Config.

Layers, lowest first: built-in rules; the global file (``--config``, else the
user's ``$XDG_CONFIG_HOME/spillguard/config.toml``; on a server the administrator's
``spillguard.toml`` in the bare repository); the synced server cache
(``sync_cache``, skipped with ``--offline``); the
per-repository ``.spillguard.toml``; command-line flags.
"""

from __future__ import annotations

import os
from pathlib import Path

from spillguard.configuration.config import (
    REPOSITORY_FILE,
    SERVER_REPOSITORY_FILE,
    Config,
    Layer,
    load_layer_file,
    load_layer_text,
    read_text_file,
)
from spillguard.configuration.files import MAX_REPOSITORY_FILE, FileReader, RepositoryText, decoded
from spillguard.configuration.resolution import resolve
from spillguard.configuration.reviewed import REVIEWED_FILE, entries, parse_reviewed
from spillguard.configuration.rules import builtin_rules
from spillguard.configuration.sync_cache import (
    DEFAULT_MAX_AGE_HOURS,
    SyncedConfig,
    cache_path,
    common_git_dir,
    load_synced,
)
from spillguard.core.errors import ConfigError
from spillguard.core.values import replace

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    import pygit2

    from spillguard.core.models import ReviewedEntry

#: The administrator's file inside a bare repository on a server.
SERVER_FILE = "spillguard.toml"
#: The administrator's reviewed entries, beside it: ``spillguard review add --repo
#: BARE.git`` writes them; a push never can (git writes only objects and refs there).
SERVER_REVIEWED_FILE = "spillguard-reviewed.toml"


def is_bare_directory(path: str | Path) -> bool:
    """Whether ``path`` is a bare repository's directory (a server's repository)."""
    return Path(path, "HEAD").is_file() and Path(path, "objects").is_dir()


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


def disk_reader(root: str | None) -> FileReader:
    """The files in the work tree at ``root`` (none when there is no root)."""

    def read(name: str) -> RepositoryText:
        path = None if root is None else Path(root, name)
        if path is None or not path.exists():
            return None
        if not path.is_file():  # a directory or a device: never silently no configuration
            raise ConfigError(f"{path}: not a regular file")
        return read_text_file(path), str(path)

    return read


def repository_layers(read: FileReader) -> tuple[list[Layer], tuple[str, ...]]:
    """The repository's own configuration: ``.spillguard.toml``, else the server app's
    ``soteri-security.yml``; when both exist the TOML file wins, with a warning."""
    found = read(REPOSITORY_FILE)
    if found is not None:
        text, source = found
        layer = load_layer_text(text, source=source, role="repository")
        # Looked for only now: a hook in a repository with just the TOML file reads no YAML.
        shadowed = read(SERVER_REPOSITORY_FILE)
        if shadowed is None:
            return [layer], ()
        warning = (
            f"warning: {shadowed[1]} is ignored: {source} is read instead (the server app "
            f"reads only {SERVER_REPOSITORY_FILE}; keep one file)"
        )
        return [layer], (warning,)
    found = read(SERVER_REPOSITORY_FILE)
    if found is None:
        return [], ()
    from spillguard.configuration.server_yaml import load_server_yaml

    text, source = found
    return [load_server_yaml(text, source=source)], ()


def no_files(_name: str) -> RepositoryText:
    """A reader for a repository whose files must not be read (nor trusted)."""
    return None


def _reviewed_entries(read: FileReader) -> tuple[ReviewedEntry, ...]:
    found = read(REVIEWED_FILE)
    if found is None:
        return ()
    text, source = found
    return entries(parse_reviewed(text, source))


def load_config(  # noqa: PLR0913 - keyword-only options of one call
    *,
    root: str | None,
    config_path: str | None = None,
    include_allowlisted: bool = False,
    environ: Mapping[str, str] | None = None,
    read_file: FileReader | None = None,
    reviewed: bool = True,
    offline: bool = False,
    config_from: str | None = None,
    pushing_to: str | None = None,
) -> Config:
    """The configuration of a local scan or client hook.

    ``read_file`` reads the repository's local files (``.spillguard.toml`` or
    ``soteri-security.yml``, and ``.spillguard-reviewed.toml``); by default from
    the work tree at ``root``; pre-commit passes the staged versions. Where they
    are read from is ``config_source``'s choice: ``config_from`` (the command
    line's, else your own file's ``config_from``), and ``pushing_to``, the remote a
    pre-push hook pushes to (the server's way by default). ``reviewed`` False leaves
    the reviewed file out. ``offline`` ignores the rules and reviewed lines synced
    from the server.
    """
    env = os.environ if environ is None else environ
    own = global_layers(config_path, env)
    local = disk_reader(root) if read_file is None else read_file
    read, where = _repository_reader(
        local,
        repo_dir=root or ".",
        config_from=config_from
        or _config_from_environment(env)
        or _own_setting(own, "config_from", "auto"),
        pushing_to=pushing_to,
        synced=not offline and _synced_repository(root or ".", env),
    )
    repository, warnings = repository_layers(read)
    warnings = (*where, *warnings)
    synced = SyncedConfig() if offline else _synced(root or ".", env, [*own, *repository])
    reviewed_entries = _reviewed_entries(read) if reviewed else ()
    try:
        config = resolve(
            builtin_rules(),
            [*own, *synced.layers, *repository],
            reviewed=(*synced.reviewed, *reviewed_entries),
            include_allowlisted=include_allowlisted,
        )
    except ConfigError as error:
        if not synced.layers:
            raise
        # The cache clashes with the local files: a broken cache never breaks a scan.
        config = resolve(
            builtin_rules(),
            [*own, *repository],
            reviewed=reviewed_entries,
            include_allowlisted=include_allowlisted,
        )
        return _with_notices(config, (*warnings, f"warning: ignoring the sync cache: {error}"))
    return _with_notices(config, (*warnings, *synced.notices))


def _synced_repository(root: str, environ: Mapping[str, str]) -> bool:
    """Whether ``spillguard sync`` has run for the repository at ``root``."""
    return common_git_dir(root, environ) is not None and cache_path(root, environ).is_file()


def _config_from_environment(environ: Mapping[str, str]) -> str | None:
    """``SPILLGUARD_CONFIG_FROM``: ``config_from`` for one run, between the command
    line and your own file (a pre-push hook gets no option through ``git push``)."""
    from spillguard.configuration.config_source import CONFIG_FROM_VARIABLE
    from spillguard.configuration.schema import TOP_LEVEL

    value = environ.get(CONFIG_FROM_VARIABLE) or None
    allowed = TOP_LEVEL["config_from"].choices
    if value is not None and value not in allowed:
        expected = ", ".join(allowed)
        raise ConfigError(f"{CONFIG_FROM_VARIABLE}={value}: expected one of {expected}")
    return value


def _own_setting(layers: list[Layer], key: str, default: str) -> str:
    """A setting of your own (or the administrator's) file, read before the others load."""
    value = default
    for layer in layers:
        value = layer.data.get(key, value)
    return value


def _repository_reader(
    local: FileReader, *, repo_dir: str, config_from: str, pushing_to: str | None, synced: bool
) -> tuple[FileReader, tuple[str, ...]]:
    """The reader of the repository's files, and notes on where they come from."""
    if config_from == "work-tree" or (config_from == "auto" and not synced and not pushing_to):
        return local, ()
    from spillguard.configuration.config_source import choose

    choice = choose(local, repo_dir=repo_dir, remote=pushing_to)
    return choice.read, choice.notices


def _with_notices(config: Config, notices: tuple[str, ...]) -> Config:
    if not notices:
        return config
    return replace(config, notices=(*notices, *config.notices))


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


def default_branch_file(repo: pygit2.Repository, name: str) -> RepositoryText:
    """A repository file on the default branch before a push, never a pushed one.

    In pre-receive no ref has moved yet, so HEAD's branch is still at its old tip.
    """
    from spillguard import git

    data = git.file_at_head(repo, name, MAX_REPOSITORY_FILE)
    return decoded(data, f"{name} on {repo.references['HEAD'].target}")


def default_branch_file_cli(repo_dir: str, name: str) -> RepositoryText:
    """``default_branch_file`` by git alone (SHA-256 repositories: libgit2 cannot open them)."""
    from spillguard.sources.gitcli import run_git

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


def admin_config_path(repo_dir: str, config_path: str | None) -> Path | None:
    """The administrator's file: ``--config``, else ``spillguard.toml`` in the bare repository."""
    if config_path:
        return Path(config_path)
    path = Path(repo_dir, SERVER_FILE)
    return path if path.is_file() else None


def load_server_config(
    *,
    repo_dir: str,
    config_path: str | None,
    read_file: FileReader,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """The configuration of a pre-receive hook in a bare repository.

    The administrator's file decides whether a per-repository file is honoured
    (``repository_config``); only then is ``read_file`` called, and it must read the
    files from the default branch as it was before the push, never from the pushed
    commits. The
    repository file sets only rules there (``SERVER_REPOSITORY_KEYS``), and never
    the locked ones; a repository file that does not load is ignored, with a notice.
    """
    env = os.environ if environ is None else environ
    admin_path = admin_config_path(repo_dir, config_path)
    admin = [] if admin_path is None else [load_layer_file(admin_path, role="global")]
    synced = _synced(repo_dir, env, admin)
    policy = resolve(builtin_rules(), admin)
    repository: list[Layer] = []
    # The administrator's own reviewed entries count whatever repository_config says.
    trusted_reviewed = (*synced.reviewed, *_admin_reviewed(repo_dir))
    reviewed = trusted_reviewed
    notices = list(synced.notices)
    if policy.repository_config:
        try:
            repository, warnings = repository_layers(read_file)
            notices.extend(warnings)
            reviewed = (*reviewed, *_reviewed_entries(read_file))
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
        config = resolve(builtin_rules(), [*admin, *synced.layers], reviewed=trusted_reviewed)
    return _with_notices(config, tuple(notices))


def server_config_files(
    repo_dir: str, config_path: str | None, environ: Mapping[str, str]
) -> tuple[str, ...]:
    """The files ``load_server_config`` reads for the repository whose git directory is
    ``repo_dir``, besides ``config_path`` and the default branch's: with the same bytes
    in them (and the same default branch), the same configuration. An audit compares
    them rather than load the configuration of every repository again."""
    from spillguard.configuration.sync_cache import git_dir_cache_path

    admin = () if config_path else (f"{repo_dir}/{SERVER_FILE}",)
    reviewed = f"{repo_dir}/{SERVER_REVIEWED_FILE}"
    return (*admin, reviewed, git_dir_cache_path(repo_dir, environ))


def _admin_reviewed(repo_dir: str) -> tuple[ReviewedEntry, ...]:
    """``spillguard-reviewed.toml`` in the bare repository: the administrator's."""
    path = Path(repo_dir, SERVER_REVIEWED_FILE)
    if not path.is_file():
        return ()
    return entries(parse_reviewed(read_text_file(path), str(path)))


def load_bare_config(repo_dir: str, config_path: str | None) -> Config:
    """What the next push into the bare repository at ``repo_dir`` is judged by, for
    the commands that judge it from outside the hook (scan, review, config check):
    the administrator's files, and the default branch's as the hook reads them."""
    from functools import partial

    return load_server_config(
        repo_dir=repo_dir,
        config_path=config_path,
        read_file=partial(default_branch_file_cli, repo_dir),
    )


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
        trusted.append(replace(layer, data=data))
    return trusted
