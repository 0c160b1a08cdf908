"""A sync cache as ``spillguard sync`` writes it, for tests of what a synced repository does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.configuration.sync_cache import cache_path, write_cache

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def write_sync_cache(root: Path, environ: Mapping[str, str], **data: object) -> None:
    """The cache of the repository at ``root``: no rules, no reviewed lines, unless given."""
    base = {
        "server": "https://scm.example.com",
        "variant": "code-hosting",
        "scope": {"project": "PRJ", "repo": "app"},
        "synced_at": "2999-01-01T00:00:00+00:00",
        "salt": "5a17",
        "rules": [],
        "reviewed": [],
    }
    write_cache(cache_path(root, environ), {**base, **data})
