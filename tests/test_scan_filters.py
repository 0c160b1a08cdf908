"""``scan --rule`` and ``--include-reviewed``: the server's export filters on a local report."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spillguard.cli import main
from testing.tokens import expand

if TYPE_CHECKING:
    import pytest

    from testing.gitrepo import GitRepo

GITHUB = expand("ghp_{rand:Aa0:30}{crc32}", "filters-github")
REVIEWED = expand("ghp_{rand:Aa0:30}{crc32}", "filters-reviewed")
AWS = expand("AKIA{rand:A2:16}", "filters-aws")
RSA_KEY = expand("-----BEGIN " + "RSA PRIVATE KEY-----\nMIIE{rand:b64:60}\n", "filters-rsa")


def scan_json(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, list[dict]]:
    code = main(["scan", "--files", "app.env", "keys.pem", "--format", "json", *flags])
    return code, json.loads(capsys.readouterr().out)["findings"]


def setup(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo.path)
    repo.write("app.env", f"GITHUB_TOKEN={GITHUB}\nOLD_TOKEN={REVIEWED}\nid = {AWS}\n")
    repo.write("keys.pem", RSA_KEY)


def test_rule_keeps_only_the_named_rules_findings(repo, capsys, monkeypatch) -> None:
    setup(repo, monkeypatch)
    code, findings = scan_json(capsys, "--rule", "GITHUB_PAT,AWS_CLIENT_ID")
    assert code == 1
    assert sorted({finding["rule"] for finding in findings}) == ["AWS_CLIENT_ID", "GITHUB_PAT"]
    code, findings = scan_json(capsys, "--rule", "RSA")  # the server's older name
    assert [finding["rule"] for finding in findings] == ["RSA_PRIVATE_KEY"]


def test_an_unknown_rule_is_one_clear_line(repo, capsys, monkeypatch) -> None:
    setup(repo, monkeypatch)
    assert main(["scan", "--files", "app.env", "--rule", "NO_SUCH_RULE"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "scan --rule NO_SUCH_RULE: no rule of that name" in err


def test_include_reviewed_reports_reviewed_findings_flagged_never_blocking(
    repo, capsys, monkeypatch
) -> None:
    setup(repo, monkeypatch)
    assert main(["review", "add", REVIEWED]) == 0
    capsys.readouterr()
    _, findings = scan_json(capsys, "--rule", "GITHUB_PAT")
    assert [finding["line"] for finding in findings] == [1]
    code, findings = scan_json(capsys, "--rule", "GITHUB_PAT", "--include-reviewed")
    assert code == 1
    flagged = {finding["line"]: finding for finding in findings}
    assert flagged.keys() == {1, 2}
    assert (flagged[2]["reviewed"], flagged[2]["blocking"]) == (True, False)
    assert "reviewed" not in flagged[1]
    repo.write("app.env", f"OLD_TOKEN={REVIEWED}\n")
    assert main(["scan", "--files", "app.env", "--include-reviewed"]) == 0
    assert "reviewed" in capsys.readouterr().out
