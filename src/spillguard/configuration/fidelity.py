"""The synced rule set is the server's: what the cache's rules and reviewed lines mean here.

Pure functions over the cache's data (``sync_cache`` documents its format):
- a server built-in rule switches the local rules that stand for it
  (``rules.server_names``); local built-in rules the server does not list as
  enabled are off, unless ``[sync] keep_local_rules`` keeps them;
- what the server applies and the laptop cannot reproduce (a built-in rule with no
  local equivalent, a custom rule local validation refuses) is named by every run;
- a reviewed line applies to the local rules its server rule maps to, or by its
  exact text alone when its rule is unknown here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spillguard.configuration.rules.server_names import local_rules
from spillguard.core.values import replace

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from spillguard.core.models import ReviewedEntry


def _builtin(rule: Mapping[str, Any]) -> bool:
    return rule.get("kind") != "custom"


def _shown(rule: Mapping[str, Any]) -> str:
    return str(rule.get("server_name") or rule["name"])


def server_table(
    data: Mapping[str, Any], builtin_names: Collection[str], *, keep_local: bool = False
) -> dict[str, Any]:
    """The cache's rules as a configuration table (the keys of a global file)."""
    table: dict[str, Any] = {"custom_rules": {}}
    on: list[str] = []
    off: list[str] = []
    listed = False
    for rule in data.get("rules", ()):
        if not _builtin(rule):
            blocking = rule.get("blocking")
            table["custom_rules"][rule["name"]] = {
                "regexp": rule["regexp"],
                "enabled": bool(rule.get("enabled", True)),
                "blocking": True if blocking is None else bool(blocking),
            }
            continue
        listed = True
        names = local_rules(rule["name"], builtin_names)
        (on if rule.get("enabled", True) else off).extend(names)
    if listed and not keep_local:
        # The server's list is the rule set: a built-in rule it does not enable is off.
        off.extend(sorted(set(builtin_names) - set(on) - set(off)))
    table["rules"] = list(dict.fromkeys(on))
    table["disabled_rules"] = [name for name in dict.fromkeys(off) if name not in set(on)]
    if data.get("generic_password"):
        table["generic_password"] = dict(data["generic_password"])
    return table


def unreproduced(data: Mapping[str, Any], builtin_names: Collection[str]) -> list[dict[str, Any]]:
    """Server rules that have no local equivalent, with why: built-in, or refused custom."""
    found = [
        _entry(_shown(rule), "builtin", rule, "no local equivalent")
        for rule in data.get("rules", ())
        if _builtin(rule) and not local_rules(rule["name"], builtin_names)
    ]
    found += [
        _entry(str(rule["name"]), "custom", rule, str(rule.get("reason") or "refused"))
        for rule in data.get("refused", ())
    ]
    return found


def _entry(name: str, kind: str, rule: Mapping[str, Any], reason: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "enabled": bool(rule.get("enabled", True)),
        "reason": reason,
    }


def unreproduced_notice(data: Mapping[str, Any], builtin_names: Collection[str]) -> str | None:
    """One line naming every enabled server rule this laptop cannot apply, or None."""
    missing = [rule for rule in unreproduced(data, builtin_names) if rule["enabled"]]
    if not missing:
        return None
    named = ", ".join(f"{rule['name']} ({rule['reason']})" for rule in missing)
    return f"warning: {len(missing)} rules the server applies are not applied here: {named}"


def repository_notice(
    data: Mapping[str, Any], known: Collection[str], builtin_names: Collection[str]
) -> str | None:
    """One line naming the rules the server applies to the repository (its ``rule_types``)
    that are neither in its rule list nor defined here: the custom rules of the server's
    repository configuration file when that file is not read here."""
    listed = {rule["name"] for rule in (*data.get("rules", ()), *data.get("refused", ()))}
    missing = [
        name
        for name in data.get("repository_rules") or ()
        if name not in listed and name not in known and not local_rules(name, builtin_names)
    ]
    if not missing:
        return None
    return (
        f"warning: the server also applies {', '.join(missing)} to this repository (its "
        "repository configuration file's rules); no local rule has those names"
    )


def bind_reviewed(
    entries: Iterable[ReviewedEntry], rule_names: Collection[str], builtin_names: Collection[str]
) -> tuple[tuple[ReviewedEntry, ...], str | None]:
    """Server reviewed lines bound to local rules, and a notice for unknown rule names.

    An entry under a server rule name applies to the local rules standing for it; an
    entry whose rule is unknown here applies to every rule, by its exact text.
    """
    bound: list[ReviewedEntry] = []
    unknown: set[str] = set()
    for entry in entries:
        if entry.rule is None or entry.rule in rule_names:
            bound.append(entry)
            continue
        names = local_rules(entry.rule, builtin_names)
        if not names:
            unknown.add(entry.rule)
        bound.extend(replace(entry, rule=name) for name in names or (None,))
    if not unknown:
        return tuple(bound), None
    notice = (
        f"note: reviewed lines from the server name rules unknown here "
        f"({', '.join(sorted(unknown))}); they hide their exact text under every rule"
    )
    return tuple(bound), notice


def server_states(
    data: Mapping[str, Any], builtin_names: Collection[str]
) -> dict[str, tuple[str, bool]]:
    """For each local rule a server rule stands behind: (server name, server's state)."""
    states: dict[str, tuple[str, bool]] = {}
    for rule in data.get("rules", ()):
        names = local_rules(rule["name"], builtin_names) if _builtin(rule) else (rule["name"],)
        for name in names:
            # An enabled server rule decides, as in ``server_table``.
            if name not in states or rule.get("enabled", True):
                states[name] = (_shown(rule), bool(rule.get("enabled", True)))
    return states
