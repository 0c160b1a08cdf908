"""Published checksums: a token that fails its provider's check is not reported by any rule."""

from __future__ import annotations

import base64

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.checksums import base62_crc32, fails_published_check, passes
from spillguard.detection.engine import Scanner
from testing.tokens import expand


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


def rules_on(scanner: Scanner, text: str) -> list[str]:
    return [finding.rule for finding in scanner.scan(Fragment(path="a.env", text=text))]


def test_base62_crc32_is_six_digits_of_the_crc() -> None:
    assert base62_crc32("") == "000000"  # CRC32 of nothing is 0
    assert len(base62_crc32("x" * 30)) == 6


@pytest.mark.parametrize(
    ("prefix", "check", "rule"),
    [
        ("ghp_", "github_crc32", "GITHUB_PAT"),
        ("gho_", "github_crc32", "GITHUB_OAUTH_TOKEN"),
        ("ghs_", "github_crc32", "GITHUB_APP_TOKEN"),
        ("npm_", "npm_crc32", "NPM_ACCESS_TOKEN"),
    ],
)
def test_a_token_is_reported_only_when_its_checksum_holds(
    scanner: Scanner, prefix: str, check: str, rule: str
) -> None:
    good = expand(prefix + "{rand:Aa0:30}{crc32}", prefix)
    assert passes(check, good)
    assert rules_on(scanner, f"TOKEN={good}") == [rule]
    # One character changed: the checksum fails, and no rule takes the line instead
    # (GENERIC_TOKEN would judge "GITHUB_TOKEN=..." by its name).
    body = good[len(prefix) :]
    bad = prefix + ("A" if body[0] != "A" else "B") + body[1:]
    assert not passes(check, bad)
    assert fails_published_check(f"x {bad} y")
    assert rules_on(scanner, f"GITHUB_TOKEN={bad}") == []
    assert rules_on(scanner, f"access_token: {bad}") == []


def test_githubs_documentation_token_fails_its_checksum(scanner: Scanner) -> None:
    documented = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    assert fails_published_check(documented)
    assert rules_on(scanner, f"GITHUB_TOKEN={documented}") == []


@pytest.mark.parametrize(
    ("pair", "reported"),
    [
        ("user:password", False),
        ("admin:admin", False),
        # the user's name as its password, random enough to pass every other filter
        (expand("{rand:Aa0:20}", "same") + ":" + expand("{rand:Aa0:20}", "same"), False),
        ("<user>:<pass>", False),
        (expand("deploy:{rand:Aa0:20}", "basic"), True),
    ],
)
def test_a_basic_header_of_a_placeholder_pair_is_a_sample(
    scanner: Scanner, pair: str, *, reported: bool
) -> None:
    encoded = base64.b64encode(pair.encode()).decode()
    found = rules_on(scanner, f"Authorization: Basic {encoded}")
    assert found == (["BASIC_AUTH_HEADER"] if reported else [])
