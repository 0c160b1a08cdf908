"""Configuration: TOML files to validated layers (``resolution.resolve`` makes one Config of them).

Layers, lowest first: the built-in rules; the user's or administrator's file
(global rules and policy); the rules synced from the server; the repository's
``.spillguard.toml``; command-line flags. Key names follow the server app's
per-repository configuration file.
"""

from __future__ import annotations

import re

from spillguard.configuration import schema
from spillguard.core.errors import ConfigError
from spillguard.core.models import Rule, RuleSet
from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Literal

    import regex

    #: global: the user's or administrator's file; server: the synced cache;
    #: repository: .spillguard.toml. (Command-line flags are applied by ``resolution.resolve``.)
    LayerRole = Literal["global", "server", "repository"]

DEFAULT_RULE_TIMEOUT = 20.0
REPOSITORY_FILE = ".spillguard.toml"
#: The server app's own per-repository file (``server_yaml``): read when there is no
#: ``REPOSITORY_FILE``.
SERVER_REPOSITORY_FILE = "soteri-security.yml"


class Layer(Frozen):
    """One validated configuration file (or synced cache) and the role it plays."""

    __slots__ = ("data", "role", "source")

    role: LayerRole
    source: str
    data: Mapping[str, Any]

    def __init__(self, role: LayerRole, source: str, data: Mapping[str, Any]) -> None:
        fill(self, locals())


class Config(Frozen):
    """Everything resolved: the rule set, the settings and where each came from."""

    __slots__ = (
        "advertise_bypass_token",
        "bypass_push_option",
        "bypass_tokens",
        "deduplicate_exports",
        "hook_mode",
        "include_plaintext_in_exports",
        "layers",
        "locked_rules",
        "max_commits",
        "max_file_size",
        "notices",
        "on_error",
        "on_unreachable",
        "on_unscannable",
        "origins",
        "repository_config",
        "require_review_reason",
        "ruleset",
        "settings",
        "sync",
        "time_budget",
    )

    ruleset: RuleSet
    hook_mode: str
    max_file_size: int
    include_plaintext_in_exports: bool
    deduplicate_exports: bool
    require_review_reason: bool
    repository_config: bool
    locked_rules: frozenset[str]
    #: A commit whose message contains one of these is not scanned by the hooks:
    #: spillguard's own marker and the server app's documented one.
    bypass_tokens: tuple[str, ...]
    #: Whether a rejected push's advice tells the pusher about the bypass tokens.
    advertise_bypass_token: bool
    #: ``git push -o NAME`` accepts the whole push unscanned (break-glass); "" is off.
    bypass_push_option: str
    time_budget: float
    max_commits: int
    on_error: str
    #: What content left unread (a binary over max_file_size) does: "reject" or
    #: "accept"; None (unset) rejects a push and only names it in local hooks and scans.
    on_unscannable: str | None
    #: What objects a push carries that no pushed ref reaches do: "reject" the push,
    #: or "judge" them whole.
    on_unreachable: str
    sync: Mapping[str, Any]
    #: (setting, source) for every setting a layer set, in the order applied;
    #: a table's keys appear dotted ("hook.mode").
    origins: tuple[tuple[str, str], ...]
    notices: tuple[str, ...]
    #: (role, source) of every layer applied, lowest first.
    layers: tuple[tuple[str, str], ...]
    #: Every setting as resolved, by its configuration key (tables as dicts).
    settings: Mapping[str, Any]

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        ruleset: RuleSet,
        hook_mode: str = "block",
        max_file_size: int = 10 * 1024 * 1024,
        include_plaintext_in_exports: bool = False,
        deduplicate_exports: bool = True,
        require_review_reason: bool = False,
        repository_config: bool = False,
        locked_rules: frozenset[str] = frozenset(),
        bypass_tokens: tuple[str, ...] = ("skip-secret-scan", "skip-soteri-security-check"),
        advertise_bypass_token: bool = False,
        bypass_push_option: str = "",
        time_budget: float = 60.0,
        max_commits: int = 10000,
        on_error: str = "reject",
        on_unscannable: str | None = None,
        on_unreachable: str = "reject",
        sync: Mapping[str, Any] | None = None,
        origins: tuple[tuple[str, str], ...] = (),
        notices: tuple[str, ...] = (),
        layers: tuple[tuple[str, str], ...] = (),
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        if sync is None:
            sync = {}
        if settings is None:
            settings = {}
        fill(self, locals())


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text to a table; a syntax error names the file, line and column."""
    # Imported here: a commit hook in a repository without a configuration file
    # never parses TOML (the built-in rules are cached), and tomllib costs it ~4 ms.
    from spillguard.core._compat import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None


def load_layer_text(text: str, *, source: str, role: LayerRole) -> Layer:
    """A layer from TOML text. Every key and custom rule is checked here, at load."""
    return layer_from_table(parse_toml(text, source), source=source, role=role)


def layer_from_table(table: dict[str, Any], *, source: str, role: LayerRole) -> Layer:
    """A validated layer: every key known and well typed, every pattern compiled."""
    schema.check_table(table, schema.TOP_LEVEL, source)
    _reject_credentials(table.get("sync", {}), source)
    for name, keys in (
        ("hook", schema.HOOK),
        ("generic_password", schema.GENERIC_PASSWORD),
        ("sync", schema.SYNC),
    ):
        schema.check_table(table.get(name, {}), keys, f"{source}: [{name}]", name=name)
    for pattern in table.get("allowlist_paths", ()):
        compile_path_pattern(pattern, source)
    custom = {
        name: _custom_rule(name, value, source)
        for name, value in table.get("custom_rules", {}).items()
    }
    return Layer(role=role, source=source, data={**table, "custom_rules": custom})


def check_repository_keys(table: Mapping[str, Any], source: str) -> None:
    """A repository file may not set the administrator's policy, nor where sync connects."""
    admin = sorted(schema.ADMIN_ONLY & table.keys())
    if admin:
        raise ConfigError(
            f"{source}: {admin[0]} is an administrator setting; a repository file may not set it"
        )
    own = sorted(schema.USER_ONLY & table.keys())
    if own:
        raise ConfigError(
            f"{source}: {own[0]} belongs in your own configuration file, not in a "
            "repository's (a repository must not choose what judges its own commits)"
        )
    sync = sorted(schema.SYNC_USER_ONLY & table.get("sync", {}).keys())
    if sync:
        raise ConfigError(
            f"{source}: [sync] {sync[0]} belongs in your own configuration file, not in a "
            "repository's (a repository must not choose where your credentials go)"
        )


def read_text_file(path: Path) -> str:
    """A configuration file's text; unreadable or not UTF-8 is a ConfigError naming it."""
    try:
        return path.read_text(encoding="utf-8-sig")  # an editor's BOM is not TOML
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_layer_file(path: Path, *, role: LayerRole) -> Layer:
    return load_layer_text(read_text_file(path), source=str(path), role=role)


#: Keys that would put a credential in a file; the message says where credentials go.
_CREDENTIAL_KEYS = frozenset(
    {"username", "user", "password", "token", "api_key", "apikey", "key", "secret"}
)


def _reject_credentials(sync: Any, source: str) -> None:
    if not isinstance(sync, dict):
        return
    found = sorted(_CREDENTIAL_KEYS.intersection(key.lower() for key in sync))
    server = sync.get("server")
    if not found and isinstance(server, str) and "@" in server.split("://")[-1].split("/")[0]:
        found = ["server (user information in the URL)"]
    if found:
        raise ConfigError(
            f"{source}: [sync] {found[0]}: credentials never go in a configuration file; use "
            "SPILLGUARD_USERNAME and SPILLGUARD_PASSWORD (or SPILLGUARD_API_KEY), "
            "~/.netrc or the system keyring"
        )


_RULE_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _custom_rule(name: str, value: Any, source: str) -> Rule:
    where = f"{source}: custom rule {name}"
    misplaced = schema.misplaced(name, "custom_rules")
    if misplaced is not None:
        raise ConfigError(f"{source}: [custom_rules]: unknown key {name!r}: {misplaced}")
    if not _RULE_NAME.fullmatch(name):
        raise ConfigError(f"{where}: a rule name is UPPER_SNAKE_CASE, like MY_TOKEN")
    spec = {"regexp": value} if isinstance(value, str) else value
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a regexp string or a table with regexp")
    schema.check_table(spec, schema.CUSTOM_RULE, where)
    if "regexp" not in spec:
        raise ConfigError(f"{where}: missing key 'regexp'")
    # Here: a commit hook in a repository without custom rules never needs the checks.
    from spillguard.detection.rulecheck import RuleValidationError, compile_custom

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


def compile_path_pattern(pattern: str, source: str) -> regex.Pattern[str]:
    """An ``allowlist_paths`` entry: a Java regexp, as the server app reads it."""
    from spillguard.detection.javaregex import JavaRegexError, compile_java  # where there are some

    try:
        return compile_java(pattern)
    except JavaRegexError as error:
        raise ConfigError(f"{source}: allowlist_paths entry {pattern!r}: {error}") from None
