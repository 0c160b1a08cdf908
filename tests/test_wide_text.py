"""Text with a UTF-16 or UTF-32 byte order mark is scanned as text, not skipped as binary.

Such a file is full of NUL bytes yet any editor shows it as text: read as binary, a
secret in it would pass every scan and hook unseen. Line numbers and offsets are the
decoded text's, and the git diff-tree fast path reports what the libgit2 path does.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pygit2
import pytest

from spillguard.cli import main
from spillguard.core.models import Selection
from spillguard.sources import gitdiff
from spillguard.sources.commits import iter_walked_commit
from spillguard.sources.history import select_commits
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

KEY = expand("AKIA{rand:A2:16}", "wide-text")
#: (codec that writes the byte order mark, its name in a file name)
WIDE = [("utf-16", "utf16"), ("utf-16-be", "utf16be"), ("utf-32", "utf32"), ("utf-32-be", "u32be")]
MARKS = {"utf-16-be": "\ufeff", "utf-32-be": "\ufeff"}  # the -be codecs write no mark


def wide(text: str, codec: str) -> bytes:
    return (MARKS.get(codec, "") + text).encode(codec)


def scan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def located(report: dict) -> list[tuple[str, int, str]]:
    return sorted(
        (f["path"], f["line"], f["text"][f["lineOffsetStart"] : f["lineOffsetEnd"]])
        for f in report["findings"]
    )


@pytest.mark.parametrize(("codec", "name"), WIDE)
def test_files_scan_decodes_the_text_and_counts_its_lines(
    tmp_path: Path, capsys, codec: str, name: str
) -> None:
    (tmp_path / f"{name}.ini").write_bytes(wide(f"[aws]\nregion = eu\nkey = {KEY}\n", codec))
    code, report = scan_json(capsys, "scan", "--files", str(tmp_path), "--include-plaintext")
    assert code == 1
    (finding,) = report["findings"]
    assert (finding["line"], finding["lineOffsetStart"]) == (3, 6)
    assert finding["text"][finding["lineOffsetStart"] : finding["lineOffsetEnd"]] == KEY
    assert report["skipped"] == []


def test_tree_scan_decodes_wide_blobs(repo: GitRepo, capsys) -> None:
    for codec, name in WIDE:
        repo.write(f"{name}.txt", wide(f"x\nk={KEY}\n", codec))
    repo.commit("wide")
    code, report = scan_json(capsys, "scan", "--repo", str(repo.path), "--tree", "HEAD")
    assert code == 1
    assert [(f["path"], f["line"]) for f in report["findings"]] == sorted(
        (f"{name}.txt", 2) for _, name in WIDE
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """Wide files added, edited, re-encoded and merged, one commit per case."""
    repo = GitRepo(tmp_path_factory.mktemp("wide") / "repo")
    repo.write("a.txt", wide("one\ntwo\n", "utf-16"))
    repo.write("plain.txt", "one\ntwo\n")
    repo.commit("root")
    repo.write("a.txt", wide(f"one\ntwo\nkey = {KEY}\n", "utf-16"))  # line 3 added
    repo.write("b.txt", wide(f"b\n{KEY}\n", "utf-32-be"))
    repo.commit("edit a wide file, add another")
    repo.write("plain.txt", wide(f"one\ntwo\nthree = {KEY}\n", "utf-16-be"))  # re-encoded
    repo.commit("utf-8 to utf-16")
    repo.write("a.txt", f"one\ntwo\nkey = {KEY}\nfour = {KEY}\n")  # back to UTF-8
    repo.commit("utf-16 to utf-8")
    # No NUL in git's first 8000 bytes, so git diffs the UTF-16 bytes as text.
    repo.write("cjk.txt", wide("\u4e2d" * 4100 + f"\nk = {KEY}\n", "utf-16"))
    repo.commit("wide text git takes for text")
    repo.git("checkout", "-q", "-b", "side", "HEAD~1")
    repo.write("b.txt", wide(f"b\n{KEY}\nside = {KEY}\n", "utf-32-be"))
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-edit", "side")
    return repo


EXPECTED = [
    ("a.txt", 3, "edit a wide file, add another"),
    ("a.txt", 4, "utf-16 to utf-8"),
    ("b.txt", 2, "edit a wide file, add another"),
    ("b.txt", 3, "side"),
    ("cjk.txt", 2, "wide text git takes for text"),
    ("plain.txt", 3, "utf-8 to utf-16"),
]


def test_history_scan_reports_each_added_line_once(history: GitRepo, capsys) -> None:
    code, report = scan_json(capsys, "scan", "--repo", str(history.path), "--include-plaintext")
    assert code == 1
    subjects = dict(
        line.split(" ", 1) for line in history.git("log", "--all", "--format=%H %s").splitlines()
    )
    found = sorted((f["path"], f["line"], subjects[f["commit"]]) for f in report["findings"])
    assert found == EXPECTED
    assert report["skipped"] == []


def test_fast_path_matches_the_libgit2_path(history: GitRepo) -> None:
    repo = pygit2.Repository(str(history.path))
    commits = list(select_commits(repo, Selection(all_refs=True)))
    simple = [item for c in commits for item in iter_walked_commit(repo, c, max_size=1 << 20)]
    ids = [str(commit.id) for commit in commits]
    assert list(gitdiff.iter_commits_fast(repo.path, ids, max_size=1 << 20)) == simple
    texts = [getattr(item, "text", "") for item in simple]
    assert sum(KEY in text for text in texts) == len(EXPECTED)
    # found in the decoded readings; the bytes readings (NULs between letters) add none
    assert not any("\0" in text for text in texts if KEY in text)
    assert any("\0" in text for text in texts)
