"""``spillguard review``: reviewed strings kept as salted digests, and what they hide."""

from __future__ import annotations

import io
import json
import stat
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.reviewed import REVIEWED_FILE
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

    from testing.gitrepo import GitRepo

AWS_KEY = expand("AKIA{rand:A2:16}", "review")
OTHER_KEY = expand("AKIA{rand:A2:16}", "review-other")
PASSWORD = expand("{rand:Aa0:14}", "review-password")


def review(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["review", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def scan_rules(repo: GitRepo, capsys) -> list[tuple[str, str]]:
    """(path, rule) of every finding in the committed tree."""
    repo.commit("snapshot")
    main(["scan", "--tree", "HEAD", "--repo", str(repo.path), "--format", "json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    return sorted((finding["path"], finding["rule"]) for finding in report["findings"])


@pytest.fixture
def leaky(repo: GitRepo) -> GitRepo:
    repo.write("a.env", f"ID={AWS_KEY}\n")
    repo.write("deep/b.txt", f"{AWS_KEY}\n{OTHER_KEY}\n")
    return repo


def test_reviewed_text_from_stdin_is_hidden_everywhere_and_never_stored(
    leaky: GitRepo, capsys, monkeypatch
) -> None:
    before = scan_rules(leaky, capsys)
    assert len(before) == 3
    code, _, err = review(
        capsys,
        "add",
        "-",
        "--repo",
        str(leaky.path),
        "--reason",
        "documented sample",
        stdin=AWS_KEY + "\n",
        monkeypatch=monkeypatch,
    )
    assert code == 0, err
    stored = (leaky.path / REVIEWED_FILE).read_text()
    assert AWS_KEY not in stored
    assert AWS_KEY not in err
    assert 'added_by = "Ada Tester <ada@example.com>"' in stored
    assert 'reason = "documented sample"' in stored
    assert scan_rules(leaky, capsys) == [("deep/b.txt", "AWS_CLIENT_ID")]  # only OTHER_KEY left
    code, _, _ = review(
        capsys, "remove", "-", "--repo", str(leaky.path), stdin=AWS_KEY, monkeypatch=monkeypatch
    )
    assert code == 0
    assert scan_rules(leaky, capsys) == before


def test_entry_bound_to_a_rule_hides_only_that_rules_findings(leaky: GitRepo, capsys) -> None:
    assert (
        review(capsys, "add", AWS_KEY, "--rule", "GENERIC_PASSWORD", "--repo", str(leaky.path))[0]
        == 0
    )
    assert len(scan_rules(leaky, capsys)) == 3
    assert (
        review(capsys, "add", AWS_KEY, "--rule", "AWS_CLIENT_ID", "--repo", str(leaky.path))[0] == 0
    )
    assert len(scan_rules(leaky, capsys)) == 1


def test_list_shows_digests_never_text(leaky: GitRepo, capsys) -> None:
    review(capsys, "add", AWS_KEY, "--rule", "AWS_CLIENT_ID", "--repo", str(leaky.path))
    review(capsys, "add", AWS_KEY, "--rule", "AWS_CLIENT_ID", "--repo", str(leaky.path))  # again
    code, out, _ = review(capsys, "list", "--format", "json", "--repo", str(leaky.path))
    assert code == 0
    (entry,) = json.loads(out)["reviewed"]  # adding it twice keeps one entry
    assert entry["rule"] == "AWS_CLIENT_ID"
    assert len(entry["digest"]) == 64
    assert entry["date"].count("-") == 2
    reviewed_file = leaky.path / REVIEWED_FILE
    # A hand-edited (or hostile) file: its text reaches the terminal escaped.
    text = reviewed_file.read_text().replace('reason = ""', 'reason = "a\\u001b[2Jb"')
    reviewed_file.write_text(text)
    code, out, _ = review(capsys, "list", "--repo", str(leaky.path))
    assert out.startswith(entry["digest"][:12] + "  AWS_CLIENT_ID  ")
    assert out.splitlines()[0].endswith("  a\\x1b[2Jb")  # repository text, made harmless
    assert AWS_KEY not in out


def test_remove_by_digest_prefix(leaky: GitRepo, capsys) -> None:
    review(capsys, "add", AWS_KEY, "--repo", str(leaky.path))
    _, out, _ = review(capsys, "list", "--format", "json", "--repo", str(leaky.path))
    digest = json.loads(out)["reviewed"][0]["digest"]
    assert review(capsys, "remove", "--digest", digest[:4], "--repo", str(leaky.path))[0] == 2
    assert review(capsys, "remove", "--digest", "0" * 12, "--repo", str(leaky.path))[0] == 2
    assert review(capsys, "remove", "--digest", digest[:10], "--repo", str(leaky.path))[0] == 0
    _, out, _ = review(capsys, "list", "--format", "json", "--repo", str(leaky.path))
    assert json.loads(out)["reviewed"] == []


def test_remove_without_a_rule_removes_the_entries_of_every_rule(leaky: GitRepo, capsys) -> None:
    """``review remove TEXT`` removes every entry for TEXT, those bound to a rule too;
    ``--rule`` removes that rule's alone."""
    repo = str(leaky.path)
    for rule in ("AWS_CLIENT_ID", "GENERIC_PASSWORD"):
        assert review(capsys, "add", AWS_KEY, "--rule", rule, "--repo", repo)[0] == 0
    code, _, err = review(capsys, "remove", AWS_KEY, "--rule", "GENERIC_PASSWORD", "--repo", repo)
    assert (code, err.split(" reviewed")[0]) == (0, "spillguard: 1")
    review(capsys, "add", AWS_KEY, "--rule", "GENERIC_PASSWORD", "--repo", repo)
    code, _, err = review(capsys, "remove", AWS_KEY, "--repo", repo)
    assert (code, err.split(" reviewed")[0]) == (0, "spillguard: 2")
    _, out, _ = review(capsys, "list", "--format", "json", "--repo", repo)
    assert json.loads(out)["reviewed"] == []


def test_removing_what_is_not_there_is_an_error(leaky: GitRepo, capsys) -> None:
    code, _, err = review(capsys, "remove", OTHER_KEY, "--repo", str(leaky.path))
    assert code == 2
    assert "no reviewed entry matches" in err
    assert not (leaky.path / REVIEWED_FILE).exists()


def test_reason_is_mandatory_when_required(leaky: GitRepo, capsys) -> None:
    leaky.write(".spillguard.toml", "require_review_reason = true\n")
    code, _, err = review(capsys, "add", AWS_KEY, "--repo", str(leaky.path))
    assert code == 2
    assert "a reason is required (require_review_reason in " in err
    assert not (leaky.path / REVIEWED_FILE).exists()
    code, _, _ = review(capsys, "add", AWS_KEY, "--repo", str(leaky.path), "--reason", "sample")
    assert code == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("add", "x", "--rule", "AWS_CLIENT_IDD"), "no such rule (did you mean AWS_CLIENT_ID?)"),
        (("add", "-"), "the reviewed text is empty"),
        (("remove",), "give the reviewed TEXT, or - to read it from stdin"),
        (("add", "a\nb"), "the reviewed text spans lines; a finding never does"),
        (("add", "x", "--reason", "a\udcffb"), "--reason must be one line of printable text"),
        (("add", "x", "--reason", "a\x1b[2Jb"), "--reason must be one line of printable text"),
    ],
)
def test_bad_review_commands(leaky: GitRepo, capsys, monkeypatch, argv, message) -> None:
    code, _, err = review(
        capsys, *argv, "--repo", str(leaky.path), stdin="", monkeypatch=monkeypatch
    )
    assert code == 2
    assert err.startswith("spillguard: error: ")
    assert err.count("\n") == 1
    assert message in err


def test_added_from_a_subdirectory_lands_at_the_root_atomically(leaky: GitRepo, capsys) -> None:
    code, _, _ = review(capsys, "add", AWS_KEY, "--repo", str(leaky.path / "deep"))
    assert code == 0
    path = leaky.path / REVIEWED_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in leaky.path.iterdir()) == [".git", REVIEWED_FILE, "a.env", "deep"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("version = 1\nsalt = 's'\n[[reviewed]]\ndigest = 'x'\nrul = 'A'\n", "did you mean 'rule'"),
        ("version = 2\nsalt = 's'\n", "format version 2 is not 1; upgrade spillguard"),
        ("version = 1\n", "missing key 'salt'"),
        (
            "version = 1\nsalt = 's'\n[[reviewed]]\nrule = 'A'\n",
            "reviewed[0]: missing key 'digest'",
        ),
        ("salt = 's'\nreviewed = [1]\n", "reviewed[0] must be a table"),
        ("salt = \n", "invalid TOML"),
    ],
)
def test_a_broken_reviewed_file_stops_scans_with_a_clear_error(
    leaky: GitRepo, capsys, content: str, message: str
) -> None:
    leaky.commit("leak")
    leaky.write(REVIEWED_FILE, content)
    code = main(["scan", "--tree", "HEAD", "--repo", str(leaky.path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert f"{leaky.path / REVIEWED_FILE}: " in err
    assert message in err


def test_pre_commit_uses_the_staged_reviewed_file(leaky: GitRepo, capsys, monkeypatch) -> None:
    leaky.commit("leak")
    review(capsys, "add", AWS_KEY, "--repo", str(leaky.path))
    leaky.write("c.env", f"KEY={AWS_KEY}\n")
    leaky.git("add", "c.env", REVIEWED_FILE)
    (leaky.path / REVIEWED_FILE).unlink()  # only the staged version counts
    monkeypatch.chdir(leaky.path)
    assert main(["hook", "pre-commit"]) == 0
    leaky.git("rm", "-q", "--cached", REVIEWED_FILE)
    assert main(["hook", "pre-commit"]) == 1


def test_review_in_a_missing_directory_is_a_usage_error(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    code, _, err = review(capsys, "add", "x", "--repo", str(missing))
    assert (code, err) == (2, f"spillguard: error: --repo {missing}: not a directory\n")


def test_the_reviewed_count_and_the_secret_beside_a_reviewed_string_with_include_reviewed(
    repo: GitRepo, capsys, monkeypatch
) -> None:
    """A value found by three rules, reviewed, is one finding hidden, whether the report
    shows it (``--include-reviewed``) or not; a secret on the line of a reviewed string
    is reported and blocks either way."""
    fixture = expand("{rand:Aa0:40}", "review-count")
    repo.write(
        "app.py",
        f'AWS_SECRET_ACCESS_KEY = "{fixture}"\n'
        f'AWS_SECRET_ACCESS_KEY = "{fixture}"; password = "{PASSWORD}"\n',
    )
    repo.commit("keys")
    code, _, _ = review(
        capsys, "add", "-", "--repo", str(repo.path), stdin=fixture, monkeypatch=monkeypatch
    )
    assert code == 0
    reports = []
    for extra in ([], ["--include-reviewed"]):
        argv = ["scan", "--tree", "HEAD", "--repo", str(repo.path), "--format", "json", *extra]
        assert main(argv) == 1
        reports.append(json.loads(capsys.readouterr().out))
    plain, including = reports
    assert plain["summary"]["silenced"]["reviewed"] == 2  # one a line, not one a rule
    assert including["summary"]["silenced"] == plain["summary"]["silenced"]
    assert [(f["line"], f["rule"], f["blocking"]) for f in plain["findings"]] == [
        (2, "GENERIC_PASSWORD", True)
    ]
    assert [(f["line"], f["rule"], f.get("reviewed", False)) for f in including["findings"]] == [
        (1, "AWS_SECRET_ACCESS_KEY", True),
        (2, "GENERIC_PASSWORD", False),
    ]
