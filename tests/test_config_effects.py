"""What each key does to a real scan: one table, one throwaway repository per row."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

AWS = expand("AKIA{rand:A2:16}", "effects")
ITK = expand("itk_{rand:Aa0:32}", "effects")
PASSWORD = expand('password = "{rand:Aa0:14}"', "effects")
SHORT_PASSWORD = expand('password = "{rand:Aa0:6}"', "effects-short")
FILES = {
    "app/settings.py": f"aws = '{AWS}'\n{PASSWORD}\n",
    "app/token.txt": f"token {ITK}\n",
    "tests/fixtures/keys.txt": f"{AWS}\n",
    "app/env.py": f'password = "${{DB_PASSWORD}}"\npassword = "changeme"\n{SHORT_PASSWORD}\n',
    # a binary of 51 bytes: its printable runs are searched up to max_file_size
    "app/blob.bin": b"\0" + b"." * 30 + AWS.encode(),
}
CUSTOM_ITK = "[custom_rules]\nINTERNAL_TOKEN = 'itk_[A-Za-z0-9]{32}'\n"

CASES = {
    "defaults": (
        "",
        "",
        ["AWS_CLIENT_ID"] * 3 + ["GENERIC_PASSWORD"] * 2,
    ),
    "disabled_rules": ("disabled_rules = ['AWS_CLIENT_ID']\n", "", ["GENERIC_PASSWORD"] * 2),
    "rules re-enables": (
        "rules = ['AWS_CLIENT_ID']\n",
        "disabled_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n",
        ["AWS_CLIENT_ID"] * 3,
    ),
    "inherit_builtin_rules": (
        "inherit_builtin_rules = false\nrules = ['GENERIC_PASSWORD']\n",
        "",
        ["GENERIC_PASSWORD"] * 2,
    ),
    "allowlist_paths": (
        "allowlist_paths = ['tests/fixtures/.*']\ndisabled_rules = ['GENERIC_PASSWORD']\n",
        "",
        ["AWS_CLIENT_ID"] * 2,
    ),
    "custom rule short form": (
        CUSTOM_ITK + "\n",
        "disabled_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n",
        ["INTERNAL_TOKEN"],
    ),
    "custom rule disabled": (
        "[custom_rules]\nINTERNAL_TOKEN = { regexp = 'itk_[A-Za-z0-9]{32}', enabled = false }\n",
        "disabled_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n",
        [],
    ),
    "global custom rule": ("", "disabled_rules = ['AWS_CLIENT_ID']\n" + CUSTOM_ITK, None),
    "inherit_custom_rules": (
        "inherit_custom_rules = false\ndisabled_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n",
        CUSTOM_ITK,
        [],
    ),
    "placeholders and env references off": (
        (
            "disabled_rules = ['AWS_CLIENT_ID']\n"
            "[generic_password]\nplaceholders = false\nenv_references = false\n"
        ),
        "",
        ["GENERIC_PASSWORD"] * 4,
    ),
    "min_length": (
        "disabled_rules = ['AWS_CLIENT_ID']\n[generic_password]\nmin_length = 7\n",
        "",
        ["GENERIC_PASSWORD"],
    ),
    # text of any size is judged; the binary over the limit is not searched
    # (in your own file: a repository's may not set it)
    "max_file_size": ("", "max_file_size = 40\n", ["AWS_CLIENT_ID"] * 2 + ["GENERIC_PASSWORD"] * 2),
}


def scan(repo: GitRepo, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["scan", "--tree", "HEAD", "--repo", str(repo.path), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_key_changes_what_a_scan_reports(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    repository, own, expected = CASES[case]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if own:
        (tmp_path / "xdg" / "spillguard").mkdir(parents=True)
        (tmp_path / "xdg" / "spillguard" / "config.toml").write_text(own)
    repo = GitRepo(tmp_path / "repo")
    for path, content in FILES.items():
        repo.write(path, content)
    repo.write(".spillguard.toml", repository)
    repo.commit("files")
    _, report = scan(repo, capsys)
    rules = sorted(finding["rule"] for finding in report["findings"])
    if expected is None:  # the user's custom rule applies in every repository
        assert "INTERNAL_TOKEN" in rules
        return
    assert rules == sorted(expected)


@pytest.fixture
def leaky(repo: GitRepo) -> GitRepo:
    repo.write("app/token.txt", f"token {ITK}\n")
    repo.write("tests/fixtures/keys.txt", f"{AWS}\n")
    return repo


def test_non_blocking_custom_rule_only_warns(leaky: GitRepo, capsys) -> None:
    leaky.write(
        ".spillguard.toml",
        "allowlist_paths = ['tests/.*']\n"
        "[custom_rules]\nINTERNAL_TOKEN = { regexp = 'itk_[A-Za-z0-9]{32}', blocking = false }\n",
    )
    leaky.commit("warn")
    code, report = scan(leaky, capsys)
    assert code == 0
    ((rule, blocking),) = [(f["rule"], f["blocking"]) for f in report["findings"]]
    assert (rule, blocking) == ("INTERNAL_TOKEN", False)
    _, report = scan(leaky, capsys, "--include-allowlisted")  # the flags layer
    assert sorted(f["rule"] for f in report["findings"]) == ["AWS_CLIENT_ID", "INTERNAL_TOKEN"]


def test_hook_mode_warn_accepts_the_commit(leaky: GitRepo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(leaky.path)
    leaky.git("add", "-A")
    assert main(["hook", "pre-commit"]) == 1
    leaky.write(".spillguard.toml", "[hook]\nmode = 'warn'\n")
    leaky.git("add", "-A")
    assert main(["hook", "pre-commit"]) == 0
    assert "warn mode" in capsys.readouterr().err
    own = leaky.path.parent / "xdg" / "spillguard" / "config.toml"
    own.parent.mkdir(parents=True)
    own.write_text("locked_rules = ['AWS_CLIENT_ID']\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(own.parent.parent))
    assert main(["hook", "pre-commit"]) == 1  # a locked rule still blocks


def test_include_plaintext_in_exports_governs_csv(leaky: GitRepo, capsys, tmp_path: Path) -> None:
    """Your own file's setting, never a repository's: a cloned repository must not make
    ``scan --format csv`` print every secret in clear."""
    leaky.commit("leak")
    main(["scan", "--tree", "HEAD", "--repo", str(leaky.path), "--format", "csv"])
    assert AWS not in capsys.readouterr().out
    leaky.write(".spillguard.toml", "include_plaintext_in_exports = true\n")
    leaky.commit("plaintext exports")
    main(["scan", "--tree", "HEAD", "--repo", str(leaky.path), "--format", "csv"])
    shown = capsys.readouterr()
    assert AWS not in shown.out
    assert "include_plaintext_in_exports is ignored in a repository's file" in shown.err
    own = tmp_path / "own.toml"
    own.write_text("include_plaintext_in_exports = true\n")
    argv = ["scan", "--tree", "HEAD", "--repo", str(leaky.path), "--config", str(own)]
    main([*argv, "--format", "csv"])
    assert AWS in capsys.readouterr().out


def test_a_repository_allowlist_never_spares_a_locked_rule(
    leaky: GitRepo, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "xdg" / "spillguard" / "config.toml"
    own.parent.mkdir(parents=True)
    own.write_text("locked_rules = ['AWS_CLIENT_ID']\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    leaky.write(".spillguard.toml", "allowlist_paths = ['.*']\n" + CUSTOM_ITK)
    leaky.commit("allowlist everything")
    code, report = scan(leaky, capsys)
    assert code == 1
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [
        ("tests/fixtures/keys.txt", "AWS_CLIENT_ID")
    ]
    _, report = scan(leaky, capsys, "--include-allowlisted")
    flagged = {f["rule"]: f.get("allowlisted", False) for f in report["findings"]}
    assert flagged == {"AWS_CLIENT_ID": False, "INTERNAL_TOKEN": True}
    own.write_text("locked_rules = ['AWS_CLIENT_ID']\nallowlist_paths = ['tests/.*']\n")
    code, report = scan(leaky, capsys)  # the user's own allowlist spares even locked rules
    assert (code, report["findings"]) == (0, [])


def test_max_rule_timeout_is_the_budget_of_one_rule_on_one_line(
    repo: GitRepo, capsys, tmp_path: Path
) -> None:
    # Backtracks exponentially on a long run of "Ab": far beyond any budget. Its
    # \p{..} classes keep it from the load-time probes, which would refuse it (see
    # test_rulecheck).
    repo.write(".spillguard.toml", "[custom_rules]\nSLOW_RULE = '((?:\\p{Lu}\\p{Ll})+)+$'\n")
    repo.write("slow.txt", "Ab" * 2000 + "!\n")
    repo.commit("slow")
    own = tmp_path / "own.toml"  # your own file: a repository's may not set the budget
    own.write_text("max_rule_timeout = 0.05\n")
    code, report = scan(repo, capsys, "--config", str(own))
    assert code == 3  # the scan could not complete: said, never silent
    assert [error["rule"] for error in report["errors"]] == ["SLOW_RULE"]
    assert "time budget of 0.05 s" in report["errors"][0]["message"]


def test_the_generic_password_filters_are_that_rules_alone(repo: GitRepo, capsys) -> None:
    """``[generic_password] min_length = 40`` spares a 14-character password, never the
    16-character password of a connection URI: POSTGRES_CONNECTION_URI drops
    references and placeholders as GENERIC_PASSWORD does, but the file's filters are
    GENERIC_PASSWORD's alone."""
    uri = expand("DATABASE_URL=postgres://app:{rand:Aa0:16}@db.internal:5432/app", "filters")
    repo.write(".spillguard.toml", "[generic_password]\nmin_length = 40\n")
    repo.write("app/settings.py", f"{PASSWORD}\n{uri}\n")
    repo.commit("files")
    _, report = scan(repo, capsys)
    assert [finding["rule"] for finding in report["findings"]] == ["POSTGRES_CONNECTION_URI"]
