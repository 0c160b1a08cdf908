"""Clients read the repository's configuration from the remote's default branch, as the
server does: a commit that loosens ``.spillguard.toml`` is judged by the old file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo, git
from testing.synccache import write_sync_cache
from testing.tokens import expand

KEY = expand("AKIA{rand:A2:16}", "config-source")


@pytest.fixture(autouse=True)
def _spillguard_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def clone(tmp_path: Path) -> GitRepo:
    """A clone (origin/HEAD set, as git clone sets it) of a server whose main has a
    .spillguard.toml and a README; the pre-push hook is installed."""
    seed = GitRepo(tmp_path / "seed")
    seed.write(".spillguard.toml", "allowlist_paths = ['docs/.*']\n")
    seed.write("README.md", "hello\n")
    seed.commit("base")
    git("clone", "-q", "--bare", str(seed.path), str(tmp_path / "server.git"), cwd=tmp_path)
    work = GitRepo(tmp_path / "work")
    # What git clone does: fetch, record the remote's default branch, check it out.
    work.git("remote", "add", "origin", str(tmp_path / "server.git"))
    work.git("fetch", "-q", "origin")
    work.git("remote", "set-head", "origin", "--auto")
    work.git("checkout", "-q", "-B", "main", "origin/main")
    installed = run([sys.executable, "-m", "spillguard", "install", "pre-push"], work.path)
    assert installed.returncode == 0, installed.stderr
    return work


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)


def loosen(work: GitRepo, toml: str = "disabled_rules = ['AWS_CLIENT_ID']\n") -> None:
    """On branch feature: a commit that disables the rule and adds a key it would find."""
    work.git("checkout", "-q", "-b", "feature")
    work.write(".spillguard.toml", toml)
    work.write("app.py", f"key = '{KEY}'\n")
    work.commit("loosen the rules and add a key")


def scan(work: GitRepo, *args: str) -> int:
    return main(["scan", "--repo", str(work.path), "origin/main..feature", *args])


def test_pre_push_is_judged_by_the_remote_default_branch(clone: GitRepo) -> None:
    loosen(clone)
    pushed = run(["git", "push", "-q", "origin", "feature"], clone.path)
    assert pushed.returncode != 0, pushed.stderr
    assert "app.py:1" in pushed.stderr
    assert "AWS_CLIENT_ID" in pushed.stderr
    assert (
        "note: judged by the configuration on origin/main; your edited .spillguard.toml "
        "applies once it is merged there"
    ) in pushed.stderr


def test_a_push_to_the_remote_url_is_judged_by_that_remote_default_branch(
    clone: GitRepo,
) -> None:
    loosen(clone)
    url = clone.git("remote", "get-url", "origin").strip()
    pushed = run(["git", "push", "-q", url, "feature"], clone.path)  # git passes the URL
    assert pushed.returncode != 0, pushed.stderr
    assert "app.py:1" in pushed.stderr


def test_the_reviewed_file_is_read_from_the_default_branch_too(clone: GitRepo) -> None:
    clone.git("checkout", "-q", "-b", "feature")
    clone.write("app.py", f"key = '{KEY}'\n")
    assert main(["review", "add", KEY, "--repo", str(clone.path), "--reason", "mine"]) == 0
    clone.commit("review my own key and add it")
    pushed = run(["git", "push", "-q", "origin", "feature"], clone.path)
    assert pushed.returncode != 0, pushed.stderr
    assert "app.py:1" in pushed.stderr


def test_a_reviewed_entry_not_yet_merged_is_pushed_with_the_command_the_note_gives(
    clone: GitRepo,
) -> None:
    """git push passes no option to the hook: the note names what does reach it."""
    clone.git("checkout", "-q", "-b", "feature")
    clone.write("app.py", f"key = '{KEY}'\n")
    assert main(["review", "add", KEY, "--repo", str(clone.path), "--reason", "fixture"]) == 0
    clone.commit("a reviewed fixture key")
    pushed = run(["git", "push", "-q", "origin", "feature"], clone.path)
    assert pushed.returncode != 0, pushed.stderr
    (now,) = re.findall(r"to push with your copy now: (.*)\)$", pushed.stderr, flags=re.MULTILINE)
    assert now == "SPILLGUARD_CONFIG_FROM=work-tree git push"
    again = run(["sh", "-c", f"{now} -q origin feature"], clone.path)
    assert again.returncode == 0, again.stderr
    wrong = run(
        ["sh", "-c", "SPILLGUARD_CONFIG_FROM=worktree git push -q origin feature"], clone.path
    )
    assert wrong.stderr.splitlines()[0] == (
        "spillguard: error: SPILLGUARD_CONFIG_FROM=worktree: expected one of auto, "
        "default-branch, work-tree"
    )


def test_your_own_file_can_choose_the_work_tree(clone: GitRepo, tmp_path: Path) -> None:
    loosen(clone)
    own = tmp_path / "xdg" / "spillguard" / "config.toml"
    own.parent.mkdir(parents=True)
    own.write_text('config_from = "work-tree"\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    pushed = subprocess.run(
        ["git", "push", "-q", "origin", "feature"],
        cwd=clone.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert pushed.returncode == 0, pushed.stderr


def test_scan_reads_the_work_tree_until_asked_or_synced(
    clone: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    loosen(clone)
    assert scan(clone) == 0  # not synced: the work tree's file, as before
    assert scan(clone, "--config-from", "default-branch") == 1
    assert "app.py" in capsys.readouterr().out
    # After a sync, the server's way is the default; --config-from work-tree edits.
    monkeypatch.chdir(clone.path)
    rules = [{"name": "AWS_CLIENT_ID", "kind": "builtin", "enabled": True}]
    write_sync_cache(clone.path, os.environ, rules=rules)
    assert scan(clone) == 1
    assert scan(clone, "--config-from", "work-tree") == 0
    # pre-commit too: the .spillguard.toml in the index (it disables the rule) does not apply.
    clone.write("more.py", f"again = '{KEY}'\n")
    clone.git("add", "more.py")
    assert main(["hook", "pre-commit"]) == 1
    assert main(["hook", "pre-commit", "--config-from", "work-tree"]) == 0


def test_without_origin_head_the_main_branch_with_a_note(clone: GitRepo, capsys) -> None:
    clone.git("remote", "set-head", "origin", "--delete")
    loosen(clone)
    assert scan(clone, "--config-from", "default-branch") == 1
    err = "".join(capsys.readouterr())  # the text report's notes, on stdout
    assert "origin/HEAD is not set; the configuration is read from origin/main" in err
    assert "git remote set-head origin --auto" in err


def test_an_unknown_default_branch_falls_back_to_local_files_with_a_note(
    tmp_path: Path, capsys
) -> None:
    work = GitRepo(tmp_path / "work")
    work.git("remote", "add", "origin", str(tmp_path / "nowhere.git"))
    work.write("README.md", "hello\n")
    work.commit("base")
    loosen(work)
    code = main(["scan", "--repo", str(work.path), "--config-from", "default-branch"])
    assert code == 0  # the local file disables the rule, as it says
    shown = "".join(capsys.readouterr())
    assert "the default branch of origin is not known (git fetch origin" in shown


def test_a_repository_file_may_not_choose(clone: GitRepo, capsys) -> None:
    clone.write(".spillguard.toml", 'config_from = "work-tree"\n')
    assert main(["scan", "--repo", str(clone.path), "--config-from", "work-tree"]) == 2
    assert "config_from belongs in your own configuration file" in capsys.readouterr().err


def test_with_several_remotes_origins_default_branch_judges(clone: GitRepo, tmp_path: Path) -> None:
    """A remote named before origin (``alpha``) whose default branch disables the rule:
    a scan by the default branch's configuration reads origin's, not the first one's."""
    lenient = GitRepo(tmp_path / "alpha")
    lenient.write(".spillguard.toml", "disabled_rules = ['AWS_CLIENT_ID']\n")
    lenient.commit("lenient")
    clone.git("remote", "add", "alpha", str(lenient.path))
    clone.git("fetch", "-q", "alpha")
    clone.git("remote", "set-head", "alpha", "--auto")
    clone.write("app.py", f"key = '{KEY}'\n")
    clone.commit("a key")
    argv = ["scan", "--repo", str(clone.path), "--config-from", "default-branch", "origin/main.."]
    assert main(argv) == 1
