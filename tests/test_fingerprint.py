"""Fingerprints name where a finding is, never what it is: nothing in a default report
lets anyone recover a masked secret by trying candidates, and the fingerprint of the
same finding is the same from run to run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import regex

from spillguard.cli import main
from spillguard.detection.fingerprint import finding_fingerprint
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

#: Short passwords, the kind a hash of the secret beside its masked form gives away.
SHORT = [expand('password = "{rand:Aa0:8}"', seed) for seed in ("one", "two")]
FORMATS = ("text", "json", "jsonl", "sarif", "csv")


def report(capsys: pytest.CaptureFixture[str], form: str, *argv: str) -> str:
    assert main(["scan", "--format", form, *argv]) == 1
    return capsys.readouterr().out


def findings(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    return list(json.loads(report(capsys, "json", *argv))["findings"])


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo(tmp_path_factory.mktemp("fingerprint") / "repo")
    repo.write("db.py", f"x = 1\n{SHORT[0]}\n")
    repo.commit("add")
    repo.write("db.py", f"x = 1\ny = 2\n{SHORT[0]}  # again\n")
    repo.write("other.py", f"{SHORT[0]}\n")
    repo.commit("again, and elsewhere")
    return repo


def test_every_hash_in_every_format_is_a_commit_id_or_a_location(
    history: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fingerprint is recomputed from the report's own location fields; no other
    hash is printed, so there is nothing to try candidate secrets against."""
    shown = findings(capsys, "--repo", str(history.path))
    assert len(shown) == 3
    locations = {
        finding_fingerprint(
            rule=str(each["rule"]),
            path=str(each["path"]),
            commit=str(each["commit"]),
            line=int(str(each["line"])),
            column=int(str(each["lineOffsetStart"])),
        )
        for each in shown
    }
    assert {each["fingerprint"] for each in shown} == locations
    commits = {str(each["commit"]) for each in shown}
    for form in FORMATS:
        output = report(capsys, form, "--repo", str(history.path))
        hashes = set(regex.findall(r"[0-9a-f]{32,}", output))
        assert hashes <= locations | commits, form
        assert not any(secret.split('"')[1] in output for secret in SHORT)


def test_the_same_finding_has_the_same_fingerprint_from_run_to_run(
    history: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    first = findings(capsys, "--repo", str(history.path))
    again = findings(capsys, "--repo", str(history.path))
    assert [each["fingerprint"] for each in first] == [each["fingerprint"] for each in again]
    sarif = json.loads(report(capsys, "sarif", "--repo", str(history.path)))
    partial = [
        r["partialFingerprints"]["spillguardFingerprint/v2"] for r in sarif["runs"][0]["results"]
    ]
    assert partial == [each["fingerprint"] for each in first]
    # each commit, line and path is its own finding, though the secret is one
    assert len({each["fingerprint"] for each in first}) == 3


def test_the_fingerprint_does_not_depend_on_the_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two different secrets at the same place: one fingerprint, so it tells nothing of either."""
    target = tmp_path / "db.py"
    seen = []
    for secret in SHORT:
        target.write_text(f"{secret}\n")
        (finding,) = findings(capsys, "--files", str(target))
        seen.append(finding["fingerprint"])
    assert seen[0] == seen[1]
