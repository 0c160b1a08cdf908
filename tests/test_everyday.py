"""Small things that each cost a user a minute: one clear line, the right stream, the right code."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from spillguard.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    from testing.gitrepo import GitRepo


def test_version_goes_to_stdout() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "spillguard", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0
    assert completed.stdout.startswith("spillguard 0.2.0")
    assert completed.stderr == ""


def test_review_list_says_when_there_is_nothing(repo: GitRepo, capsys) -> None:
    assert main(["review", "list", "--repo", str(repo.path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"spillguard: no reviewed entries in {repo.path / '.spillguard-reviewed.toml'}\n"


def test_a_top_level_hook_key_points_to_its_table(repo: GitRepo, capsys) -> None:
    (repo.path / ".spillguard.toml").write_text('mode = "warn"\n')
    assert main(["scan", "--repo", str(repo.path)]) == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: {repo.path / '.spillguard.toml'}: unknown key 'mode' "
        "(it belongs in a table: [hook] mode = ...)\n"
    )


def test_a_configuration_file_that_is_a_directory_is_an_error(repo: GitRepo, capsys) -> None:
    (repo.path / ".spillguard.toml").mkdir()
    assert main(["scan", "--repo", str(repo.path)]) == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: {repo.path / '.spillguard.toml'}: not a regular file\n"
    )


def test_an_empty_output_name_is_refused(repo: GitRepo, capsys) -> None:
    assert main(["scan", "--repo", str(repo.path), "--output", ""]) == 2
    assert capsys.readouterr().err == (
        "spillguard: error: --output needs a file name ('-' for stdout)\n"
    )


def test_a_repository_without_commits_has_nothing_to_scan(
    repo: GitRepo, tmp_path: Path, capsys
) -> None:
    for every in ([], ["--all"]):  # every ref: the same note as HEAD
        assert main(["scan", "--repo", str(repo.path), *every]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[-1] == "nothing to scan: the repository has no commits yet"
    report = tmp_path / "report.sarif"
    argv = ["scan", "--repo", str(repo.path), "--format", "sarif", "--output", str(report)]
    assert main(argv) == 0  # CI still gets a report to upload
    assert json.loads(report.read_text())["runs"][0]["results"] == []
    assert "nothing to scan" in capsys.readouterr().err


def test_a_shallow_clone_is_scanned_with_a_note_that_history_is_missing(
    repo: GitRepo, tmp_path: Path, capsys
) -> None:
    for number in range(3):
        repo.write("notes.txt", f"version {number}\n")
        repo.commit(f"version {number}")
    shallow = tmp_path / "shallow"
    clone = ["git", "clone", "-q", "--depth", "1", repo.path.as_uri(), str(shallow)]
    subprocess.run(clone, check=True, capture_output=True)
    for where in (shallow, repo.path):
        assert main(["scan", "--repo", str(where), "--all"]) == 0
        out = capsys.readouterr().out
        noted = "note: a shallow clone: the commits before its oldest ones are missing" in out
        assert noted is (where == shallow), out
