"""After a sync the laptop judges as the server will: its rule set, its names, its reviewed lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.rules import builtin_rules
from spillguard.configuration.rules.server_names import SERVER_BUILTINS
from testing.fake_server import FakeApp
from testing.tokens import expand

if TYPE_CHECKING:
    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "fidelity-password")
GITHUB = expand("ghp_{rand:Aa0:30}{crc32}", "fidelity-github")
RSA_HEADER = "-----BEGIN " + "RSA PRIVATE KEY-----"
RSA_KEY = expand(RSA_HEADER + "\nMIIE{rand:b64:60}\n{rand:b64:64}\n", "fidelity-rsa")
# The server's own list, as an older release line names its rules: three enabled.
SERVER_RULES = [
    {"id": "1", "name": "AWS_CLIENT_ID", "hardcoded": True, "enabled": True},
    {"id": "2", "name": "RSA", "hardcoded": True, "enabled": True},
    {"id": "3", "name": "GENERIC_PASSWORD", "hardcoded": True, "enabled": True},
    {"id": "4", "name": "SSH", "hardcoded": True, "enabled": False},
    {"id": "5", "name": "PAYROLL_EXPORT", "hardcoded": True, "enabled": True},
    {"id": "6", "name": "Too broad", "regexp": "[a-z]+", "hardcoded": False, "enabled": True},
]
SYNC = ["sync", "--server", "{url}", "--project", "PRJ", "--repo", "app"]


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(password=PASSWORD, rules=[dict(rule) for rule in SERVER_RULES])


def sync(url: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main([arg.format(url=url) for arg in SYNC]) == 0
    return capsys.readouterr().err


def rules_json(capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["rules", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def scan(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, str, str]:
    code = main(["scan", "--files", *paths])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_mapped_local_rule_exists() -> None:
    names = {rule.name for rule in builtin_rules()}
    assert {local for mapped in SERVER_BUILTINS.values() for local in mapped} <= names
    assert {"RSA", "SSH", "AWS_MWS_KEY", "SSH_PRIVATE_KEY"} <= SERVER_BUILTINS.keys()


def test_the_synced_rule_set_is_the_servers(work, app, url, capsys) -> None:
    sync(url, capsys)
    report = rules_json(capsys)
    enabled = sorted(r["name"] for r in report["rules"] if r["enabled"] and r["kind"] == "builtin")
    assert enabled == ["AWS_CLIENT_ID", "GENERIC_PASSWORD", "RSA_PRIVATE_KEY"]
    rules = {rule["name"]: rule for rule in report["rules"]}
    assert (
        rules["RSA_PRIVATE_KEY"]["server_rule"],
        rules["RSA_PRIVATE_KEY"]["server_enabled"],
    ) == (
        "RSA",
        True,
    )
    assert (rules["SSH_PRIVATE_KEY"]["enabled"], rules["SSH_PRIVATE_KEY"]["server_rule"]) == (
        False,
        "SSH",
    )
    assert rules["GITHUB_PAT"]["server_rule"] is None
    missing = {r["name"]: r["reason"] for r in report["server_rules_not_applied"]}
    assert missing.keys() == {"PAYROLL_EXPORT", "TOO_BROAD"}
    assert missing["PAYROLL_EXPORT"] == "no local equivalent"
    assert missing["TOO_BROAD"].startswith("regexp is too broad")

    work.write("keys.pem", RSA_KEY)
    work.write("ci.env", f"GITHUB_TOKEN={GITHUB}\n")
    code, out, _ = scan(capsys, "keys.pem", "ci.env")
    # The server has no GitHub rule: it accepts the token, and so does the laptop now.
    assert code == 1
    assert "RSA_PRIVATE_KEY" in out
    assert "GITHUB_PAT" not in out


def test_keep_local_rules_keeps_the_local_built_ins_on(work, app, url, capsys) -> None:
    sync(url, capsys)
    work.write("mine.toml", "[sync]\nkeep_local_rules = true\n")
    work.write("ci.env", f"GITHUB_TOKEN={GITHUB}\n")
    assert main(["scan", "--files", "ci.env", "--config", "mine.toml"]) == 1
    assert "GITHUB_PAT" in capsys.readouterr().out
    assert main(["scan", "--files", "ci.env"]) == 0


def test_rules_text_shows_the_server_state_and_what_is_not_applied(work, app, url, capsys) -> None:
    sync(url, capsys)
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("RSA_PRIVATE_KEY "))
    assert "server: RSA (enabled)" in line
    github = next(line for line in out.splitlines() if line.startswith("GITHUB_PAT "))
    assert "server: not listed" in github
    tail = out.split("server rules not applied here", 1)[1]
    assert "PAYROLL_EXPORT" in tail
    assert "TOO_BROAD" in tail


def test_what_cannot_be_reproduced_is_named_at_every_scan(work, app, url, capsys) -> None:
    sync(url, capsys)
    work.write("clean.txt", "nothing here\n")
    for _ in range(2):
        code, out, err = scan(capsys, "clean.txt")
        assert code == 0
        named = [line for line in (out + err).splitlines() if "PAYROLL_EXPORT" in line]
        assert len(named) == 1
        assert "TOO_BROAD" in named[0]
        assert "not applied here" in named[0]


def test_what_cannot_be_reproduced_is_named_by_the_commit_hook(
    work: GitRepo, app, url, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    work.commit("root")
    sync(url, capsys)
    assert main(["install", "pre-commit", "--repo", str(work.path)]) == 0
    work.write("notes.txt", "plain text\n")
    work.git("add", "notes.txt")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "notes"],
        cwd=work.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "PAYROLL_EXPORT" in done.stdout + done.stderr


def test_a_server_rule_name_in_a_rules_list_enables_its_local_rule(work, app, url, capsys) -> None:
    app.rules = [rule for rule in app.rules if rule["name"] != "RSA"]
    sync(url, capsys)
    work.write("keys.pem", RSA_KEY)
    assert scan(capsys, "keys.pem")[0] == 0
    work.write(".spillguard.toml", 'rules = ["RSA"]\n')
    code, out, err = scan(capsys, "keys.pem")
    assert code == 1
    assert "RSA_PRIVATE_KEY" in out
    assert "no rule named RSA" not in out + err


def test_a_line_reviewed_under_a_server_rule_name_is_reviewed_here(work, app, url, capsys) -> None:
    app.reviewed = [(RSA_HEADER, "RSA")]
    sync(url, capsys)
    work.write("keys.pem", RSA_KEY)
    code, out, err = scan(capsys, "keys.pem")
    assert code == 0, out
    assert "unknown here" not in out + err


def test_a_line_reviewed_under_an_unknown_rule_applies_by_its_text(work, app, url, capsys) -> None:
    app.reviewed = [(GITHUB, "Retired rule")]
    app.rules = [*app.rules, {"name": "GITHUB_PAT", "hardcoded": True, "enabled": True}]
    sync(url, capsys)
    work.write("ci.env", f"GITHUB_TOKEN={GITHUB}\n")
    code, out, err = scan(capsys, "ci.env")
    assert code == 0, out
    notice = [line for line in (out + err).splitlines() if "RETIRED_RULE" in line]
    assert len(notice) == 1
    assert "exact text" in notice[0]


def test_a_locked_rule_stays_on_whatever_the_server_lists(work, app, url, capsys) -> None:
    sync(url, capsys)
    work.write("admin.toml", 'locked_rules = ["GITHUB_PAT", "SSH"]\n')
    assert main(["rules", "--format", "json", "--config", "admin.toml"]) == 0
    rules = {rule["name"]: rule for rule in json.loads(capsys.readouterr().out)["rules"]}
    assert rules["GITHUB_PAT"]["enabled"]
    assert rules["SSH_PRIVATE_KEY"]["enabled"]
    assert not rules["DSA_PRIVATE_KEY"]["enabled"]


def token(seed: str) -> str:
    return expand("itk_{rand:Aa0:32}", f"fidelity-{seed}")


INTERNAL = {"id": "7", "name": "Internal token", "regexp": "itk_[A-Za-z0-9]{32}"}


def test_wider_exports_add_the_lines_reviewed_in_this_repository(work, app, url, capsys) -> None:
    app.rules = [{**INTERNAL, "hardcoded": False, "enabled": True}]
    here, project_wide, elsewhere = token("here"), token("project"), token("elsewhere")
    app.reviewed_elsewhere = [
        {"project": "PRJ", "repository": "app", "matchText": here, "ruleName": "Internal token"},
        {"project": "PRJ", "repository": "", "matchText": project_wide, "ruleName": ""},
        {"project": "PRJ", "repository": "other", "matchText": elsewhere, "ruleName": ""},
    ]
    out = main([arg.format(url=url) for arg in SYNC])
    assert out == 0
    assert "exports read: repository, project, global" in capsys.readouterr().out
    work.write("a.cfg", f"a = {here}\nb = {project_wide}\nc = {elsewhere}\n")
    assert main(["scan", "--files", "a.cfg", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [finding["line"] for finding in report["findings"]] == [3]


def test_a_wider_export_these_credentials_cannot_read_is_left_out(work, app, url, capsys) -> None:
    from testing.fake_server import Answer

    app.rules = [{**INTERNAL, "hardcoded": False, "enabled": True}]
    here = token("here")
    app.reviewed_elsewhere = [{"project": "PRJ", "repository": "app", "matchText": here}]
    app.then("/rest/security/latest/export/reviewed", Answer.error(403, "Forbidden"))
    assert main([arg.format(url=url) for arg in SYNC]) == 0
    out, err = capsys.readouterr()
    assert "exports read: repository, project" in out
    assert "the global reviewed-line export was not read: " in err
    assert "HTTP 403" in err
    work.write("a.cfg", f"a = {here}\n")
    assert main(["scan", "--files", "a.cfg"]) == 0


def test_a_wider_export_that_does_not_say_where_is_not_applied(work, app, url, capsys) -> None:
    app.rules = [{**INTERNAL, "hardcoded": False, "enabled": True}]
    anywhere = token("anywhere")
    app.wider_columns = ["matchText", "ruleName"]
    app.reviewed_elsewhere = [{"matchText": anywhere, "ruleName": "Internal token"}]
    assert main([arg.format(url=url) for arg in SYNC]) == 0
    err = capsys.readouterr().err
    assert "project reviewed-line export" in err
    assert "its rows do not name the project they were reviewed in; not applied" in err
    work.write("a.cfg", f"a = {anywhere}\n")
    assert main(["scan", "--files", "a.cfg"]) == 1


def test_the_wikis_globally_reviewed_lines_apply_to_its_space(work, app, url, capsys) -> None:
    app.variant = "wiki"
    app.rules = [{**INTERNAL, "enabled": True}]
    everywhere, other_space = token("everywhere"), token("other-space")
    app.reviewed_elsewhere = [
        {"space": "", "matchText": everywhere, "ruleName": "Internal token"},
        {"space": "OTHER", "matchText": other_space, "ruleName": "Internal token"},
    ]
    argv = ["sync", "--variant", "wiki", "--server", url, "--space", "DOCS"]
    assert main(argv) == 0
    capsys.readouterr()
    work.write("a.cfg", f"a = {everywhere}\nb = {other_space}\n")
    assert main(["scan", "--files", "a.cfg", "--format", "json"]) == 1
    assert [f["line"] for f in json.loads(capsys.readouterr().out)["findings"]] == [2]


def test_a_rule_of_the_servers_repository_file_is_named_until_defined_here(
    work, app, url, capsys
) -> None:
    app.repository_rules = ["AWS_CLIENT_ID", "BITCOIN_ADDRESS"]
    sync(url, capsys)
    work.write("clean.txt", "nothing here\n")
    for _ in range(2):
        _, out, err = scan(capsys, "clean.txt")
        named = [line for line in (out + err).splitlines() if "BITCOIN_ADDRESS" in line]
        assert len(named) == 1
        assert "repository configuration file" in named[0]
    work.write(".spillguard.toml", "[custom_rules]\nBITCOIN_ADDRESS = 'btc_[0-9a-f]{30}'\n")
    _, out, err = scan(capsys, "clean.txt")
    assert "BITCOIN_ADDRESS" not in out + err
