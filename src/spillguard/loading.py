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
from typing import TYPE_CHECKING

from spillguard.config import (
    REPOSITORY_FILE,
    Config,
    Layer,
    load_layer_file,
    load_layer_text,
    resolve,
)
from spillguard.errors import ConfigError
from spillguard.rules import builtin_rules
from spillguard.sync_cache import DEFAULT_MAX_AGE_HOURS, SyncedConfig, load_synced

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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
        return [load_layer_file(Path(config_path), role="global")]
    user = user_config_path(environ)
    return [load_layer_file(user, role="global")] if user.is_file() else []


def _repository_layer(root: str | None, repository_text: RepositoryText | bool) -> list[Layer]:
    if repository_text is False:
        return []
    if isinstance(repository_text, tuple):
        text, source = repository_text
        return [load_layer_text(text, source=source, role="repository")]
    if repository_text is None or root is None:
        return []
    path = Path(root, REPOSITORY_FILE)
    return [load_layer_file(path, role="repository")] if path.is_file() else []


def load_config(  # noqa: PLR0913 - keyword-only options of one call
    *,
    root: str | None,
    config_path: str | None = None,
    include_allowlisted: bool = False,
    environ: Mapping[str, str] | None = None,
    repository_text: RepositoryText | bool = True,
    offline: bool = False,
) -> Config:
    """The configuration of a local scan or client hook.

    ``repository_text``: True reads ``root/.spillguard.toml`` from disk; a
    ``(text, source)`` pair uses that text instead (the staged version, for
    pre-commit); None or False means no per-repository file. ``offline``
    ignores the rules and reviewed lines synced from the server.
    """
    env = os.environ if environ is None else environ
    own = global_layers(config_path, env)
    repository = _repository_layer(root, repository_text)
    synced = SyncedConfig() if offline else _synced(root, env, [*own, *repository])
    config = resolve(
        builtin_rules(),
        [*own, *synced.layers, *repository],
        reviewed=synced.reviewed,
        include_allowlisted=include_allowlisted,
    )
    if not synced.notices:
        return config
    return dataclasses.replace(config, notices=(*synced.notices, *config.notices))


def _synced(root: str | None, environ: Mapping[str, str], layers: list[Layer]) -> SyncedConfig:
    """The sync cache of the repository at ``root`` (or the current directory)."""
    max_age = DEFAULT_MAX_AGE_HOURS
    for layer in layers:
        max_age = float(layer.data.get("sync", {}).get("max_age", max_age))
    names = frozenset(rule.name for rule in builtin_rules())
    return load_synced(root or ".", environ, builtin_names=names, max_age_hours=max_age)


def load_server_config(
    *,
    repo_dir: str,
    config_path: str | None,
    read_repository_file: Callable[[], RepositoryText],
) -> Config:
    """The configuration of a pre-receive hook in a bare repository.

    The administrator's file decides whether a per-repository file is honoured
    (``repository_config``); only then is ``read_repository_file`` called, and it
    must read the file from the default branch as it was before the push, never
    from the pushed commits.
    """
    admin_path = Path(config_path) if config_path else Path(repo_dir, SERVER_FILE)
    admin = (
        [load_layer_file(admin_path, role="global")] if config_path or admin_path.is_file() else []
    )
    policy = resolve(builtin_rules(), admin)
    if not policy.repository_config:
        return policy
    try:
        repository = _repository_layer(None, read_repository_file())
    except ConfigError as error:
        # Rejecting would also reject the push that fixes the file: it is judged by
        # the file as it was before the push. The administrator's rules still apply.
        notice = f"repository configuration ignored: {error}"
        return dataclasses.replace(policy, notices=(*policy.notices, notice))
    trusted, notices = _server_trusted(repository)
    config = resolve(builtin_rules(), admin + trusted)
    return dataclasses.replace(config, notices=(*notices, *config.notices))


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


def _server_trusted(layers: list[Layer]) -> tuple[list[Layer], list[str]]:
    trusted: list[Layer] = []
    notices: list[str] = []
    for layer in layers:
        ignored = sorted(set(layer.data) - SERVER_REPOSITORY_KEYS)
        notices.extend(
            f"{layer.source}: {key} is the administrator's setting; ignored" for key in ignored
        )
        data = {key: value for key, value in layer.data.items() if key in SERVER_REPOSITORY_KEYS}
        trusted.append(dataclasses.replace(layer, data=data))
    return trusted, notices
