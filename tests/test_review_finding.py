"""``review add --at`` / ``--fingerprint`` / a secret value, and the command a report prints.

Real repositories and real ``git commit`` runs through the installed hook: a finding
is reviewed from what its report shows, and the next commit passes.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spillguard.cli import main
from spillguard.core.values import replace
from testing.gitrepo import GitRepo
from testing.tokens import expand

PASSWORD = expand("{rand:Aa0:14}", "review-finding")
AWS_KEY = expand("AKIA{rand:A2:16}", "review-finding")


def run(*argv: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )


def spillguard(*argv: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "-m", "spillguard", *argv, cwd=cwd, stdin=stdin)


@pytest.fixture
def hooked(repo: GitRepo) -> GitRepo:
    repo.write("README", "hello\n")
    repo.commit("first")
    assert spillguard("install", cwd=repo.path).returncode == 0
    return repo


def printed_commands(report: str) -> list[str]:
    return re.findall(r"not a secret\? (spillguard review add .*)", report)


def test_a_blocked_commit_passes_after_the_printed_command(hooked: GitRepo) -> None:
    hooked.write("settings.py", f'db_password = "{PASSWORD}"\nkey = "{AWS_KEY}"\n')
    hooked.git("add", "-A")
    blocked = run("git", "commit", "-q", "-m", "settings", cwd=hooked.path)
    assert blocked.returncode == 1
    assert PASSWORD not in blocked.stderr
    assert AWS_KEY not in blocked.stderr
    assert blocked.stderr.splitlines()[:4] == [
        (
            "settings.py:1:16  GENERIC_PASSWORD  blocking  A password or pre-shared key (psk)"
            " assigned a literal value"
        ),
        '    db_password = "********"',
        "                   ^^^^^^^^",
        (
            "    not a secret? spillguard review add --at settings.py:1"
            " && git add :/.spillguard-reviewed.toml"
        ),
    ]
    commands = printed_commands(blocked.stderr)
    assert len(commands) == 2
    for command in commands:  # as the user would paste them, from a subdirectory even
        (hooked.path / "sub").mkdir(exist_ok=True)
        reviewed = run(
            "sh",
            "-c",
            command.replace("spillguard ", f"{sys.executable} -m spillguard ", 1),
            cwd=hooked.path / "sub",
        )
        assert reviewed.returncode == 0, reviewed.stderr
        assert PASSWORD not in reviewed.stderr
    committed = run("git", "commit", "-q", "-m", "settings", cwd=hooked.path)
    assert committed.returncode == 0, committed.stderr
    stored = (hooked.path / ".spillguard-reviewed.toml").read_text()
    assert PASSWORD not in stored
    assert "rule =" not in stored  # reviewed for every rule: none finds it again


def test_the_password_itself_reviews_a_generic_finding(hooked: GitRepo) -> None:
    hooked.write("db.py", f'db_password = "{PASSWORD}"\n')
    hooked.git("add", "-A")
    added = spillguard("review", "add", "-", cwd=hooked.path, stdin=PASSWORD + "\n")
    assert added.returncode == 0
    assert added.stderr.endswith(
        "stage it for the commit hook: git add :/.spillguard-reviewed.toml\n"
    )
    hooked.git("add", "-A")
    assert run("git", "commit", "-q", "-m", "db", cwd=hooked.path).returncode == 0
    # in any other form of assignment too
    hooked.write("config.yml", f"password: {PASSWORD}\n")
    assert spillguard("scan", "--files", "config.yml", cwd=hooked.path).returncode == 0


def test_a_commit_location_and_a_fingerprint_from_a_report(repo: GitRepo, capsys) -> None:
    repo.write("a.env", f"AWS_ID={AWS_KEY}\n")
    first = repo.commit("key")
    repo.write("b.py", f'password = "{PASSWORD}"\n')
    repo.commit("password")
    assert main(["scan", "--repo", str(repo.path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    password = next(f for f in report["findings"] if f["rule"] == "GENERIC_PASSWORD")
    at = f"{first[:10]}:a.env:1"
    assert main(["review", "add", "--repo", str(repo.path), "--at", at]) == 0
    assert (
        f"reviewed the AWS_CLIENT_ID secret found at {at}: entry (every rule)"
        in capsys.readouterr().err
    )
    fingerprint = password["fingerprint"]
    assert main(["review", "add", "--repo", str(repo.path), "--fingerprint", fingerprint]) == 0
    capsys.readouterr()
    assert main(["scan", "--repo", str(repo.path)]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--at", "a.env"], "--at a.env: expected PATH:LINE or COMMIT:PATH:LINE"),
        (["--at", "a.env:0"], "--at a.env:0: expected PATH:LINE or COMMIT:PATH:LINE"),
        (
            ["--at", "a.env:7"],
            "--at a.env:7: no finding there (already reviewed, or the line moved?)",
        ),
        (["--fingerprint", "12ab"], "--fingerprint 12ab: expected 64 hexadecimal digits"),
        (["--fingerprint", "0" * 64], f"--fingerprint {'0' * 64}: no finding has it"),
        (
            ["x", "--at", "a.env:1"],
            "give one of TEXT (- for stdin), --at PATH:LINE or --fingerprint FP",
        ),
        ([], "give one of TEXT (- for stdin), --at PATH:LINE or --fingerprint FP"),
        (
            ["--at", "a.env:1", "--rule", "GENERIC_PASSWORD"],
            "--rule GENERIC_PASSWORD: the finding is one of AWS_CLIENT_ID",
        ),
    ],
)
def test_what_cannot_be_reviewed_is_one_clear_line(
    repo: GitRepo, capsys, argv: list[str], message: str
) -> None:
    repo.write("a.env", f"AWS_ID={AWS_KEY}\n")
    repo.git("add", "-A")
    assert main(["review", "add", "--repo", str(repo.path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"spillguard: error: {message}")
    assert err.count("\n") == 1
    assert not (repo.path / ".spillguard-reviewed.toml").exists()


def test_at_reads_the_staged_line_not_the_working_tree(
    repo: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staged version counts, not the working tree's: the line is the index's."""
    repo.write("a.env", f"\nAWS_ID={AWS_KEY}\n")
    repo.git("add", "-A")
    repo.write("a.env", "clean now\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.chdir(repo.path)
    assert main(["review", "add", "--at", "a.env:2"]) == 0
    assert "the AWS_CLIENT_ID secret found at a.env:2: entry (every rule)" in (
        capsys.readouterr().err
    )
    assert (repo.path / ".spillguard-reviewed.toml").exists()


#: Lines each found by a provider's rule first and by generic rules after it: the
#: value is one, and one review of it clears the line (issue 30).
FOUND_BY_SEVERAL = {
    "AWS_SECRET_ACCESS_KEY": 'AWS_SECRET_ACCESS_KEY = "{rand:Aa0:40}"',
    "SLACK_BOT_TOKEN": 'SLACK_TOKEN = "xoxb-{rand:0:11}-{rand:0:13}-{rand:Aa0:24}"',
    "GITLAB_PAT": 'gitlab_token = "glpat-{rand:Aa0:20}"',
    "STRIPE_SECRET_KEY": 'STRIPE_KEY = "sk_live_{rand:Aa0:24}"',
}


def test_one_review_clears_a_line_every_rule_finds(hooked: GitRepo) -> None:
    """Each printed command, run once, and the next commit passes: the value is
    reviewed for every rule, so no generic rule reports the line in a next round."""
    lines = [expand(template, rule) for rule, template in FOUND_BY_SEVERAL.items()]
    plist = expand("<key>CLIENT_SECRET</key>\t<string>{rand:Aa0_-:32}</string>", "plist")
    hooked.write("app.py", "\n".join(lines) + "\n")
    hooked.write("Info.plist", f"<dict>\n\t{plist}\n</dict>\n")
    hooked.git("add", "-A")
    blocked = run("git", "commit", "-q", "-m", "keys", cwd=hooked.path)
    assert blocked.returncode == 1
    assert [line.split()[1] for line in blocked.stderr.splitlines() if "  blocking  " in line] == [
        "GENERIC_PLIST_SECRET",
        *FOUND_BY_SEVERAL,
    ]
    for command in printed_commands(blocked.stderr):
        pasted = command.replace("spillguard ", f"{sys.executable} -m spillguard ", 1)
        reviewed = run("sh", "-c", pasted, cwd=hooked.path)
        assert reviewed.returncode == 0, reviewed.stderr
    committed = run("git", "commit", "-q", "-m", "keys", cwd=hooked.path)
    assert committed.returncode == 0, committed.stderr
    stored = (hooked.path / ".spillguard-reviewed.toml").read_text()
    assert stored.count("[[reviewed]]") == 5
    assert all(line.split('"')[1] not in stored for line in lines)


def test_a_rule_narrows_a_review_and_a_review_for_every_rule_replaces_it(
    repo: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo.path)
    repo.write("a.py", expand(FOUND_BY_SEVERAL["AWS_SECRET_ACCESS_KEY"], "narrow") + "\n")
    repo.git("add", "-A")
    at = ["review", "add", "--repo", str(repo.path), "--at", "a.py:1"]
    assert main([*at, "--rule", "AWS_SECRET_ACCESS_KEY"]) == 0
    assert "entry for rule AWS_SECRET_ACCESS_KEY" in capsys.readouterr().err
    repo.git("add", "-A")
    # bound to its rule, as the server's entries with a ruleName are: the next rule reports
    assert main(["hook", "pre-commit"]) == 1
    assert "GENERIC_API_KEY" in capsys.readouterr().err
    assert main(["review", "add", "--repo", str(repo.path), "--at", "a.py:1"]) == 0
    repo.git("add", "-A")
    assert main(["hook", "pre-commit"]) == 0
    stored = (repo.path / ".spillguard-reviewed.toml").read_text()
    assert stored.count("[[reviewed]]") == 1  # the entry for every rule took its place
    assert "rule =" not in stored


def test_every_rules_examples_clear_with_one_review_of_each_value_shown() -> None:
    """Every built-in rule's true-positive examples, judged by all rules: once the
    value of each finding is reviewed (as ``review add --at`` reviews it), what is
    still reported is only a distinct value the first report showed masked beside it,
    never the same value found again by a rule further down the list."""
    from spillguard.commands.review_target import secret_of
    from spillguard.configuration.rules import builtin_rules, builtin_table
    from spillguard.core.models import Fragment, ReviewedEntry, RuleSet
    from spillguard.detection.engine import Scanner
    from spillguard.detection.fingerprint import reviewed_digest

    rules = RuleSet(rules=builtin_rules(), reviewed_salt="salt")
    examples = [  # each in a folder of its own, which the rules' path patterns allow
        Fragment(
            path=f"{spec['name']}-{number}/{spec.get('example_path', 'example.txt')}",
            text=expand(template, f"{spec['name']}-{number}"),
        )
        for spec in builtin_table()
        for number, template in enumerate(spec.get("tp", ()))
    ]
    found = Scanner(rules).scan_batch(examples)
    assert {finding.path for finding in found} == {example.path for example in examples}
    entries = {ReviewedEntry(digest=reviewed_digest(secret_of(f), "salt")) for f in found}
    shown = {(finding.path, finding.line): finding for finding in found}
    left = Scanner(replace(rules, reviewed=tuple(entries))).scan_batch(examples)
    for finding in left:
        start = finding.line_offset_start + finding.secret_start
        end = finding.line_offset_start + finding.secret_end
        assert (start, end) in shown[finding.path, finding.line].hidden, finding
    assert len(examples) > 1500
    assert len(left) <= 3, left  # TENABLE_API_KEYS: its access key is a value of its own


def test_a_commit_the_server_rejected_is_named_as_gone_and_the_pusher_can_review_it(
    tmp_path: Path, capsys
) -> None:
    """The pusher's report names the rejected commit; on the server it is not kept, and
    review add says so (not "no finding there"); in the pusher's clone it reviews."""
    from testing.server import Server, install_hook

    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    server.work.commit("first")
    server.push("main")
    install_hook(server.bare.path)
    server.work.write("app.py", f'key = "{AWS_KEY}"\n')
    server.work.commit("key")
    code, output = server.push("main")
    assert code != 0
    (commit, where) = re.findall(r"blocking  ([0-9a-f]{10})  refs/heads/main  (\S+)", output)[0]
    at = f"{commit}:{where}"
    assert main(["review", "add", "--repo", str(server.bare.path), "--at", at]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"spillguard: error: --at {at}: this repository has no commit {commit}")
    assert "a push the server rejected is not kept" in err
    assert main(["review", "add", "--repo", str(server.work.path), "--at", at]) == 0
