"""Configuration files to layers, and layers to one resolved Config: every key, every error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spillguard.configuration.config import Layer, load_layer_text
from spillguard.configuration.resolution import resolve
from spillguard.configuration.rules import builtin_rules
from spillguard.core.errors import ConfigError
from spillguard.detection.javaregex import translate

if TYPE_CHECKING:
    from spillguard.configuration.config import LayerRole

USER = "/home/ada/.config/spillguard/config.toml"
REPO = "/work/app/.spillguard.toml"


def layer(text: str, role: LayerRole = "repository", source: str = REPO) -> Layer:
    return load_layer_text(text, source=source, role=role)


def resolved(*layers: Layer):
    return resolve(builtin_rules(), layers)


def rules_of(config) -> dict[str, tuple[bool, bool, str]]:
    return {rule.name: (rule.enabled, rule.blocking, rule.source) for rule in config.ruleset.rules}


# --- bad input: one message naming the file and the key, line or rule ----------------

ERRORS = [
    ("rules = [\n  'A',\n  oops\n]\n", [REPO, "invalid TOML", "line 3", "column 3"]),
    ("disabled_rule = []\n", ["unknown key 'disabled_rule'", "did you mean 'disabled_rules'"]),
    ("[hook]\nmod = 'warn'\n", ["[hook]", "unknown key 'mod'", "did you mean 'mode'"]),
    ("[generic_password]\nmin_lenght = 3\n", ["did you mean 'min_length'"]),
    ("[sync]\nprojekt = 'P'\n", ["[sync]", "did you mean 'project'"]),
    ("max_file_size = 'big'\n", ["max_file_size must be a positive number of bytes, not str"]),
    ("max_file_size = 0\n", ["max_file_size must be a positive number of bytes, not 0"]),
    ("max_rule_timeout = true\n", ["max_rule_timeout must be a number of seconds", "not bool"]),
    ("max_rule_timeout = -1\n", ["max_rule_timeout must be"]),
    # regex's timeout overflows: every rule would "time out" at once and find nothing
    ("max_rule_timeout = 1e308\n", ["max_rule_timeout must be", "up to 3600", "not 1e+308"]),
    ("max_rule_timeout = inf\n", ["max_rule_timeout must be", "not inf"]),
    ("max_rule_timeout = nan\n", ["max_rule_timeout must be", "not nan"]),
    ("[sync]\ntimeout = nan\n", ["[sync]: timeout must be a number of seconds, not nan"]),
    ("inherit_builtin_rules = 'no'\n", ["inherit_builtin_rules must be true or false, not str"]),
    ("rules = 'AWS_CLIENT_ID'\n", ["rules must be a list of strings, not str"]),
    ("disabled_rules = [1]\n", ["disabled_rules must be a list of strings"]),
    ("[hook]\nmode = 'off'\n", ['mode must be "block" or "warn", not \'off\'']),
    ("[generic_password]\nmin_length = -1\n", ["min_length must be a whole number, 0 or more"]),
    ("deduplicate_exports = 1\n", ["deduplicate_exports must be true or false, not int"]),
    ("hook = 'warn'\n", ["hook must be a table, not str"]),
    ("allowlist_paths = ['tests/(']\n", ["allowlist_paths entry 'tests/('"]),
    ("[custom_rules]\nMY_RULE = 'ab('\n", ["custom rule MY_RULE: regexp"]),
    ("[custom_rules]\nMY_RULE = 'x*'\n", ["custom rule MY_RULE", "empty string"]),
    ("[custom_rules]\nMY_RULE = '[a-z]+'\n", ["custom rule MY_RULE", "too broad"]),
    ("[custom_rules]\nmy_rule = 'tok_[0-9]{20}'\n", ["custom rule my_rule", "UPPER_SNAKE_CASE"]),
    ("[custom_rules]\nMY_RULE = 5\n", ["custom rule MY_RULE must be a regexp string or a table"]),
    ("[custom_rules.MY_RULE]\nblocking = false\n", ["custom rule MY_RULE: missing key 'regexp'"]),
    (
        "[custom_rules.MY_RULE]\nregexp = 'tok_[0-9]{20}'\nblocked = false\n",
        ["custom rule MY_RULE: unknown key 'blocked'", "did you mean 'blocking'"],
    ),
    ("[custom_rules.MY_RULE]\nregexp = 'tok_[0-9]{20}'\nenabled = 'yes'\n", ["enabled must be"]),
    ("locked_rules = ['AWS_CLIENT_ID']\n", ["locked_rules is an administrator setting"]),
    ("repository_config = true\n", ["repository_config is an administrator setting"]),
    ("bypass_token = ''\n", ["bypass_token is an administrator setting"]),
    ("time_budget = 600\n", ["time_budget is an administrator setting"]),
    ("max_commits = 1\n", ["max_commits is an administrator setting"]),
    ("on_error = 'accept'\n", ["on_error is an administrator setting"]),
    ("[sync]\nserver = 'https://evil.example'\n", ["[sync] server belongs in your own"]),
    ("[sync]\nca_bundle = '/tmp/ca.pem'\n", ["[sync] ca_bundle belongs in your own"]),
]


@pytest.mark.parametrize(("text", "expected"), ERRORS)
def test_bad_repository_file_is_one_clear_error(text: str, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        resolved(layer(text))
    message = str(caught.value)
    assert message.startswith(REPO)
    assert "\n" not in message
    for part in expected:
        assert part in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on_error = 'maybe'\n", 'on_error must be "reject" or "accept", not \'maybe\''),
        ("time_budget = -1\n", "time_budget must be a number of seconds, not -1"),
        ("max_commits = 2.5\n", "max_commits must be a positive whole number, not float"),
        ("bypass_token = false\n", "bypass_token must be a string or a list of strings"),
        ("bypass_token = ['a', 1]\n", "bypass_token must be a string or a list of strings"),
        ("locked_rules = 'X'\n", "locked_rules must be a list of strings"),
        ("repository_config = 'yes'\n", "repository_config must be true or false"),
        ("[sync]\nvariant = 'gitlab'\n", 'variant must be "code-hosting"'),
        ("[sync]\ntimeout = 'slow'\n", "timeout must be a number of seconds"),
    ],
)
def test_bad_administrator_file_is_one_clear_error(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=None) as caught:
        layer(text, role="global", source=USER)
    assert expected in str(caught.value)


def test_custom_rule_with_a_builtin_name_is_an_error() -> None:
    with pytest.raises(ConfigError, match="custom rule AWS_CLIENT_ID has the name of a built-in"):
        resolved(layer("[custom_rules]\nAWS_CLIENT_ID = 'akid_[0-9]{20}'\n"))


# --- every key, resolved --------------------------------------------------------------


def test_defaults_without_any_file() -> None:
    config = resolved()
    # Every built-in rule is on and blocks, but for those that only inform (HTPASSWD_HASH).
    informing = {rule.name for rule in builtin_rules() if not rule.blocking}
    assert informing == {"HTPASSWD_HASH"}
    assert all(
        enabled and blocking == (name not in informing)
        for name, (enabled, blocking, _) in rules_of(config).items()
    )
    assert config.ruleset.rule_timeout == 20.0
    assert config.max_file_size == 10 * 1024 * 1024
    assert (config.hook_mode, config.on_error) == ("block", "reject")
    assert config.bypass_tokens == ("skip-secret-scan", "skip-soteri-security-check")
    assert (config.advertise_bypass_token, config.ruleset.allow_pragma) == (False, True)
    assert (config.time_budget, config.max_commits, config.repository_config) == (60, 10000, False)
    assert config.include_plaintext_in_exports is False
    assert config.deduplicate_exports is True
    assert config.require_review_reason is False
    assert config.layers == (("builtin", "builtin"),)


def test_every_setting_of_a_repository_file_and_its_source() -> None:
    own = "max_rule_timeout = 2.5\nmax_file_size = 1000\ninclude_plaintext_in_exports = true\n"
    config = resolved(
        layer(own, role="global", source=USER),
        layer(
            "deduplicate_exports = false\nrequire_review_reason = true\n"
            "[hook]\nmode = 'warn'\n"
            "[generic_password]\nenv_references = false\nplaceholders = false\nmin_length = 9\n"
            "[sync]\nproject = 'PRJ'\nrepo = 'app'\nvariant = 'code-hosting'\n"
        ),
    )
    assert config.ruleset.rule_timeout == 2.5
    assert config.max_file_size == 1000
    assert config.include_plaintext_in_exports is True
    assert config.deduplicate_exports is False
    assert config.require_review_reason is True
    assert config.hook_mode == "warn"
    filters = config.ruleset.password_filters
    assert (filters.env_references, filters.placeholders, filters.min_length) == (False, False, 9)
    assert config.sync["project"] == "PRJ"
    assert config.sync["timeout"] == 10  # a default of the table survives a partial table
    origins = dict(config.origins)
    assert origins["hook.mode"] == REPO
    assert origins["generic_password.min_length"] == REPO
    assert origins["max_file_size"] == USER
    assert config.notices == ()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("max_rule_timeout = 3600\n", "max_rule_timeout"),
        ("max_file_size = 1\n", "max_file_size"),
        ("max_file_size = 100_000_000_000\n", "max_file_size"),
        ("include_plaintext_in_exports = true\n", "include_plaintext_in_exports"),
    ],
)
def test_a_repository_file_cannot_raise_what_a_scan_costs_or_lower_what_it_protects(
    text: str, name: str
) -> None:
    """Honoured from your own or the administrator's file only: in a repository's file
    the key is ignored, named in a notice, and the value below it stands."""
    own = layer("max_rule_timeout = 5\nmax_file_size = 4096\n", role="global", source=USER)
    config = resolved(own, layer(text))
    assert (config.ruleset.rule_timeout, config.max_file_size) == (5.0, 4096)
    assert config.include_plaintext_in_exports is False
    notice = (
        f"{REPO}: {name} is ignored in a repository's file (set it in your own or the "
        "administrator's file)"
    )
    assert config.notices == (notice,)


def test_max_rule_timeout_zero_selects_twenty_seconds() -> None:
    zero = layer("max_rule_timeout = 0\n", role="global", source=USER)
    assert resolved(zero).ruleset.rule_timeout == 20.0


def test_administrator_policy_keys() -> None:
    config = resolved(
        layer(
            "repository_config = true\nlocked_rules = ['AWS_CLIENT_ID']\nbypass_token = ''\n"
            "time_budget = 5\nmax_commits = 3\non_error = 'accept'\n",
            role="global",
            source=USER,
        )
    )
    assert config.repository_config is True
    assert config.locked_rules == frozenset({"AWS_CLIENT_ID"})
    assert (config.bypass_tokens, config.time_budget, config.max_commits) == ((), 5, 3)
    assert config.on_error == "accept"


@pytest.mark.parametrize(
    ("setting", "tokens"),
    [
        ("'ops-override'", ("ops-override",)),
        (
            "['ops-override', 'skip-soteri-security-check']",
            ("ops-override", "skip-soteri-security-check"),
        ),
        ("[]", ()),
        ("['']", ()),
    ],
)
def test_bypass_tokens_are_a_string_or_a_list(setting: str, tokens: tuple[str, ...]) -> None:
    config = resolved(layer(f"bypass_token = {setting}\n", role="global", source=USER))
    assert config.bypass_tokens == tokens


def test_disabled_rules_and_rules_re_enable_across_layers() -> None:
    user = layer("disabled_rules = ['GENERIC_PASSWORD', 'AWS_CLIENT_ID']\n", "global", USER)
    repo = layer("rules = ['GENERIC_PASSWORD']\n")
    rules = rules_of(resolved(user, repo))
    assert rules["GENERIC_PASSWORD"] == (True, True, REPO)
    assert rules["AWS_CLIENT_ID"] == (False, True, USER)


def test_inherit_builtin_rules_false_keeps_only_listed_ones() -> None:
    repo = layer("inherit_builtin_rules = false\nrules = ['AWS_CLIENT_ID']\n")
    rules = rules_of(resolved(repo))
    assert rules["AWS_CLIENT_ID"][0] is True
    assert rules["AWS_SECRET_ACCESS_KEY"][0] is False
    assert rules["GENERIC_PASSWORD"][0] is False


def test_custom_rules_short_and_table_forms() -> None:
    repo = layer(
        "[custom_rules]\nSHORT_TOKEN = 'sht_[0-9a-f]{24}'\n"
        "WARN_TOKEN = { regexp = 'wrn_[0-9a-f]{24}', blocking = false }\n"
        "OFF_TOKEN = { regexp = 'off_[0-9a-f]{24}', enabled = false, description = 'd', "
        "keywords = ['OFF_'] }\n"
    )
    config = resolved(repo)
    rules = {rule.name: rule for rule in config.ruleset.rules}
    assert (rules["SHORT_TOKEN"].kind, rules["SHORT_TOKEN"].blocking) == ("custom", True)
    assert rules["WARN_TOKEN"].blocking is False
    assert rules["OFF_TOKEN"].enabled is False
    assert rules["OFF_TOKEN"].keywords == ("off_",)
    assert rules["SHORT_TOKEN"].pattern is not None
    assert rules["SHORT_TOKEN"].pattern.search("x = sht_" + "a1" * 12)


def test_repository_custom_rule_overrides_a_global_one_of_its_name() -> None:
    user = layer("[custom_rules]\nCORP_TOKEN = 'corp_[0-9]{20}'\n", "global", USER)
    repo = layer("[custom_rules]\nCORP_TOKEN = { regexp = 'corp_[a-z]{20}', blocking = false }\n")
    (rule,) = [r for r in resolved(user, repo).ruleset.rules if r.name == "CORP_TOKEN"]
    assert (rule.regexp, rule.blocking, rule.source) == ("corp_[a-z]{20}", False, REPO)


def test_inherit_custom_rules_false_drops_global_custom_rules() -> None:
    user = layer("[custom_rules]\nCORP_TOKEN = 'corp_[0-9]{20}'\n", "global", USER)
    repo = layer("inherit_custom_rules = false\n[custom_rules]\nOWN_TOKEN = 'own_[0-9]{20}'\n")
    names = {rule.name for rule in resolved(user, repo).ruleset.rules}
    assert "CORP_TOKEN" not in names
    assert "OWN_TOKEN" in names


def test_allowlist_paths_accumulate_across_layers() -> None:
    user = layer("allowlist_paths = ['^vendor/']\n", "global", USER)
    repo = layer("allowlist_paths = ['^tests/fixtures/']\n")
    patterns = [p.pattern for p in resolved(user, repo).ruleset.allowlist_paths]
    assert patterns == [translate("^vendor/"), translate("^tests/fixtures/")]


def test_unknown_rule_name_is_a_notice_with_the_nearest_name() -> None:
    config = resolved(layer("disabled_rules = ['GENERIC_PASWORD']\n"))
    assert any(
        "no rule named GENERIC_PASWORD (did you mean GENERIC_PASSWORD?)" in n
        for n in config.notices
    )
    assert rules_of(config)["GENERIC_PASSWORD"][0] is True


# --- locked rules: what no repository file may weaken -----------------------------------

ADMIN = "/srv/git/app.git/spillguard.toml"


def admin(text: str) -> Layer:
    return layer(text, role="global", source=ADMIN)


def test_locked_rule_cannot_be_disabled_by_a_repository() -> None:
    policy = admin("locked_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n")
    repo = layer(
        "disabled_rules = ['AWS_CLIENT_ID', 'AWS_SECRET_ACCESS_KEY']\n"
        "inherit_builtin_rules = false\n"
    )
    config = resolved(policy, repo)
    rules = rules_of(config)
    assert rules["AWS_CLIENT_ID"][:2] == (True, True)
    assert rules["GENERIC_PASSWORD"][:2] == (True, True)
    assert rules["AWS_SECRET_ACCESS_KEY"][0] is False
    assert any("rule AWS_CLIENT_ID is locked" in notice for notice in config.notices)


def test_locking_enables_a_rule_the_same_file_disabled() -> None:
    policy = admin("disabled_rules = ['AWS_CLIENT_ID']\nlocked_rules = ['AWS_CLIENT_ID']\n")
    assert rules_of(resolved(policy))["AWS_CLIENT_ID"][0] is True


def test_locked_custom_rule_cannot_be_replaced_or_dropped() -> None:
    policy = admin("locked_rules = ['CORP_TOKEN']\n[custom_rules]\nCORP_TOKEN = 'corp_[0-9]{20}'\n")
    repo = layer(
        "inherit_custom_rules = false\ndisabled_rules = ['CORP_TOKEN']\n"
        "[custom_rules]\nCORP_TOKEN = { regexp = 'never_[0-9]{99}', blocking = false }\n"
    )
    config = resolved(policy, repo)
    (rule,) = [r for r in config.ruleset.rules if r.name == "CORP_TOKEN"]
    assert (rule.regexp, rule.enabled, rule.blocking) == ("corp_[0-9]{20}", True, True)
    assert any("CORP_TOKEN is locked" in notice for notice in config.notices)


def test_locked_generic_password_keeps_its_filters() -> None:
    policy = admin("locked_rules = ['GENERIC_PASSWORD']\n")
    repo = layer("[generic_password]\nmin_length = 500\n")
    assert resolved(policy, repo).ruleset.password_filters.min_length == 4


def test_unknown_locked_rule_is_a_notice() -> None:
    config = resolved(admin("locked_rules = ['NO_SUCH_RULE']\n"))
    assert config.notices == ("locked rule NO_SUCH_RULE does not exist",)


def test_a_repository_sets_its_own_hook_mode_but_not_its_size_cap() -> None:
    repo = layer("max_file_size = 1\n[hook]\nmode = 'warn'\n")
    config = resolved(repo)
    assert (config.max_file_size, config.hook_mode) == (10 * 1024 * 1024, "warn")


def test_lock_on_a_rule_that_only_the_servers_layer_defines() -> None:
    policy = admin("locked_rules = ['CORP_TOKEN']\n")
    synced = layer(
        "[custom_rules]\nCORP_TOKEN = 'corp_[0-9]{20}'\n", role="server", source="server"
    )
    repo = layer("disabled_rules = ['CORP_TOKEN']\n")
    config = resolved(policy, synced, repo)
    assert rules_of(config)["CORP_TOKEN"] == (True, True, "server")
    assert not any("does not exist" in notice for notice in config.notices)


def test_a_repository_can_switch_off_its_own_custom_rule() -> None:
    repo = layer("disabled_rules = ['OWN_TOKEN']\n[custom_rules]\nOWN_TOKEN = 'own_[0-9]{20}'\n")
    assert rules_of(resolved(repo))["OWN_TOKEN"] == (False, True, REPO)


def test_repository_warn_mode_leaves_locked_rules_blocking() -> None:
    policy = admin("locked_rules = ['AWS_CLIENT_ID']\n")
    config = resolved(policy, layer("[hook]\nmode = 'warn'\n"))
    assert config.hook_mode == "block"
    rules = rules_of(config)
    assert rules["AWS_CLIENT_ID"][1] is True
    assert rules["AWS_SECRET_ACCESS_KEY"][1] is False
    assert f"{REPO}: hook mode warn applies to every rule but the locked ones" in config.notices
