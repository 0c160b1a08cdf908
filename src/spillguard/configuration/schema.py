"""The configuration keys, their types and defaults: one table every loader checks against."""

from __future__ import annotations

import math

from spillguard.core.errors import ConfigError
from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from typing import Any


class Key(Frozen):
    """One configuration key: its type, how to name it in an error, its default (a
    row of the tables below, as ``Key(str, "a string", "")`` reads)."""

    __slots__ = ("choices", "default", "expected", "item", "kind", "maximum", "minimum")

    kind: type | tuple[type, ...]
    expected: str
    default: Any
    choices: tuple[str, ...]
    item: type | None
    #: The smallest number allowed (sizes, budgets and caps cannot be negative).
    minimum: float | None
    maximum: float | None

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        kind: type | tuple[type, ...],
        expected: str,
        default: Any = None,
        choices: tuple[str, ...] = (),
        *,
        item: type | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        fill(self, locals())


_STR_LIST = Key(list, "a list of strings", (), item=str)

#: Keys of a configuration file's top level (repository, user or administrator file).
TOP_LEVEL: dict[str, Key] = {
    "inherit_builtin_rules": Key(bool, "true or false", True),
    "inherit_custom_rules": Key(bool, "true or false", True),
    "rules": _STR_LIST,
    "disabled_rules": _STR_LIST,
    "allowlist_paths": _STR_LIST,
    "custom_rules": Key(dict, "a table of NAME = 'regexp' or NAME = { regexp = ... }", {}),
    "hook": Key(dict, "a table", {}),
    "generic_password": Key(dict, "a table", {}),
    "sync": Key(dict, "a table", {}),
    "max_rule_timeout": Key(
        (int, float), "a number of seconds up to 3600 (0 selects 20)", 0, minimum=0, maximum=3600
    ),
    "max_file_size": Key(int, "a positive number of bytes", 10 * 1024 * 1024, minimum=1),
    "include_plaintext_in_exports": Key(bool, "true or false", False),
    "deduplicate_exports": Key(bool, "true or false", True),
    "require_review_reason": Key(bool, "true or false", False),
    # Where clients read the repository's files (config_source); your own file only.
    "config_from": Key(
        str,
        '"auto", "default-branch" or "work-tree"',
        "auto",
        ("auto", "default-branch", "work-tree"),
    ),
    # Administrator policy; read from the administrator's file only.
    "repository_config": Key(bool, "true or false", False),
    "locked_rules": _STR_LIST,
    "allow_pragma": Key(bool, "true or false", True),
    "contact": Key(str, "a string: who pushers ask (an address, a channel)", ""),
    "bypass_token": Key(
        (str, list),
        "a string or a list of strings ('' or [] disables the bypass)",
        ["skip-secret-scan", "skip-soteri-security-check"],
        item=str,
    ),
    "advertise_bypass_token": Key(bool, "true or false", False),
    "bypass_push_option": Key(str, "a push option ('' disables it)", ""),
    "time_budget": Key((int, float), "a number of seconds", 60, minimum=0),
    "max_commits": Key(int, "a positive whole number", 10000, minimum=1),
    "on_error": Key(str, '"reject" or "accept"', "reject", ("reject", "accept")),
    # Unset: a push is rejected, a local hook or scan only names what it could not read.
    "on_unscannable": Key(str, '"reject" or "accept"', None, ("reject", "accept")),
    # Objects a push carries that no pushed ref reaches: a rejection, or judged whole.
    "on_unreachable": Key(str, '"reject" or "judge"', "reject", ("reject", "judge")),
}

#: Administrator policy: a repository file that sets one of these is an error, so a
#: repository can never loosen the policy that judges its own pushes.
ADMIN_ONLY = frozenset(
    {
        "repository_config",
        "locked_rules",
        "allow_pragma",
        "contact",
        "bypass_token",
        "advertise_bypass_token",
        "bypass_push_option",
        "time_budget",
        "max_commits",
        "on_error",
        "on_unscannable",
        "on_unreachable",
    }
)


HOOK: dict[str, Key] = {
    "mode": Key(str, '"block" or "warn"', "block", ("block", "warn")),
}

GENERIC_PASSWORD: dict[str, Key] = {
    "env_references": Key(bool, "true or false", True),
    "placeholders": Key(bool, "true or false", True),
    "min_length": Key(int, "a whole number, 0 or more", 4, minimum=0),
}

CUSTOM_RULE: dict[str, Key] = {
    "regexp": Key(str, "a regular expression string"),
    "enabled": Key(bool, "true or false", True),
    "blocking": Key(bool, "true or false", True),
    "description": Key(str, "a string", ""),
    "keywords": _STR_LIST,
}

SYNC: dict[str, Key] = {
    "server": Key(str, "a URL"),
    "project": Key(str, "a project key"),
    "repo": Key(str, "a repository slug"),
    "space": Key(str, "a space key"),
    "variant": Key(
        str,
        '"code-hosting", "wiki", "issue-tracker" or "hosted"',
        None,
        ("code-hosting", "wiki", "issue-tracker", "hosted"),
    ),
    "xsrf_header": Key(str, "an HTTP header name", "X-Host-Token"),
    "ca_bundle": Key(str, "a path to a PEM file"),
    "timeout": Key((int, float), "a number of seconds", 10),
    "max_age": Key((int, float), "a number of hours", 24),
    # After a sync the rule set is the server's; true keeps the local built-in rules
    # the server does not list as enabled.
    "keep_local_rules": Key(bool, "true or false", False),
}


#: Keys only your own file may set: a repository must not choose what judges its commits.
USER_ONLY = frozenset({"config_from"})

#: Keys that raise what a scan costs or lower what it protects: honoured from your own
#: or the administrator's file only. In a repository's file they are ignored, with a
#: notice, so a cloned repository can neither hold a scan for an hour a line
#: (``max_rule_timeout``), leave its binaries unread or read gigabytes of them
#: (``max_file_size``), nor make ``scan --format csv`` print every secret in clear.
PROTECTION = frozenset({"max_rule_timeout", "max_file_size", "include_plaintext_in_exports"})

#: [sync] keys a repository file may not set: a cloned repository must not be able
#: to send the developer's server credentials to a server of its choosing.
SYNC_USER_ONLY = frozenset({"server", "ca_bundle"})


def _table_of(name: str, keys: dict[str, Key]) -> str | None:
    """The table a top-level key that is not one belongs in (``mode``: ``hook``)."""
    if keys is not TOP_LEVEL:
        return None
    tables = {"hook": HOOK, "generic_password": GENERIC_PASSWORD, "sync": SYNC}
    return next((table for table, entries in tables.items() if name in entries), None)


def misplaced(name: str, table: str) -> str | None:
    """Why a top-level key was read inside ``table``: TOML puts every key written after
    a ``[table]`` line in that table."""
    if name not in TOP_LEVEL:
        return None
    return (
        f"{name} is a top-level key, but it is written after [{table}], so TOML reads it "
        f"as part of that table: move it above the [{table}] line"
    )


def check_table(
    table: dict[str, Any], keys: dict[str, Key], where: str, *, name: str | None = None
) -> dict[str, Any]:
    """``table`` (the table ``name``, if not the top level) checked against ``keys``:
    unknown keys and wrong types are ConfigErrors."""
    for key_name, value in table.items():
        key = keys.get(key_name)
        if key is None:
            import difflib  # only on an error: hooks load configuration on every commit

            close = difflib.get_close_matches(key_name, keys, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            belongs = _table_of(key_name, keys)
            if belongs is not None:
                hint = f" (it belongs in a table: [{belongs}] {key_name} = ...)"
            if name is not None and (reason := misplaced(key_name, name)) is not None:
                hint = f": {reason}"
            raise ConfigError(f"{where}: unknown key {key_name!r}{hint}")
        check_value(value, key, f"{where}: {key_name}")
    return table


def check_value(value: Any, key: Key, where: str) -> None:
    # bool is an int in Python; a number key must not accept true/false.
    wrong_bool = isinstance(value, bool) and bool not in _as_tuple(key.kind)
    if wrong_bool or not isinstance(value, key.kind):
        raise ConfigError(f"{where} must be {key.expected}, not {type(value).__name__}")
    if key.choices and value not in key.choices:
        raise ConfigError(f"{where} must be {key.expected}, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):  # TOML allows inf and nan
        raise ConfigError(f"{where} must be {key.expected}, not {value!r}")
    given: Any = value  # of key.kind by now, which mypy cannot tell from a runtime type
    if key.minimum is not None and given < key.minimum:
        raise ConfigError(f"{where} must be {key.expected}, not {value!r}")
    if key.maximum is not None and given > key.maximum:
        raise ConfigError(f"{where} must be {key.expected}, not {value!r}")
    if key.item is not None:
        for item in given:
            if not isinstance(item, key.item):
                raise ConfigError(f"{where} must be {key.expected}")


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
