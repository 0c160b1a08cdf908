"""GENERIC_PASSWORD's value filters, each switchable as the hosted variant's settings."""

from __future__ import annotations

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, PasswordFilters, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.detection.filters import is_env_reference, is_placeholder, password_value_rejected
from testing.recall.families import DOCUMENTED
from testing.tokens import expand

ENV_REFERENCES = [
    "${DB_PASSWORD}",
    "${DB_PASSWORD:-fallback}",
    '"${{ secrets.DB_PASSWORD }}"',
    "$DB_PASSWORD",
    "$(cat /run/secrets/db)",
    "%(db_password)s",
    "%s",
    "%DB_PASSWORD%",
    "@db.password@",
    "{{ .Values.db.password }}",
    "'{{ vault_db_password }}'",
    "{password}",
    '"{0}"',
    "#{dbPassword}",
    "<%= ENV['DB_PASSWORD'] %>",
    "os.environ['DB_PASSWORD']",
    'os.getenv("DB_PASSWORD")',
    'os.Getenv("DB_PASSWORD")',
    "process.env.DB_PASSWORD",
    'System.getenv("DB_PASSWORD")',
    'Environment.GetEnvironmentVariable("DB_PASSWORD")',
    "ENV['DB_PASSWORD']",
    'ENV.fetch("DB_PASSWORD")',
    'env::var("DB_PASSWORD")',
    'getenv("DB_PASSWORD")',
    "$ENV{DB_PASSWORD}",
    "env('DB_PASSWORD')",
    "!vault |",
    "self.password",
    "config.db.password",
    "get_password()",
    "request.form['password']",
    "new_password",
    "newPassword",
    "DB_PASSWORD",
    "https://vault.example.com/v1/secret/db",
    "/run/secrets/db_password",
    "config/certs/client-key.pem",
]
PLACEHOLDERS = [
    '""',
    "''",
    "<your password>",
    "'<password>'",
    "********",
    "xxxxxxxx",
    "[REDACTED]",
    "(hidden)",
    "changeme",
    "change-me",
    "password",
    "Password1",
    "passw0rd",
    "s3cr3t",
    "secret",
    "none",
    "null",
    "your_password_here",
    "my-password",
    "replace-me",
    "TODO",
    "...",
    "abc...",
    "fake-secret-for-tests",
    "dummy_token",
]
SECRETS = [
    expand("{rand:Aa0:16}", "f1"),
    expand('"{rand:b64:20}"', "f2"),
    expand("'{rand:Aa0:10}!#'", "f3"),
    expand("Tr0ub4dor&{rand:0:3}", "f4"),
]


@pytest.mark.parametrize("value", ENV_REFERENCES)
def test_env_and_code_references(value: str) -> None:
    assert is_env_reference(value)
    assert password_value_rejected(value, PasswordFilters())
    off = PasswordFilters(env_references=False, min_length=0)
    assert not password_value_rejected(value, off) or is_placeholder(value)


@pytest.mark.parametrize("value", PLACEHOLDERS)
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)
    assert password_value_rejected(value, PasswordFilters())


@pytest.mark.parametrize("value", SECRETS)
def test_real_looking_values_are_kept(value: str) -> None:
    assert not is_env_reference(value)
    assert not is_placeholder(value)
    assert not password_value_rejected(value, PasswordFilters())


def test_min_length() -> None:
    assert password_value_rejected("'Ab1'", PasswordFilters(min_length=4))
    assert not password_value_rejected("'Ab1!'", PasswordFilters(min_length=4))
    assert password_value_rejected("'Ab1!x9'", PasswordFilters(min_length=8))


def rules_found(text: str, settings: PasswordFilters) -> list[str]:
    scanner = Scanner(RuleSet(rules=builtin_rules(), password_filters=settings))
    return [finding.rule for finding in scanner.scan(Fragment(path="app.cfg", text=text))]


@pytest.mark.parametrize(
    ("line", "switch"),
    [
        ("password: ${DB_PASSWORD}", "env_references"),
        ("db_password = os.environ['DB_PASSWORD']", "env_references"),
        ('password = "changeme"', "placeholders"),
        ('password: "<your password>"', "placeholders"),
        ("password = '********'", "placeholders"),
    ],
)
def test_each_filter_can_be_switched_off(line: str, switch: str) -> None:
    assert rules_found(line, PasswordFilters()) == []
    assert rules_found(line, PasswordFilters(**{switch: False})) == ["GENERIC_PASSWORD"]


def test_generic_password_settings_come_from_the_configuration(tmp_path, capsys) -> None:
    from spillguard.cli import main

    (tmp_path / "app.cfg").write_text("password: ${DB_PASSWORD}\npassword = 'Ab!'\n")
    assert main(["scan", "--files", str(tmp_path)]) == 0
    config = tmp_path / "admin.toml"
    config.write_text("[generic_password]\nenv_references = false\nmin_length = 3\n")
    assert main(["scan", "--files", str(tmp_path / "app.cfg"), "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "app.cfg:1" in out
    assert "app.cfg:2" in out


@pytest.mark.parametrize(("path", "line"), DOCUMENTED)
def test_documented_example_credentials_are_not_reported(path: str, line: str) -> None:
    """AWS's EXAMPLE pair, the Azure storage emulator's key, the jwt.io and RFC 7519
    tokens, GitHub's docs token (a wrong checksum), vendors' sample passwords."""
    scanner = Scanner(RuleSet(rules=builtin_rules()))
    assert scanner.scan(Fragment(path=path, text=line)) == []
