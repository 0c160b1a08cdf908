"""The app's rule list (and the hosted variant's password settings) in the cache's form."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from spillguard.configuration import schema
from spillguard.configuration.rules.server_names import local_rules
from spillguard.core.errors import SyncError
from spillguard.detection.rulecheck import RuleValidationError, compile_custom
from spillguard.sync.limits import MAX_NAME, MAX_REGEXP, MAX_RULES, LimitError, check_count
from spillguard.sync.messages import scrub, scrub_cut

_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
#: Envelope keys a paged or wrapped list may sit under (the documents do not show it).
_LIST_KEYS = ("values", "rules", "items", "content")
_SHOWN = 5
#: Where a rule record holds its expression: ``regexp`` in the documents that show
#: records; the hosted records (ValidationRuleDto) are not shown.
_REGEXP_KEYS = ("regexp", "regex", "pattern")
#: Boolean fields saying a rule is built-in (``hardcoded`` is the code-hosting one).
_BUILTIN_FLAGS = ("hardcoded", "builtIn", "builtin")
_KIND_KEYS = ("type", "kind", "ruleType")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SyncedRules:
    rules: tuple[dict[str, Any], ...]
    #: Whether the server's custom rules carry ``blocking`` (None: no custom rule to tell).
    blocking_field: bool | None
    notices: tuple[str, ...] = ()
    #: Custom rules local validation refused: name, enabled and why (named by every run).
    refused: tuple[dict[str, Any], ...] = ()
    #: Rule names by the server's rule id: a reviewed line may name its rule by id (the
    #: wiki and issue tracker identify custom rules by a numeric id).
    by_id: dict[str, str] = dataclasses.field(default_factory=dict)


def rule_name(text: str) -> str:
    """A server display name as an UPPER_SNAKE_CASE rule name ("My token" -> MY_TOKEN)."""
    name = _NOT_NAME.sub("_", text).strip("_").upper()
    return f"RULE_{name}" if name[:1].isdigit() else name


def _grouped(payload: dict[str, Any]) -> list[Any] | None:
    """The items of an answer grouped by kind, e.g. ``{"builtIn": [...], "custom": [...]}``.

    The wiki and issue-tracker documents say only that the rule list holds built-in and
    custom rules; a group's name marks its unmarked records.
    """
    groups = [(key.lower(), value) for key, value in payload.items() if isinstance(value, list)]
    if not groups:
        return None
    found: list[Any] = []
    for key, items in groups:
        custom = True if "custom" in key else (False if "built" in key else None)
        for item in items:
            marked = isinstance(item, dict) and custom is not None and _marked_custom(item) is None
            found.append({**item, "custom": custom} if marked else item)
    return found


def items_of(payload: Any, what: str) -> list[Any]:
    if isinstance(payload, dict):
        listed = next((payload[key] for key in _LIST_KEYS if key in payload), None)
        payload = _grouped(payload) if listed is None else listed
    if not isinstance(payload, list):
        raise SyncError(f"the server's {what} answer is not a list")
    return payload


def _flag(value: Any) -> bool | None:
    """A boolean field; "true"/"false" as text too (None: absent, null or anything else)."""
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(str(value).strip().lower())


def _regexp(item: dict[str, Any]) -> Any:
    return next((item[key] for key in _REGEXP_KEYS if item.get(key) is not None), None)


def _marked_custom(item: dict[str, Any]) -> bool | None:
    """Whether the record itself says custom or built-in (None: it does not say)."""
    for key in _BUILTIN_FLAGS:
        builtin = _flag(item.get(key))
        if builtin is not None:
            return not builtin
    custom = _flag(item.get("custom"))
    if custom is not None:
        return custom
    for key in _KIND_KEYS:
        kind = str(item.get(key) or "").lower()
        if "custom" in kind:
            return True
        if "built" in kind or "hardcoded" in kind:
            return False
    return None


def _shown(names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(scrub(name, ()) for name in names[:_SHOWN]) + more


class _Collector:
    def __init__(self, builtin_names: frozenset[str]) -> None:
        self.builtin_names = builtin_names
        self.rules: list[dict[str, Any]] = []
        self.unknown: list[str] = []
        self.refused: list[dict[str, Any]] = []
        self.notices: list[str] = []
        self.customs = 0
        self.with_blocking = 0
        self.nameless = 0

    def add(self, item: Any) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            self.nameless += 1
            return
        if len(item["name"]) > MAX_NAME:
            raise LimitError(
                f"the server's rule list: a rule name of {len(item['name'])} characters, more "
                f"than the {MAX_NAME} spillguard takes"
            )
        name = rule_name(item["name"])
        regexp = _regexp(item)
        custom = _marked_custom(item)
        if custom is None:
            # Unmarked (the wiki, issue-tracker and hosted records are not shown, and a
            # server may list a built-in rule's own pattern): a built-in name is that rule.
            custom = name not in self.builtin_names and isinstance(regexp, str)
        enabled = _flag(item.get("enabled")) is not False
        if not custom:
            if self._taken(name, item):
                return
            # Every one is kept: the server's list is the rule set (sync.fidelity).
            entry = {"name": name, "kind": "builtin", "enabled": enabled}
            # Sent back as ruleName: the server knows its own spelling only.
            self.rules.append(
                entry if item["name"] == name else {**entry, "server_name": item["name"]}
            )
            if not local_rules(name, self.builtin_names):
                self.unknown.append(name)
            return
        self._add_custom(name, regexp, enabled, item)

    def _taken(self, name: str, item: dict[str, Any]) -> bool:
        """Two server names for one local name (``Internal token``, ``internal-token``)."""
        if not any(rule["name"] == name for rule in self.rules):
            return False
        shown = scrub_cut(item["name"], 80)
        self.notices.append(f"warning: server rule {shown!r} is a second {name}; not used")
        return True

    def _add_custom(self, name: str, regexp: Any, enabled: bool, item: dict[str, Any]) -> None:
        self.customs += 1
        self.with_blocking += "blocking" in item
        if not isinstance(regexp, str):
            self.notices.append(f"warning: server rule {name} has no regexp; not used")
            return
        if name in self.builtin_names:
            self.notices.append(
                f"warning: server custom rule {name} has the name of a built-in rule; not used"
            )
            return
        try:
            if len(regexp) > MAX_REGEXP:
                raise RuleValidationError(  # noqa: TRY301 - refused as validation refuses
                    f"custom rule {name}: regexp of {len(regexp)} characters, longer than the "
                    f"{MAX_REGEXP} spillguard takes (every scan would compile it)"
                )
            compile_custom(name, regexp)
        except RuleValidationError as error:
            self.notices.append(f"warning: server {scrub(str(error), ())}; not used")
            reason = scrub(str(error), ()).removeprefix(f"custom rule {name}: ")
            self.refused.append({"name": name, "enabled": enabled, "reason": reason})
            return
        if self._taken(name, item):
            return
        blocking = _flag(item.get("blocking"))
        self.rules.append(
            {
                "name": name,
                "kind": "custom",
                "enabled": enabled,
                "blocking": blocking,
                "regexp": regexp,
                "server_name": item["name"],
            }
        )


def parse_rules(payload: Any, builtin_names: frozenset[str]) -> SyncedRules:
    """The rule list answer: built-in states for known names, validated custom rules."""
    collector = _Collector(builtin_names)
    by_id: dict[str, str] = {}
    items = items_of(payload, "rule list")
    check_count(len(items), MAX_RULES, "rules in the rule list", "the server's rule list")
    for item in items:
        collector.add(item)
        named = isinstance(item, dict) and isinstance(item.get("name"), str)
        if named and item.get("id") is not None:
            by_id[str(item["id"])] = rule_name(item["name"])
    notices = list(collector.notices)
    if collector.nameless:
        count = collector.nameless
        notices.append(
            "warning: a server rule without a name was ignored"
            if count == 1
            else f"warning: {count} server rules without a name were ignored"
        )
    if collector.unknown:
        notices.append(
            f"warning: {len(collector.unknown)} server built-in rules have no local equivalent "
            f"and are not applied (every scan names them): {_shown(collector.unknown)}"
        )
    blocking = None if not collector.customs else collector.with_blocking > 0
    return SyncedRules(
        rules=tuple(collector.rules),
        blocking_field=blocking,
        notices=tuple(notices),
        refused=tuple(collector.refused),
        by_id=by_id,
    )


def repository_rule_names(payload: Any) -> list[str]:
    """The rule names the server applies to one repository (the rule_types answer)."""
    items = items_of(payload, "rule_types")
    check_count(len(items), MAX_RULES, "rule names", "the server's rule_types answer")
    # Names, as documented; a record with a name is read too.
    names = [item.get("name") if isinstance(item, dict) else item for item in items]
    if any(isinstance(name, str) and len(name) > MAX_NAME for name in names):
        raise LimitError(f"the server's rule_types answer: a rule name over {MAX_NAME} characters")
    return [rule_name(name) for name in names if isinstance(name, str)]


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def parse_password_settings(payload: Any) -> tuple[dict[str, Any], list[str]]:
    """The hosted generic-password settings that map onto ``[generic_password]`` keys."""
    if not isinstance(payload, dict):
        raise SyncError("the server's generic-password settings answer is not an object")
    settings: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in payload.items():
        local = _snake(str(key))
        expected = schema.GENERIC_PASSWORD.get(local)
        if expected is None or isinstance(value, bool) != (expected.kind is bool):
            ignored.append(str(key))
        elif isinstance(value, expected.kind):
            settings[local] = value
        else:
            ignored.append(str(key))
    notices = (
        [f"note: generic-password settings with no local equivalent: {_shown(ignored)}"]
        if ignored
        else []
    )
    return settings, notices
