"""Configuration: TOML files to validated layers, and layers to one resolved Config.

Layers, lowest first: the built-in rules; the user's or administrator's file
(global rules and policy); the rules synced from the server; the repository's
``.spillguard.toml``; command-line flags. Key names follow the server app's
per-repository configuration file.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Literal

import regex

from spillguard import schema
from spillguard._compat import tomllib
from spillguard.errors import ConfigError
from spillguard.models import PasswordFilters, ReviewedEntry, Rule, RuleSet
from spillguard.rulecheck import RuleValidationError, compile_custom

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

LayerRole = Literal["global", "server", "repository"]
DEFAULT_RULE_TIMEOUT = 20.0
REPOSITORY_FILE = ".spillguard.toml"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Layer:
    """One validated configuration file (or synced cache) and the role it plays."""

    role: LayerRole
    source: str
    data: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Everything resolved: the rule set, the settings and where each came from."""

    ruleset: RuleSet
    hook_mode: str = "block"
    max_file_size: int = 10 * 1024 * 1024
    include_plaintext_in_exports: bool = False
    deduplicate_exports: bool = True
    require_review_reason: bool = False
    repository_config: bool = False
    locked_rules: frozenset[str] = frozenset()
    bypass_token: str = "skip-secret-scan"  # noqa: S105 - a commit-message marker
    time_budget: float = 60.0
    max_commits: int = 10000
    on_error: str = "reject"
    sync: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: (setting, source) for every setting a file set, in the order applied.
    origins: tuple[tuple[str, str], ...] = ()
    notices: tuple[str, ...] = ()


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text to a table; a syntax error names the file, line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None


def load_layer_text(text: str, *, source: str, role: LayerRole) -> Layer:
    """A layer from TOML text. Every key and custom rule is checked here, at load."""
    table = parse_toml(text, source)
    if "tool" in table and isinstance(table["tool"], dict) and "spillguard" in table["tool"]:
        table = table["tool"]["spillguard"]  # [tool.spillguard] in pyproject.toml
    return layer_from_table(table, source=source, role=role)


def layer_from_table(table: dict[str, Any], *, source: str, role: LayerRole) -> Layer:
    schema.check_table(table, schema.TOP_LEVEL, source)
    schema.check_table(table.get("hook", {}), schema.HOOK, f"{source}: [hook]")
    schema.check_table(
        table.get("generic_password", {}), schema.GENERIC_PASSWORD, f"{source}: [generic_password]"
    )
    _reject_credentials(table.get("sync", {}), source)
    schema.check_table(table.get("sync", {}), schema.SYNC, f"{source}: [sync]")
    for pattern in table.get("allowlist_paths", ()):
        _compile_path_pattern(pattern, source)
    custom = {
        name: _custom_rule(name, value, source)
        for name, value in table.get("custom_rules", {}).items()
    }
    return Layer(role=role, source=source, data={**table, "custom_rules": custom})


def load_layer_file(path: Path, *, role: LayerRole) -> Layer:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    return load_layer_text(text, source=str(path), role=role)


#: Keys that would put a credential in a file; the message says where credentials go.
_CREDENTIAL_KEYS = frozenset(
    {"username", "user", "password", "token", "api_key", "apikey", "key", "secret"}
)


def _reject_credentials(sync: Any, source: str) -> None:
    if not isinstance(sync, dict):
        return
    found = sorted(_CREDENTIAL_KEYS.intersection(key.lower() for key in sync))
    server = sync.get("server")
    if not found and isinstance(server, str) and "@" in server.partition("://")[2].split("/")[0]:
        found = ["server (user information in the URL)"]
    if found:
        raise ConfigError(
            f"{source}: [sync] {found[0]}: credentials never go in a configuration file; use "
            "SPILLGUARD_USERNAME and SPILLGUARD_PASSWORD (or SPILLGUARD_API_KEY), "
            "~/.netrc or the system keyring"
        )


_RULE_NAME = regex.compile(r"[A-Z][A-Z0-9_]*")


def _custom_rule(name: str, value: Any, source: str) -> Rule:
    where = f"{source}: custom_rules.{name}"
    if not _RULE_NAME.fullmatch(name):
        raise ConfigError(f"{where}: a rule name is UPPER_SNAKE_CASE, like MY_TOKEN")
    spec = {"regexp": value} if isinstance(value, str) else value
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a regexp string or a table with regexp")
    schema.check_table(spec, schema.CUSTOM_RULE, where)
    if "regexp" not in spec:
        raise ConfigError(f"{where}: missing key 'regexp'")
    try:
        pattern = compile_custom(name, spec["regexp"])
    except RuleValidationError as error:
        raise ConfigError(f"{source}: {error}") from None
    return Rule(
        name=name,
        kind="custom",
        regexp=spec["regexp"],
        pattern=pattern,
        description=spec.get("description", ""),
        keywords=tuple(keyword.lower() for keyword in spec.get("keywords", ())),
        enabled=spec.get("enabled", True),
        blocking=spec.get("blocking", True),
        source=source,
    )


def _compile_path_pattern(pattern: str, source: str) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern)
    except regex.error as error:
        raise ConfigError(f"{source}: allowlist_paths entry {pattern!r}: {error}") from None


def resolve(
    builtin: Sequence[Rule],
    layers: Iterable[Layer],
    *,
    reviewed: Sequence[ReviewedEntry] = (),
    reviewed_salt: str = "",
    include_allowlisted: bool = False,
) -> Config:
    """Apply the layers, lowest first, to the built-in rules and the defaults."""
    state = _Resolution(list(builtin))
    for layer in layers:
        state.apply(layer)
    return state.config(
        reviewed=tuple(reviewed),
        reviewed_salt=reviewed_salt,
        include_allowlisted=include_allowlisted,
    )


class _Resolution:
    """Mutable state of one resolution; only ``resolve`` sees it."""

    def __init__(self, builtin: list[Rule]) -> None:
        self.builtin: dict[str, Rule] = {rule.name: rule for rule in builtin}
        self.global_custom: dict[str, Rule] = {}
        self.repo_custom: dict[str, Rule] = {}
        self.inherit_custom = True
        self.settings: dict[str, Any] = {
            name: key.default for name, key in schema.TOP_LEVEL.items()
        }
        self.allowlist: list[regex.Pattern[str]] = []
        self.origins: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.locked: set[str] = set()

    def apply(self, layer: Layer) -> None:
        data = layer.data
        if layer.role == "repository":
            self._apply_repository_rules(layer)
        else:
            self.locked.update(data.get("locked_rules", ()))
            self._toggle(data.get("rules", ()), enabled=True, source=layer.source)
            self._toggle(data.get("disabled_rules", ()), enabled=False, source=layer.source)
            self.global_custom.update(data.get("custom_rules", {}))
        self.allowlist.extend(
            _compile_path_pattern(pattern, layer.source)
            for pattern in data.get("allowlist_paths", ())
        )
        for name, value in data.items():
            if name in _RULE_KEYS:
                continue
            self._set(name, value, layer.source)

    def _set(self, name: str, value: Any, source: str) -> None:
        if isinstance(value, dict):
            merged = dict(self.settings.get(name) or {})
            merged.update(value)
            value = merged
        self.settings[name] = value
        self.origins.append((name, source))

    def _apply_repository_rules(self, layer: Layer) -> None:
        data = layer.data
        if not data.get("inherit_builtin_rules", True):
            keep = set(data.get("rules", ())) | self.locked
            self._toggle(
                (name for name in self.builtin if name not in keep),
                enabled=False,
                source=layer.source,
            )
        if not data.get("inherit_custom_rules", True):
            self.inherit_custom = False
        self._toggle(data.get("rules", ()), enabled=True, source=layer.source)
        disabled = set(data.get("disabled_rules", ()))
        for name in sorted(disabled & self.locked):
            self.notices.append(
                f"{layer.source}: rule {name} is locked by the administrator; it stays enabled"
            )
        self._toggle(sorted(disabled - self.locked), enabled=False, source=layer.source)
        self.repo_custom.update(data.get("custom_rules", {}))

    def _toggle(self, names: Iterable[str], *, enabled: bool, source: str) -> None:
        for name in names:
            rule = self.builtin.get(name)
            if rule is None:
                custom = self.global_custom.get(name) or self.repo_custom.get(name)
                if custom is None:
                    self.notices.append(f"{source}: no rule named {name}; ignored")
                    continue
                self._replace_custom(custom, enabled=enabled, source=source)
                continue
            self.builtin[name] = dataclasses.replace(rule, enabled=enabled, source=source)

    def _replace_custom(self, rule: Rule, *, enabled: bool, source: str) -> None:
        table = self.repo_custom if rule.name in self.repo_custom else self.global_custom
        table[rule.name] = dataclasses.replace(rule, enabled=enabled, source=source)

    def custom_rules(self) -> list[Rule]:
        custom = dict(self.global_custom) if self.inherit_custom else {}
        custom.update(self.repo_custom)  # a repository rule overrides a global one of its name
        return list(custom.values())

    def config(
        self, *, reviewed: tuple[ReviewedEntry, ...], reviewed_salt: str, include_allowlisted: bool
    ) -> Config:
        settings = self.settings
        timeout = float(settings["max_rule_timeout"]) or DEFAULT_RULE_TIMEOUT
        password = settings.get("generic_password") or {}
        ruleset = RuleSet(
            rules=(*self.builtin.values(), *self.custom_rules()),
            allowlist_paths=tuple(self.allowlist),
            reviewed=reviewed,
            reviewed_salt=reviewed_salt,
            rule_timeout=timeout,
            password_filters=PasswordFilters(**password),
            include_allowlisted=include_allowlisted,
        )
        hook = settings.get("hook") or {}
        return Config(
            ruleset=ruleset,
            hook_mode=hook.get("mode", "block"),
            max_file_size=settings["max_file_size"],
            include_plaintext_in_exports=settings["include_plaintext_in_exports"],
            deduplicate_exports=settings["deduplicate_exports"],
            require_review_reason=settings["require_review_reason"],
            repository_config=settings["repository_config"],
            locked_rules=frozenset(self.locked),
            bypass_token=settings["bypass_token"],
            time_budget=float(settings["time_budget"]),
            max_commits=settings["max_commits"],
            on_error=settings["on_error"],
            sync=settings.get("sync") or {},
            origins=tuple(self.origins),
            notices=tuple(self.notices),
        )


_RULE_KEYS = frozenset(
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
