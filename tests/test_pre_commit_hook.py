"""``spillguard install pre-commit`` and real ``git commit`` runs that the hook blocks or lets through."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testing.gitrepo import GitRepo
from testing.server import hooked_commit
from testing.tokens import expand

SECRET = expand("AKIA{rand:A2:16}", "pre-commit")


@pytest.fixture(autouse=True)
def _spillguard_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook script runs `spillguard` from PATH: this interpreter's one."""
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def spillguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spillguard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


#: A real `git commit`, hooks and all.
commit = hooked_commit


@pytest.fixture(params=["sha1", "sha256"])
def hooked(request: pytest.FixtureRequest, tmp_path: Path) -> GitRepo:
    """Every hook test runs in both object formats (SHA-256: the git CLI alone)."""
    repo = GitRepo(tmp_path / "repo", object_format=request.param)
    installed = spillguard("install", "pre-commit", cwd=repo.path)
    assert installed.returncode == 0, installed.stderr
    assert "installed the pre-commit hook" in installed.stdout
    return repo


def assert_blocked(result: subprocess.CompletedProcess[str], where: str) -> None:
    assert result.returncode != 0
    assert where in result.stderr
    assert "AWS_CLIENT_ID  blocking  AWS access key ID" in result.stderr
    assert "AKIA********" in result.stderr
    assert "commit blocked by 1 blocking finding(s)" in result.stderr
    assert SECRET not in result.stderr + result.stdout


def test_first_commit_is_blocked_then_a_clean_one_accepted(hooked: GitRepo) -> None:
    hooked.write("app.py", f"x = 1\nkey = '{SECRET}'\n")
    hooked.git("add", "app.py")
    assert_blocked(commit(hooked), "app.py:2")
    assert hooked.git("rev-parse", "--verify", "-q", "HEAD", check=False) == ""  # still unborn
    hooked.write("app.py", "x = 1\n")
    hooked.git("add", "app.py")
    assert commit(hooked).returncode == 0


def test_partial_staging_judges_the_staged_version(hooked: GitRepo) -> None:
    lines = [f"line{n} = {n}\n" for n in range(12)]
    hooked.write("app.py", "".join(lines))
    hooked.commit("base")
    lines[0] = "line0 = 'changed'\n"
    lines[11] = f"key = '{SECRET}'\n"
    hooked.write("app.py", "".join(lines))
    # `git add -p`: stage the first hunk, leave the hunk with the key unstaged
    hooked.git("add", "-p", "app.py", input_text="y\nn\n")
    assert hooked.git("diff", "--cached", "--name-only") == "app.py\n"
    result = commit(hooked)
    assert result.returncode == 0, result.stderr
    # the other way round: the key staged, the working tree already clean
    hooked.git("add", "app.py")
    hooked.write("app.py", "clean = 1\n")
    assert_blocked(commit(hooked), "app.py:12")


def test_commit_all_sees_the_temporary_index(hooked: GitRepo) -> None:
    hooked.write("app.py", "x = 1\n")
    hooked.commit("base")
    hooked.write("app.py", f"x = 1\nkey = '{SECRET}'\n")  # modified, not staged
    assert_blocked(commit(hooked, "-a"), "app.py:2")
    assert_blocked(commit(hooked, "app.py"), "app.py:2")  # `git commit PATH`: another index


def test_renames_and_deletions_add_nothing(hooked: GitRepo) -> None:
    hooked.write("old.py", f"key = '{SECRET}'\n")
    hooked.write("gone.py", f"key = '{SECRET}'\n")
    hooked.git("add", "-A")
    assert commit(hooked, "--no-verify").returncode == 0
    hooked.git("mv", "old.py", "new.py")
    hooked.git("rm", "-q", "gone.py")
    result = commit(hooked)
    assert result.returncode == 0, result.stderr


def test_merge_in_progress_reports_only_the_resolution(hooked: GitRepo) -> None:
    hooked.write("conf.py", "a = 1\n")
    hooked.commit("base")
    hooked.git("checkout", "-q", "-b", "side")
    hooked.write("side.py", f"key = '{SECRET}'\n")  # already judged (and accepted) on its branch
    hooked.write("conf.py", "a = 'side'\n")
    assert commit(hooked, "-a", "--no-verify").returncode == 0
    hooked.git("add", "side.py")
    assert commit(hooked, "--no-verify").returncode == 0
    hooked.git("checkout", "-q", "main")
    hooked.write("conf.py", "a = 'main'\n")
    hooked.commit("main")
    hooked.git("merge", "-q", "side", check=False)  # conflict in conf.py
    hooked.write("conf.py", "a = 'both'\n")
    hooked.git("add", "conf.py")
    clean = commit(hooked, "--no-edit")
    assert clean.returncode == 0, clean.stderr


def test_staged_configuration_applies_not_the_working_tree_one(hooked: GitRepo) -> None:
    hooked.write("app.py", f"key = '{SECRET}'\n")
    hooked.write(".spillguard.toml", "disabled_rules = ['AWS_CLIENT_ID']\n")
    hooked.git("add", "app.py")  # the configuration file is not staged: it does not count
    assert_blocked(commit(hooked), "app.py:1")
    hooked.git("add", ".spillguard.toml")
    result = commit(hooked)
    assert result.returncode == 0, result.stderr


def test_warn_mode_prints_and_accepts(hooked: GitRepo) -> None:
    hooked.write(".spillguard.toml", '[hook]\nmode = "warn"\n')
    hooked.write("app.py", f"key = '{SECRET}'\n")
    hooked.git("add", "-A")
    result = commit(hooked)
    assert result.returncode == 0
    assert "app.py:1:8  AWS_CLIENT_ID  blocking  AWS access key ID" in result.stderr
    assert "warn mode: 1 blocking finding(s) reported, not blocked" in result.stderr


@pytest.mark.parametrize("locked", [False, True])
def test_a_pragma_is_counted_and_never_silences_a_locked_rule(
    hooked: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, locked: bool
) -> None:
    """As on the server: your own file's locked rule is not silenced by a pragma."""
    own = tmp_path / "xdg" / "spillguard" / "config.toml"
    own.parent.mkdir(parents=True)
    own.write_text('locked_rules = ["AWS_CLIENT_ID"]\n' if locked else "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    hooked.write("app.py", f"key = '{SECRET}'  # pragma: allowlist-secret\n")
    hooked.git("add", "app.py")
    result = commit(hooked)
    if locked:
        assert_blocked(result, "app.py:1")
    else:
        assert result.returncode == 0, result.stderr
        assert "silenced: 1 by a pragma" in result.stderr


def test_broken_staged_configuration_blocks_with_one_line(hooked: GitRepo) -> None:
    hooked.write(".spillguard.toml", "rules = [\n")
    hooked.git("add", "-A")
    result = commit(hooked)
    assert result.returncode != 0
    assert result.stderr.startswith("spillguard: error: .spillguard.toml (staged): invalid TOML")


def staged_mix(repo: GitRepo) -> str:
    """What the hook says of every kind of staged change libgit2 would judge in SHA-1."""
    repo.write("plain.py", "x = 1\n")
    repo.write("run.sh", "echo hi\n")
    (repo.path / "link").symlink_to("plain.py")
    (repo.path / "was_link").symlink_to("run.sh")
    repo.write("gone.py", "y = 2\n" * 20)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.py", f"key = '{SECRET}'\n")  # judged on its own branch
    repo.write("plain.py", "x = 1\nfrom_side = 1\n")
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-commit", "--no-ff", "side")
    repo.write("plain.py", f"x = 1\nfrom_side = 1\nmine = '{SECRET}'\n")
    (repo.path / "run.sh").chmod(0o755)  # a mode change adds nothing
    (repo.path / "was_link").unlink()
    repo.write("was_link", f"token = '{SECRET}'\n")  # symlink -> file: its lines are new
    repo.write("tab\tname.py", f"key = '{SECRET}'\n")  # a path git quotes
    repo.write("blob.bin", b"\0\1\2" + SECRET.encode())
    repo.git("mv", "gone.py", "moved.py")
    repo.write("moved.py", "y = 2\n" * 20 + f"k = '{SECRET}'\n")
    (repo.path / "new_link").symlink_to("plain.py")
    repo.git("add", "-A")
    result = spillguard("hook", "pre-commit", cwd=repo.path)
    assert result.returncode == 1, result.stderr
    return re.sub(r" in [\d.]+ s\n", "\n", result.stderr)  # all but the time taken


def test_sha256_repository_is_judged_as_sha1_is(tmp_path: Path) -> None:
    """libgit2 cannot open SHA-256 repositories: the git CLI judges the same changes alike."""
    sha1 = staged_mix(GitRepo(tmp_path / "sha1"))
    sha256 = staged_mix(GitRepo(tmp_path / "sha256", object_format="sha256"))
    assert sha256 == sha1
    for where in ("plain.py:3", "was_link:1", "name.py:1", "moved.py:21", "blob.bin:1"):
        assert where in sha256
    assert "side.py" not in sha256


def test_summary_says_the_staged_changes_were_scanned(hooked: GitRepo) -> None:
    for content in ("x = 1\n", f"x = 1\nkey = '{SECRET}'\n"):  # unborn HEAD, then a born one
        hooked.write("app.py", content)
        hooked.git("add", "app.py")
        result = commit(hooked)
        assert "scanned the staged changes, 1 file(s)," in result.stderr
        assert "commit(s)" not in result.stderr


def test_utf16_text_is_judged_not_skipped_as_binary(hooked: GitRepo) -> None:
    hooked.write("base.txt", "x\n")
    hooked.commit("base")  # HEAD exists: the hook's git fast path would answer
    hooked.write("win.reg", f"\ufeffx = 1\r\nkey = {SECRET}\r\n".encode("utf-16-le"))
    hooked.git("add", "win.reg")
    assert_blocked(commit(hooked), "win.reg:2")
