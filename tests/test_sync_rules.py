"""The server's rule list and password settings in the cache's form (pure functions)."""

from __future__ import annotations

import pytest

from spillguard.core.errors import SyncError
from spillguard.sync.rules import parse_password_settings, parse_rules, rule_name

BUILTIN = frozenset({"AWS_CLIENT_ID", "GENERIC_PASSWORD"})
CUSTOM = {"name": "Team token", "regexp": "tt_[a-z0-9]{24}", "enabled": True}


@pytest.mark.parametrize(
    ("display", "name"),
    [
        ("Team token", "TEAM_TOKEN"),
        ("AWS_CLIENT_ID", "AWS_CLIENT_ID"),
        ("3rd-party key", "RULE_3RD_PARTY_KEY"),
    ],
)
def test_rule_names(display: str, name: str) -> None:
    assert rule_name(display) == name


@pytest.mark.parametrize("wrap", [lambda rules: rules, lambda rules: {"values": rules, "size": 1}])
def test_a_list_or_a_paged_envelope(wrap) -> None:
    synced = parse_rules(wrap([CUSTOM]), BUILTIN)
    assert [rule["name"] for rule in synced.rules] == ["TEAM_TOKEN"]
    assert synced.blocking_field is False


def test_no_custom_rule_leaves_the_blocking_field_unknown() -> None:
    synced = parse_rules([{"name": "AWS_CLIENT_ID", "hardcoded": True, "enabled": False}], BUILTIN)
    assert synced.rules == ({"name": "AWS_CLIENT_ID", "kind": "builtin", "enabled": False},)
    assert synced.blocking_field is None


@pytest.mark.parametrize(
    ("item", "notice"),
    [
        ({"id": 1}, "a server rule without a name was ignored"),
        ({"name": "No regexp", "hardcoded": False}, "server rule NO_REGEXP has no regexp"),
        ({"name": "Broad", "regexp": "[a-z]+"}, "custom rule BROAD: regexp is too broad"),
        ({"name": "Empty", "regexp": "x*"}, "custom rule EMPTY: regexp matches the empty string"),
    ],
)
def test_unusable_rules_are_left_out_with_a_notice(item: dict, notice: str) -> None:
    synced = parse_rules([item, CUSTOM], BUILTIN)
    assert [rule["name"] for rule in synced.rules] == ["TEAM_TOKEN"]
    assert any(notice in line for line in synced.notices), synced.notices


def test_a_built_in_rule_with_no_local_equivalent_is_kept_and_named() -> None:
    synced = parse_rules([{"name": "SERVER_ONLY", "hardcoded": True}, CUSTOM], BUILTIN)
    assert [rule["name"] for rule in synced.rules] == ["SERVER_ONLY", "TEAM_TOKEN"]
    assert any("1 server built-in rules have no local equivalent" in n for n in synced.notices)


def test_a_refused_custom_rule_is_kept_with_its_reason() -> None:
    synced = parse_rules([{"name": "Broad", "regexp": "[a-z]+", "enabled": False}], BUILTIN)
    assert [(r["name"], r["enabled"]) for r in synced.refused] == [("BROAD", False)]
    assert synced.refused[0]["reason"].startswith("regexp is too broad")


def test_an_answer_that_is_no_list_is_an_error() -> None:
    with pytest.raises(SyncError, match="rule list answer is not a list"):
        parse_rules("<html>", BUILTIN)


def test_password_settings_map_by_name_and_type() -> None:
    settings, notices = parse_password_settings(
        {"minLength": 6, "envReferences": "yes", "placeholders": True, "dictionary": []}
    )
    assert settings == {"min_length": 6, "placeholders": True}
    assert notices == [
        "note: generic-password settings with no local equivalent: envReferences, dictionary"
    ]


def test_flags_sent_as_text_are_read_as_flags() -> None:
    custom = {**CUSTOM, "hardcoded": "false", "enabled": "false", "blocking": "FALSE"}
    builtin = {"name": "AWS_CLIENT_ID", "hardcoded": "true", "enabled": "false"}
    synced = parse_rules([builtin, custom], BUILTIN)
    assert [(rule["name"], rule["enabled"], rule.get("blocking")) for rule in synced.rules] == [
        ("AWS_CLIENT_ID", False, None),
        ("TEAM_TOKEN", False, False),
    ]
