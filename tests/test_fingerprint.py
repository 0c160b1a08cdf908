"""Fingerprints name where a finding is, never what it is: nothing in a default report
lets anyone recover a masked secret by trying candidates, and the fingerprint of the
same finding is the same from run to run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import regex

from spillguard.cli import main
from spillguard.detection.fingerprint import finding_fingerprint, reviewed_digest
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


def test_digests_written_by_earlier_versions_still_match() -> None:
    """Pinned values: a reviewed entry is SHA-256 of salt, NUL, text, and a finding's
    fingerprint SHA-256 of its location's fields joined by NULs. Any other order
    would silently unreview every entry of every repository after an upgrade."""
    digest = "b99e1102ebfb638279ec36e2b9b868ae931eb6d39c002d1c49eeb779c9b1de6e"
    assert reviewed_digest("hunter2-staging", "9f3c2a71") == digest
    fingerprint = "b9ad4899fe03eb8e15d69089adeee62dccd4ba4f1b46f290d0ce31988773dc9f"
    located = {"path": "config/prod.env", "commit": "3f2a9c1d04", "line": 2, "column": 7}
    assert finding_fingerprint(rule="AWS_CLIENT_ID", **located) == fingerprint
