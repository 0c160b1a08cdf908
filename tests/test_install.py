"""``spillguard install``: where hook scripts go, and what it refuses to overwrite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spillguard.cli import main
from spillguard.hookscripts import HOOK_KINDS, hook_script
from testing.gitrepo import GitRepo

PROJECT = Path(__file__).resolve().parent.parent


def install(repo: Path, *args: str) -> int:
    return main(["install", *args, "--repo", str(repo)])


@pytest.mark.parametrize("kind", HOOK_KINDS)
def test_shipped_hook_scripts_are_what_install_writes(kind: str) -> None:
    shipped = PROJECT / "hooks" / kind
    assert shipped.read_text(encoding="utf-8") == hook_script(kind)
    assert os.access(shipped, os.X_OK)


def test_writes_an_executable_hook_and_reinstalls_over_its_own(repo: GitRepo, capsys) -> None:
    assert install(repo.path) == 0  # pre-commit by default
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    assert hook.read_text() == hook_script("pre-commit")
    assert os.access(hook, os.X_OK)
    assert install(repo.path, "pre-commit") == 0
    assert not hook.with_name("pre-commit.bak").exists()
    assert f"installed the pre-commit hook: {hook}" in capsys.readouterr().out


def test_refuses_a_foreign_hook_unless_forced(repo: GitRepo, capsys) -> None:
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine\n")
    assert install(repo.path, "pre-push") == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: {hook} exists and was not written by spillguard; "
        "rerun with --force to keep it as pre-push.bak and install\n"
    )
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    assert install(repo.path, "pre-push", "--force") == 0
    assert hook.with_name("pre-push.bak").read_text() == "#!/bin/sh\necho mine\n"
    assert hook.read_text() == hook_script("pre-push")
    hook.write_text("#!/bin/sh\necho another\n")
    assert install(repo.path, "pre-push", "--force") == 2  # never overwrite a backup
    assert "pre-push.bak exists too" in capsys.readouterr().err


def test_respects_core_hooks_path(repo: GitRepo) -> None:
    repo.git("config", "core.hooksPath", "ci/hooks")
    assert install(repo.path) == 0
    assert (repo.path / "ci" / "hooks" / "pre-commit").read_text() == hook_script("pre-commit")
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()


def test_linked_worktree_installs_into_the_shared_hooks(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("a", "x\n")
    repo.commit()
    repo.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked")
    assert install(tmp_path / "linked") == 0
    assert (repo.path / ".git" / "hooks" / "pre-commit").is_file()


def test_pre_receive_needs_a_bare_repository(repo: GitRepo, tmp_path: Path, capsys) -> None:
    assert install(repo.path, "pre-receive") == 2
    assert "a pre-receive hook belongs in the server's bare repository" in capsys.readouterr().err
    bare = GitRepo(tmp_path / "server.git", bare=True)
    assert install(bare.path, "pre-receive") == 0
    assert (bare.path / "hooks" / "pre-receive").read_text() == hook_script("pre-receive")


def test_not_a_repository(tmp_path: Path, capsys) -> None:
    assert install(tmp_path) == 3
    assert "not a git repository" in capsys.readouterr().err
