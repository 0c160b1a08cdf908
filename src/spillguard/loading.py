"""Find the configuration files that apply to a scan and resolve them into one Config."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.config import REPOSITORY_FILE, Config, Layer, load_layer_file, resolve
from spillguard.rules import builtin_rules

if TYPE_CHECKING:
    from collections.abc import Mapping


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


def load_config(
    *,
    root: str | None,
    config_path: str | None = None,
    include_allowlisted: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Built-in rules, the global file, then ``root/.spillguard.toml`` when ``root`` is given."""
    env = os.environ if environ is None else environ
    layers = global_layers(config_path, env)
    if root is not None:
        repository_file = Path(root, REPOSITORY_FILE)
        if repository_file.is_file():
            layers.append(load_layer_file(repository_file, role="repository"))
    return resolve(builtin_rules(), layers, include_allowlisted=include_allowlisted)
