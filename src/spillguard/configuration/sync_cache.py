"""The local cache of what ``spillguard sync`` fetched, and how scans read it.

The cache lives outside the work tree: ``<common git dir>/spillguard/sync-cache.json``
inside a repository (shared by its worktrees, never committed), else
``$XDG_CACHE_HOME/spillguard/sync-cache.json`` (by default under ``~/.cache``).
It is written atomically, so a failed or interrupted sync leaves the previous one.

The format (JSON, ``version`` 1) is documented here and only here::

    {"version": 1,
     "server": "https://scm.example.com",          # no credentials, ever
     "variant": "code-hosting",                    # or wiki, issue-tracker, hosted
     "scope": {"project": "PRJ", "repo": "app"},   # what was synced
     "synced_at": "2026-11-23T11:00:00+00:00",     # UTC, ISO 8601
     "release_line": {"blocking": true, "review_rule_name": true},
                                                   # what the server's answers showed;
                                                   # null where they did not say
     "salt": "32 hex digits",                      # salt of every reviewed digest
     "rules": [{"name": "AWS_SECRET_ACCESS_KEY", "kind": "builtin", "enabled": true},
                                                   # every server built-in rule, by the
                                                   # server's name (sync.fidelity maps
                                                   # it to local rules)
               {"name": "INTERNAL_TOKEN", "kind": "custom", "enabled": true,
                "blocking": null, "regexp": "itk_[A-Za-z0-9]{32}",
                "server_name": "Internal token"}],
                                                   # blocking null: the server's
                                                   # release line has no such field,
                                                   # and its custom rules block;
                                                   # server_name: the server's own
                                                   # name, sent back as ruleName
                                                   # (on a built-in rule only when
                                                   # the server spells it otherwise)
     "refused": [{"name": "TOO_BROAD", "enabled": true, "reason": "regexp is too broad"}],
                                                   # server custom rules local
                                                   # validation refused (named by
                                                   # every run, never applied)
     "repository_rules": ["..."],                  # rule names the server applies to the
                                                   # repository, or null
     "generic_password": {"min_length": 6},        # keys of [generic_password]
     "reviewed_exports": ["repository", "project"],  # the exports read: the scope's,
                                                   # then the wider ones the
                                                   # credentials could read
     "reviewed": [{"digest": "64 hex digits", "rule": "GENERIC_PASSWORD"}]}
                                                   # salted SHA-256 of matchText;
                                                   # rule null when the server gave none

Scans read the cache as the ``server`` configuration layer (between the user's
or administrator's file and the repository's file) plus reviewed entries. A
cache that cannot be used is ignored with a notice: a broken cache never breaks
a commit.
"""

from __future__ import annotations

from pathlib import Path

from spillguard.configuration.config import Layer, layer_from_table
from spillguard.core.errors import ConfigError
from spillguard.core.models import ReviewedEntry
from spillguard.core.usercache import user_cache
from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping
    from typing import Any

CACHE_VERSION = 1
CACHE_NAME = "sync-cache.json"
#: ``source`` of every rule and reviewed entry the cache supplies.
SERVER_SOURCE = "server"
DEFAULT_MAX_AGE_HOURS = 24.0


class SyncedConfig(Frozen):
    """What a scan takes from the cache: a configuration layer and reviewed entries."""

    __slots__ = ("layers", "notices", "reviewed")

    layers: tuple[Layer, ...]
    reviewed: tuple[ReviewedEntry, ...]
    notices: tuple[str, ...]

    def __init__(
        self,
        layers: tuple[Layer, ...] = (),
        reviewed: tuple[ReviewedEntry, ...] = (),
        notices: tuple[str, ...] = (),
    ) -> None:
        fill(self, locals())


def _read_pointer(path: Path, prefix: str = "") -> Path:
    """A path stored in a ``.git`` file or a ``commondir`` file, relative to its folder."""
    text = path.read_text(encoding="utf-8").strip()
    return (path.parent / text.removeprefix(prefix).strip()).resolve()


def _git_dir(start: Path, environ: Mapping[str, str]) -> Path | None:
    if environ.get("GIT_DIR"):
        return Path(environ["GIT_DIR"]).resolve()
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            return _read_pointer(dot_git, "gitdir:")
        if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
            return folder  # a bare repository
    return None


def common_git_dir(start: str | Path, environ: Mapping[str, str]) -> Path | None:
    """The common git directory of the repository at or above ``start``, or None."""
    if environ.get("GIT_COMMON_DIR"):
        return Path(environ["GIT_COMMON_DIR"]).resolve()
    try:
        git_dir = _git_dir(Path(start).resolve(), environ)
        if git_dir is not None and (git_dir / "commondir").is_file():
            return _read_pointer(git_dir / "commondir")
    except OSError:
        return None
    return git_dir


def cache_path(start: str | Path, environ: Mapping[str, str]) -> Path:
    """Where the cache of the repository at ``start`` (or of the user) lives."""
    common = common_git_dir(start, environ)
    if common is not None:
        return common / "spillguard" / CACHE_NAME
    return user_cache(environ) / CACHE_NAME


def git_dir_cache_path(git_dir: str, environ: Mapping[str, str]) -> str:
    """``cache_path`` of a repository named by its own git directory (one with no
    ``commondir``), without resolving links on the way: the same file, for a caller
    that asks for thousands of repositories."""
    if environ.get("GIT_COMMON_DIR") or environ.get("GIT_DIR"):
        return str(cache_path(git_dir, environ))
    return f"{git_dir}/spillguard/{CACHE_NAME}"


def write_cache(path: Path, data: Mapping[str, Any]) -> None:
    """Write the cache atomically, in a folder private to the user."""
    import json

    from spillguard.core.atomic import write_text_atomic

    text = json.dumps({"version": CACHE_VERSION, **data}, indent=1, sort_keys=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_text_atomic(path, text)


def read_cache_data(path: Path) -> dict[str, Any]:
    """The cache's JSON object; ConfigError when it is missing, unreadable or foreign."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no sync cache; run spillguard sync") from None
    except (OSError, UnicodeDecodeError, ValueError):
        raise ConfigError(f"{path}: the sync cache is unreadable; run spillguard sync") from None
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        raise ConfigError(f"{path}: unknown sync cache format; run spillguard sync")
    return data


def synced_at(data: Mapping[str, Any]) -> dt.datetime | None:
    import datetime as dt  # here: a commit hook without a synced cache never needs it

    try:
        return dt.datetime.fromisoformat(str(data.get("synced_at")))
    except ValueError:
        return None


def age_notice(
    data: Mapping[str, Any], max_age_hours: float, now: dt.datetime | None = None
) -> str | None:
    """A warning when the cache is older than ``max_age_hours`` (0 never warns)."""
    import datetime as dt

    when = synced_at(data)
    now = now or dt.datetime.now(dt.timezone.utc)
    if not max_age_hours or when is None:
        return None
    hours = (now - when).total_seconds() / 3600
    if hours <= max_age_hours:
        return None
    return (
        f"warning: the rules synced from {data.get('server')} are {hours:.0f} hours old "
        f"(more than {max_age_hours:g}); run spillguard sync"
    )


def reviewed_entries(data: Mapping[str, Any]) -> tuple[ReviewedEntry, ...]:
    salt = str(data.get("salt", ""))
    return tuple(
        ReviewedEntry(
            digest=str(item["digest"]), rule=item.get("rule"), source=SERVER_SOURCE, salt=salt
        )
        for item in data.get("reviewed", ())
    )


def load_synced(  # noqa: PLR0913 - keyword-only options of one call
    start: str | Path,
    environ: Mapping[str, str],
    *,
    builtin_names: frozenset[str],
    max_age_hours: float = DEFAULT_MAX_AGE_HOURS,
    keep_local: bool = False,
    local_rule_names: frozenset[str] = frozenset(),
) -> SyncedConfig:
    """The synced layer and reviewed entries for a scan; never raises for a bad cache.

    ``local_rule_names`` are the custom rules of the local files: a reviewed line
    under one of those names is bound to that rule.
    """
    path = cache_path(start, environ)
    if not path.is_file():
        return SyncedConfig()
    # Here: most commits are made where no sync has run.
    from spillguard.configuration.fidelity import (
        bind_reviewed,
        repository_notice,
        server_table,
        unreproduced_notice,
    )

    try:
        data = read_cache_data(path)
        table = server_table(data, builtin_names, keep_local=keep_local)
        layer = layer_from_table(table, source=SERVER_SOURCE, role="server")
        known = builtin_names | local_rule_names | set(table["custom_rules"])
        reviewed, unknown = bind_reviewed(reviewed_entries(data), known, builtin_names)
        missing = unreproduced_notice(data, builtin_names)
        undefined = repository_notice(data, known, builtin_names)
    except (ConfigError, KeyError, TypeError, AttributeError) as error:
        reason = error if isinstance(error, ConfigError) else f"{path}: malformed sync cache"
        return SyncedConfig(notices=(f"warning: ignoring the sync cache: {reason}",))
    notices = (age_notice(data, max_age_hours), missing, undefined, unknown)
    return SyncedConfig(
        layers=(layer,),
        reviewed=reviewed,
        notices=tuple(notice for notice in notices if notice),
    )
