"""The pre-commit reading (git command line) yields exactly what libgit2 reads (the oracle)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard import git
from spillguard.core.errors import GitError
from spillguard.sources.staged_cli import read_staged
from testing.gitrepo import GitRepo
from testing.staged_oracle import iter_staged, staged_text
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

MAX_SIZE = 4096
KEY = expand("AKIA{rand:A2:16}", "staged-cli")
CONFIG = ".spillguard.toml"


def compare(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Both paths over what is staged now; returns the items (asserting they agree)."""
    monkeypatch.chdir(repo.path)
    staged = read_staged((CONFIG, "missing.toml"))
    opened = git.open_from_environment()  # GIT_INDEX_FILE honoured, as in the hook
    expected = list(iter_staged(opened, max_size=MAX_SIZE))
    assert list(staged.items(max_size=MAX_SIZE)) == expected
    assert staged.texts == {CONFIG: staged_text(opened, CONFIG), "missing.toml": None}
    return expected


@pytest.fixture
def base(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "import os\n\n\ndef main():\n    pass\n")
    repo.write("old.txt", "old\n")
    repo.write(".gitattributes", "*.txt -diff\n*.dat diff\n")
    repo.commit("base")
    return repo


def test_ordinary_changes(base: GitRepo, monkeypatch) -> None:
    base.write("app.py", "import os\n\n\ndef extra():\n    return 1\n\n\ndef main():\n    pass\n")
    base.write("notes.txt", f"behind a -diff attribute\nkey = {KEY}\n")
    base.write("crlf.ini", f"[aws]\r\nkey = {KEY}\r\n")
    base.write("no-eol.py", f"key = '{KEY}'")
    base.write("latin1.txt", "café = 1\n".encode("latin-1") + KEY.encode())
    base.write("empty.txt", "")
    base.write("big.log", "x" * MAX_SIZE + f"\n{KEY}\n")
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{'0' * 64}\nsize 9\n"
    base.write("pointer.bin", pointer)
    base.write("dir with space/ünï.py", f"key = '{KEY}'\n")
    base.write(CONFIG, "[hook]\nmode = 'warn'\n")
    base.git("add", "-A")
    items = compare(base, monkeypatch)
    reasons = {getattr(item, "reason", None) for item in items}
    assert "LFS pointer" in reasons
    # text past max_file_size is judged like any other
    assert {"notes.txt", "no-eol.py", "dir with space/ünï.py", "big.log"} <= {
        i.path for i in items if getattr(i, "text", None)
    }


def test_a_partly_staged_file_is_judged_as_staged(base: GitRepo, monkeypatch) -> None:
    base.write("app.py", f"import os\nkey = '{KEY}'\n")
    base.git("add", "app.py")
    base.write("app.py", "import os\n")  # the work tree no longer has it
    (item,) = compare(base, monkeypatch)
    assert KEY in item.text


def test_deletions_only(base: GitRepo, monkeypatch) -> None:
    base.git("rm", "-q", "old.txt")
    assert compare(base, monkeypatch) == []


def test_a_temporary_index_as_git_commit_a_names_it(base: GitRepo, monkeypatch, tmp_path) -> None:
    index = tmp_path / "other-index"
    base.write("app.py", f"key = '{KEY}'\n")
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=base.path, env=env, check=True)
    subprocess.run(["git", "add", "app.py"], cwd=base.path, env=env, check=True)
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    assert len(compare(base, monkeypatch)) == 1


@pytest.mark.parametrize(
    "case", ["unborn", "rename", "binary", "mode", "symlink", "merge", "conflict", "quoted"]
)
def test_unusual_changes_read_by_git_as_libgit2_reads_them(
    repo: GitRepo, monkeypatch, case: str
) -> None:
    monkeypatch.chdir(repo.path)
    repo.write("a.py", f"a = '{KEY}'\n")
    if case != "unborn":
        repo.commit("base")
    if case == "rename":
        repo.git("mv", "a.py", "b.py")
    elif case == "binary":
        repo.write("blob.bin", b"\0\1\2")
    elif case == "mode":
        (repo.path / "a.py").chmod(0o755)
    elif case == "symlink":
        (repo.path / "link").symlink_to("a.py")
    elif case == "quoted":
        repo.write('odd"name.py', "x = 1\n")
    elif case in {"merge", "conflict"}:
        repo.git("checkout", "-q", "-b", "side")
        repo.write("a.py", "a = 2\n")
        repo.commit("side")
        repo.git("checkout", "-q", "main")
        repo.write("a.py", "a = 3\n" if case == "conflict" else "a = 1\n")
        repo.write("c.py", "c = 1\n")
        repo.commit("main")
        repo.git("merge", "-q", "--no-commit", "side", check=False)
    repo.git("add", "-A", check=False)  # a conflict resolved with its markers
    compare(repo, monkeypatch)


def test_the_hook_without_libgit2_or_dataclasses(base: GitRepo) -> None:
    """A plain commit, a finding reported, imports neither pygit2 nor ``dataclasses``
    (nor ``inspect`` and ``ast``, which it brings) nor ``tempfile`` and ``shutil``,
    nor ``typing`` or ``argparse``: that is the point of the fast path."""
    base.write("app.py", f"key = '{KEY}'\n")
    base.git("add", "app.py")
    code = (
        "import sys\nfrom spillguard.cli import main\ncode = main(['hook', 'pre-commit'])\n"
        "print(*sorted({'pygit2', 'dataclasses', 'inspect', 'ast', 'tempfile', 'shutil',"
        " 'typing', 'argparse'} & sys.modules.keys()), code)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=base.path, capture_output=True, text=True, check=False
    )
    assert completed.stdout.split() == ["1"]
    assert "AWS_CLIENT_ID" in completed.stderr


def test_outside_a_repository_it_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GitError, match="not a git repository"):
        read_staged((CONFIG,))


def test_without_git_installed_it_says_so(base: GitRepo, monkeypatch, tmp_path) -> None:
    base.write("app.py", f"key = '{KEY}'\n")
    base.git("add", "-A")
    monkeypatch.chdir(base.path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on it
    with pytest.raises(GitError, match="git is not installed"):
        read_staged((CONFIG,))
