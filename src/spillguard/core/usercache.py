"""The user's cache folder for spillguard, where the XDG base directories put it."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping


def user_cache(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/spillguard``, by default ``~/.cache/spillguard``."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~"), ".cache"))
    return Path(base).expanduser() / "spillguard"
