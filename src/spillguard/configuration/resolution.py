"""Resolution: the validated layers applied, lowest first, to the built-in rules.

The rules of precedence, as on the server app:
- a later layer overrides an earlier one, setting by setting;
- a custom rule with the name of an earlier custom rule replaces it;
- ``locked_rules`` (user's or administrator's file) are enabled, and no
  repository layer may disable, replace or weaken them;
- a repository layer may not set the administrator's policy (an error).
"""

from __future__ import annotations

from spillguard.configuration import schema
from spillguard.configuration.config import (
    DEFAULT_RULE_TIMEOUT,
    Config,
    check_repository_keys,
    compile_path_pattern,
)
from spillguard.core.models import PasswordFilters, ReviewedEntry, Rule, RuleSet
from spillguard.core.values import replace

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    import regex

    from spillguard.configuration.config import Layer

#: Keys that shape the rule set rather than being settings.
RULE_KEYS = frozenset(
    {
        "rules",
        "disabled_rules",
        "custom_rules",
        "allowlist_paths",
        "locked_rules",
        "inherit_builtin_rules",
        "inherit_custom_rules",
    }
)
_TABLES = {"hook": schema.HOOK, "generic_password": schema.GENERIC_PASSWORD, "sync": schema.SYNC}
FLAGS_SOURCE = "command line"
PASSWORD_RULE = "GENERIC_PASSWORD"  # noqa: S105 - a rule name


def default_settings() -> dict[str, Any]:
    """Every setting at its default; tables hold their keys' defaults."""
    settings = {
        name: key.default for name, key in schema.TOP_LEVEL.items() if name not in RULE_KEYS
    }
    for name, keys in _TABLES.items():
        settings[name] = {
            key: spec.default for key, spec in keys.items() if spec.default is not None
        }
    return settings


def _switched(rule: Rule, *, enabled: bool, source: str) -> Rule:
    """``replace(rule, enabled=..., source=...)`` at a fraction of its cost:
    after a sync the server's list turns off most built-in rules, on every commit. The
    copy's fields are the rule's, as one dictionary (a frozen class refuses
    ``setattr``)."""
    switched = object.__new__(Rule)
    values = vars(switched)
    values.update(vars(rule))
    values["enabled"] = enabled
    values["source"] = source
    return switched


class Resolution:
    """Mutable state of one resolution; only ``resolve`` drives it."""

    def __init__(self, builtin: list[Rule]) -> None:
        self.builtin: dict[str, Rule] = {rule.name: rule for rule in builtin}
        self.global_custom: dict[str, Rule] = {}
        self.repo_custom: dict[str, Rule] = {}
        self.inherit_custom = True
        self.settings = default_settings()
        self.allowlist: list[regex.Pattern[str]] = []
        self.trusted_allowlist: list[regex.Pattern[str]] = []
        self.origins: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.locked: set[str] = set()
        self.layers: list[tuple[str, str]] = [("builtin", "builtin")]
        #: A repository asked for warn mode while rules are locked: only those block.
        self.repository_warn = False

    def apply(self, layer: Layer) -> None:
        self.layers.append((layer.role, layer.source))
        settings = {name: value for name, value in layer.data.items() if name not in RULE_KEYS}
        if layer.role == "repository":
            check_repository_keys(layer.data, layer.source)
            self._apply_repository_rules(layer)
            settings = self._repository_settings(settings, layer.source)
        else:
            self._apply_global_rules(layer)
        patterns = [
            compile_path_pattern(pattern, layer.source)
            for pattern in layer.data.get("allowlist_paths", ())
        ]
        self.allowlist.extend(patterns)
        if layer.role != "repository":
            self.trusted_allowlist.extend(patterns)
        for name, value in settings.items():
            self._set(name, value, layer.source)

    def set_flag(self, name: str, *, value: Any) -> None:
        """A command-line flag: the highest layer."""
        if ("flags", FLAGS_SOURCE) not in self.layers:
            self.layers.append(("flags", FLAGS_SOURCE))
        self.settings[name] = value
        self.origins.append((name, FLAGS_SOURCE))

    def _set(self, name: str, value: Any, source: str) -> None:
        if isinstance(value, dict):
            self.settings[name] = {**self.settings[name], **value}
            self.origins.extend((f"{name}.{key}", source) for key in value)
            return
        self.settings[name] = value
        self.origins.append((name, source))

    def _apply_global_rules(self, layer: Layer) -> None:
        data, source = layer.data, layer.source
        custom = data.get("custom_rules", {})
        self._check_custom_names(custom, source)
        # An earlier layer's locked rule stays as it was (the server's list turns off
        # the built-in rules it does not enable: never a locked one).
        saved = self._locked_rules()
        self.global_custom.update(custom)
        self._toggle(data.get("rules", ()), enabled=True, source=source)
        self._toggle(data.get("disabled_rules", ()), enabled=False, source=source)
        self._restore(saved)
        locked = self._local_names(data.get("locked_rules", ()))
        self.locked.update(locked)
        # A name not known yet may come with a later layer (the server's rules);
        # config() reports the ones that never do.
        known = [name for name in locked if name in self.builtin or name in self.global_custom]
        self._toggle(known, enabled=True, source=source)

    def _apply_repository_rules(self, layer: Layer) -> None:
        data, source = layer.data, layer.source
        saved = self._locked_rules()
        custom = data.get("custom_rules", {})
        self._check_custom_names(custom, source)
        for name in sorted(custom.keys() & saved.keys()):
            self._notice_locked(source, name, "its definition here is ignored")
        self.repo_custom.update({name: rule for name, rule in custom.items() if name not in saved})
        if not data.get("inherit_builtin_rules", True):
            keep = set(data.get("rules", ()))
            names = [name for name in self.builtin if name not in keep]
            self._toggle(names, enabled=False, source=source)
        if not data.get("inherit_custom_rules", True):
            self.inherit_custom = False
        self._toggle(data.get("rules", ()), enabled=True, source=source)
        disabled = data.get("disabled_rules", ())
        for name in sorted(set(disabled) & saved.keys()):
            self._notice_locked(source, name, "it stays enabled")
        self._toggle([name for name in disabled if name not in saved], enabled=False, source=source)
        self._restore(saved)

    def _repository_settings(self, settings: dict[str, Any], source: str) -> dict[str, Any]:
        """The settings a repository layer may change: not a locked rule's filters, nor
        what a scan costs or protects (``schema.PROTECTION``)."""
        kept = {name: value for name, value in settings.items() if name not in schema.PROTECTION}
        self.notices.extend(
            f"{source}: {name} is ignored in a repository's file (set it in your own or the "
            "administrator's file)"
            for name in sorted(schema.PROTECTION & settings.keys())
        )
        if "generic_password" in kept and PASSWORD_RULE in self.locked:
            del kept["generic_password"]
            self._notice_locked(source, PASSWORD_RULE, "its [generic_password] filters are ignored")
        if self.locked and kept.get("hook", {}).get("mode") == "warn":
            # Warn mode would let a locked rule's finding through: it covers the others.
            kept["hook"] = {key: value for key, value in kept["hook"].items() if key != "mode"}
            self.repository_warn = True
            self.notices.append(
                f"{source}: hook mode warn applies to every rule but the locked ones"
            )
        return kept

    def _notice_locked(self, source: str, name: str, consequence: str) -> None:
        self.notices.append(f"{source}: rule {name} is locked by the administrator; {consequence}")

    def _locked_rules(self) -> dict[str, Rule]:
        """The locked rules as they stand before a repository layer touches them."""
        rules = {**self.global_custom, **self.builtin}
        return {name: rules[name] for name in self.locked if name in rules}

    def _restore(self, saved: dict[str, Rule]) -> None:
        for name, rule in saved.items():
            table = self.builtin if rule.kind == "builtin" else self.global_custom
            table[name] = rule

    def _check_custom_names(self, custom: dict[str, Rule], source: str) -> None:
        from spillguard.core.errors import ConfigError

        clash = sorted(custom.keys() & self.builtin.keys())
        if clash:
            raise ConfigError(
                f"{source}: custom rule {clash[0]} has the name of a built-in rule; "
                "choose another name, or list the built-in rule in rules or disabled_rules"
            )

    def _toggle(self, names: Iterable[str], *, enabled: bool, source: str) -> None:
        for name in self._local_names(names):
            if name in self.builtin:
                table = self.builtin
            elif name in self.repo_custom:
                table = self.repo_custom
            elif name in self.global_custom:
                table = self.global_custom
            else:
                self.notices.append(f"{source}: no rule named {name}{self._hint(name)}; ignored")
                continue
            table[name] = _switched(table[name], enabled=enabled, source=source)

    def _local_names(self, names: Iterable[str]) -> list[str]:
        """Names as given, a server rule's name standing for its local rules (``RSA``)."""
        from spillguard.configuration.rules.server_names import local_rules

        local: list[str] = []
        for name in names:
            known = name in self.builtin or name in self.repo_custom or name in self.global_custom
            local.extend((() if known else local_rules(name, self.builtin)) or (name,))
        return local

    def _hint(self, name: str) -> str:
        import difflib  # only for a misspelt name

        known = [*self.builtin, *self.global_custom, *self.repo_custom]
        close = difflib.get_close_matches(name, known, n=1)
        return f" (did you mean {close[0]}?)" if close else ""

    def custom_rules(self) -> list[Rule]:
        if self.inherit_custom:
            custom = dict(self.global_custom)
        else:  # locked global rules survive inherit_custom_rules = false
            custom = {
                name: rule for name, rule in self.global_custom.items() if name in self.locked
            }
        custom.update(self.repo_custom)  # a repository rule overrides a global one of its name
        return list(custom.values())

    def rules(self) -> tuple[Rule, ...]:
        rules = (*self.builtin.values(), *self.custom_rules())
        if not self.repository_warn:
            return rules
        return tuple(
            rule if rule.name in self.locked else replace(rule, blocking=False) for rule in rules
        )

    def config(
        self, *, reviewed: tuple[ReviewedEntry, ...], reviewed_salt: str, include_allowlisted: bool
    ) -> Config:
        settings = self.settings
        known = {*self.builtin, *self.global_custom}
        self.notices.extend(
            f"locked rule {name} does not exist" for name in sorted(self.locked - known)
        )
        ruleset = RuleSet(
            rules=self.rules(),
            allowlist_paths=tuple(self.allowlist),
            locked=frozenset(self.locked),
            trusted_allowlist_paths=tuple(self.trusted_allowlist),
            reviewed=reviewed,
            reviewed_salt=reviewed_salt,
            rule_timeout=float(settings["max_rule_timeout"]) or DEFAULT_RULE_TIMEOUT,
            password_filters=PasswordFilters(**settings["generic_password"]),
            include_allowlisted=include_allowlisted,
            allow_pragma=settings["allow_pragma"],
        )
        return Config(
            ruleset=ruleset,
            hook_mode=settings["hook"]["mode"],
            max_file_size=settings["max_file_size"],
            include_plaintext_in_exports=settings["include_plaintext_in_exports"],
            deduplicate_exports=settings["deduplicate_exports"],
            require_review_reason=settings["require_review_reason"],
            repository_config=settings["repository_config"],
            locked_rules=frozenset(self.locked),
            bypass_tokens=_tokens(settings["bypass_token"]),
            advertise_bypass_token=settings["advertise_bypass_token"],
            bypass_push_option=settings["bypass_push_option"],
            time_budget=float(settings["time_budget"]),
            max_commits=settings["max_commits"],
            on_error=settings["on_error"],
            on_unscannable=settings["on_unscannable"],
            on_unreachable=settings["on_unreachable"],
            sync=settings["sync"],
            origins=tuple(self.origins),
            notices=tuple(self.notices),
            layers=tuple(self.layers),
            settings=settings,
        )


def _tokens(setting: str | list[str]) -> tuple[str, ...]:
    """``bypass_token`` as a tuple: one string or a list; empty strings disable."""
    tokens = [setting] if isinstance(setting, str) else setting
    return tuple(token for token in tokens if token)


def resolve(
    builtin: Sequence[Rule],
    layers: Iterable[Layer],
    *,
    reviewed: Sequence[ReviewedEntry] = (),
    reviewed_salt: str = "",
    include_allowlisted: bool = False,
) -> Config:
    """Apply the layers, lowest first, to the built-in rules and the defaults."""
    state = Resolution(list(builtin))
    for layer in layers:
        state.apply(layer)
    if include_allowlisted:
        state.set_flag("include_allowlisted", value=True)
    return state.config(
        reviewed=tuple(reviewed),
        reviewed_salt=reviewed_salt,
        include_allowlisted=include_allowlisted,
    )
