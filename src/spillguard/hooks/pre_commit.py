"""Client pre-commit: judge exactly what is staged, with the staged configuration."""

from __future__ import annotations

import itertools

from spillguard.configuration.config import REPOSITORY_FILE, SERVER_REPOSITORY_FILE
from spillguard.configuration.files import decoded
from spillguard.configuration.loading import load_config
from spillguard.configuration.reviewed import REVIEWED_FILE
from spillguard.scanning.run import run_scan

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable

    from spillguard.configuration.config import Config
    from spillguard.configuration.files import FileReader, RepositoryText
    from spillguard.core.models import ScanResult

ADVICE = (
    "spillguard: commit blocked by {count} blocking finding(s) in the staged changes.",
    "  a real secret: remove it, stage the file again (git add) and rotate the secret;",
    "  a false positive: add 'pragma: allowlist-secret' in a comment on that line,",
    "  or exclude the path with allowlist_paths in .spillguard.toml;",
    "  to commit anyway (not recommended): git commit --no-verify",
)


#: The repository's configuration files, read as staged.
CONFIGURATION_FILES = (REPOSITORY_FILE, SERVER_REPOSITORY_FILE, REVIEWED_FILE)


def staged_configuration(text: bytes | None, name: str = REPOSITORY_FILE) -> RepositoryText:
    """A staged configuration file as (text, source): the version being committed."""
    return decoded(text, f"{name} (staged)")


def staged_reader(staged_bytes: Callable[[str], bytes | None]) -> FileReader:
    """The configuration files as the index holds them."""
    return lambda name: staged_configuration(staged_bytes(name), name)


def run_pre_commit(
    *,
    config_path: str | None,
    include_allowlisted: bool,
    offline: bool = False,
    config_from: str | None = None,
) -> tuple[ScanResult, Config]:
    # git's command line alone: it spares the hook libgit2's import (most of its start-up).
    from spillguard.sources.checkout import staged_items
    from spillguard.sources.staged_cli import read_staged

    staged = read_staged(CONFIGURATION_FILES)
    config = load_config(
        root=None,
        config_path=config_path,
        include_allowlisted=include_allowlisted,
        read_file=staged_reader(staged.texts.__getitem__),
        offline=offline,
        config_from=config_from,
    )
    items = itertools.chain(staged.items(max_size=config.max_file_size), staged_items(staged))
    return run_scan(items, config.ruleset, notices=config.notices, scope="staged"), config
