"""``spillguard scan`` in a SHA-256 repository (git alone reads it) finds what it finds
in a SHA-1 repository with the same content, commits, merges and renames included."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


def history(path: Path, object_format: str) -> GitRepo:
    repo = GitRepo(path, object_format=object_format)
    repo.write("conf.py", "a = 1\n")
    repo.write("moved.py", "y = 2\n" * 20)
    repo.commit("base", date="2024-01-01T00:00:00Z")
    repo.git("tag", "v1")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.py", f"key = '{key('side')}'\n")
    repo.write("conf.py", "a = 'side'\n")
    repo.commit("side", date="2024-02-01T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.write("conf.py", "a = 'main'\n")
    repo.git("mv", "moved.py", "renamed.py")
    repo.write("renamed.py", "y = 2\n" * 20 + f"k = '{key('rename')}'\n")
    repo.write("blob.bin", b"\0\1" + key("binary").encode())
    (repo.path / "link").symlink_to("conf.py")
    repo.commit("main", date="2024-03-01T00:00:00Z")
    repo.git("merge", "-q", "side", check=False)  # conflict in conf.py
    repo.write("conf.py", f"a = 'both'\nkey = '{key('merge')}'\n")
    repo.commit("merge", date="2024-04-01T00:00:00Z")
    return repo


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, GitRepo]:
    root = tmp_path_factory.mktemp("formats")
    return history(root / "sha1", "sha1"), history(root / "sha256", "sha256")


def scan(
    repo: GitRepo, *args: str
) -> tuple[int, list[tuple[str, int, str, str | None]], list[str]]:
    """The exit code, the findings (path, line, rule, commit date) and what was skipped."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(repo.path)
        code = main(["scan", "--format", "json", "--output", "report.json", *args])
    report = json.loads((repo.path / "report.json").read_text())
    (repo.path / "report.json").unlink()
    findings = [
        (item["path"], item["line"], item["rule"], item["date"]) for item in report["findings"]
    ]
    return code, sorted(findings), sorted(skip["reason"] for skip in report["skipped"])


@pytest.mark.parametrize(
    "args",
    [(), ("v1..HEAD",), ("--all",), ("--branch", "side"), ("--since", "2024-03-01T00:00:00Z")],
)
def test_history_is_scanned_as_in_sha1(
    repos: tuple[GitRepo, GitRepo], args: tuple[str, ...]
) -> None:
    sha1, sha256 = repos
    assert scan(sha256, *args) == scan(sha1, *args)


def test_history_findings_name_each_commit_once(repos: tuple[GitRepo, GitRepo]) -> None:
    code, findings, skipped = scan(repos[1])
    assert code == 1
    assert [(path, line, date) for path, line, _, date in findings] == [
        ("blob.bin", 1, "2024-03-01T00:00:00Z"),  # a binary's printable runs are judged
        ("conf.py", 2, "2024-04-01T00:00:00Z"),  # the merge's own line only
        ("renamed.py", 21, "2024-03-01T00:00:00Z"),
        ("side.py", 1, "2024-02-01T00:00:00Z"),  # once, by the commit that added it
    ]
    assert skipped == []


def test_tree_is_scanned_as_in_sha1(repos: tuple[GitRepo, GitRepo]) -> None:
    sha1, sha256 = repos
    for rev in ("HEAD", "v1"):
        assert scan(sha256, "--tree", rev)[::2] == scan(sha1, "--tree", rev)[::2]


def test_bad_revisions_are_one_clear_line(repos: tuple[GitRepo, GitRepo], capsys) -> None:
    sha256 = str(repos[1].path)
    assert main(["scan", "--repo", sha256, "nope"]) == 3
    assert capsys.readouterr().err == "spillguard: error: unknown revision 'nope'\n"
    assert main(["scan", "--repo", sha256, "--branch", "gone"]) == 3
    assert capsys.readouterr().err == "spillguard: error: no branch named 'gone'\n"
    unborn = GitRepo(repos[1].path.parent / "unborn", object_format="sha256")
    assert main(["scan", "--repo", str(unborn.path)]) == 0
    assert "nothing to scan: the repository has no commits yet" in capsys.readouterr().out
