"""``spillguard install``: where hook scripts go, and what it refuses to overwrite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spillguard.cli import main
from spillguard.hooks.scripts import HOOK_KINDS, hook_script
from testing.gitrepo import GitRepo
from testing.tokens import expand

PROJECT = Path(__file__).resolve().parent.parent
SECRET = expand("AKIA{rand:A2:16}", "install")
PYTHON = str(Path(sys.executable).absolute())


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
    assert hook.read_text() == hook_script("pre-commit", python=PYTHON)
    assert os.access(hook, os.X_OK)
    assert install(repo.path, "pre-commit") == 0
    assert not hook.with_name("pre-commit.bak").exists()
    assert f"installed the pre-commit hook: {hook} (it runs {PYTHON})" in capsys.readouterr().out


def test_refuses_a_foreign_hook_unless_forced(repo: GitRepo, capsys) -> None:
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine\n")
    assert install(repo.path, "pre-push") == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: {hook} exists and was not written by spillguard; rerun with "
        "--force to keep it as pre-push.bak, which then runs before spillguard\n"
    )
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    assert install(repo.path, "pre-push", "--force") == 0
    assert hook.with_name("pre-push.bak").read_text() == "#!/bin/sh\necho mine\n"
    assert hook.read_text() == hook_script("pre-push", python=PYTHON, chained=True)
    assert "it runs before spillguard" in capsys.readouterr().out
    hook.write_text("#!/bin/sh\necho another\n")
    assert install(repo.path, "pre-push", "--force") == 2  # never overwrite a backup
    assert "pre-push.bak exists too" in capsys.readouterr().err


def test_respects_core_hooks_path(repo: GitRepo) -> None:
    repo.git("config", "core.hooksPath", "ci/hooks")
    assert install(repo.path) == 0
    assert (repo.path / "ci" / "hooks" / "pre-commit").read_text() == hook_script(
        "pre-commit", python=PYTHON
    )
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
    assert (bare.path / "hooks" / "pre-receive").read_text() == hook_script(
        "pre-receive", python=PYTHON
    )


def test_not_a_repository(tmp_path: Path, capsys) -> None:
    assert install(tmp_path) == 3
    assert "not a git repository" in capsys.readouterr().err


# --- real commits and pushes through the scripts ------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """git's own directory on PATH and nothing else: no virtual environment, no spillguard."""
    git_dir = next(
        part for part in os.environ["PATH"].split(os.pathsep) if Path(part, "git").is_file()
    )
    return {**os.environ, "PATH": git_dir, **extra}


def git_commit(
    repo: GitRepo, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-q", "-m", "change"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env=env or clean_env(),
    )


def stage(repo: GitRepo, text: str) -> None:
    repo.write("app.py", text)
    repo.git("add", "app.py")


def test_the_hook_runs_without_spillguard_on_path(repo: GitRepo) -> None:
    """As from an IDE or a shell without the virtual environment: the recorded Python runs."""
    assert install(repo.path) == 0
    stage(repo, f"key = '{SECRET}'\n")
    blocked = git_commit(repo)
    assert blocked.returncode == 1
    assert "AWS_CLIENT_ID" in blocked.stderr
    stage(repo, "x = 1\n")
    assert git_commit(repo).returncode == 0


def test_the_hook_falls_back_to_path_then_fails_closed(repo: GitRepo, tmp_path: Path) -> None:
    assert install(repo.path) == 0
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    gone = str(tmp_path / "removed-venv" / "bin" / "python")
    hook.write_text(hook.read_text().replace(f"INSTALL_PYTHON={PYTHON}", f"INSTALL_PYTHON={gone}"))
    stage(repo, f"key = '{SECRET}'\n")
    on_path = clean_env()
    on_path["PATH"] += os.pathsep + str(Path(sys.executable).parent)  # its `spillguard` script
    assert "AWS_CLIENT_ID" in git_commit(repo, on_path).stderr
    missing = git_commit(repo)
    assert missing.returncode == 1
    assert missing.stderr == (
        f"spillguard: the pre-commit hook cannot run spillguard: {gone} is not there "
        "and spillguard is not on PATH.\n"
        "spillguard: install it again (in a checkout of spillguard: pip install .), then run "
        f"'spillguard install pre-commit'; or remove this hook: .git/hooks/pre-commit\n"
    )
    assert repo.git("rev-parse", "--verify", "-q", "HEAD", check=False) == ""


def test_force_chains_the_replaced_hook_and_uninstall_restores_it(
    repo: GitRepo, tmp_path: Path, capsys
) -> None:
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    ran = tmp_path / "ran"
    mine = f'#!/bin/sh\necho "$@" >> {ran}\ntest ! -e {tmp_path / "fail"}\n'
    hook.write_text(mine)
    hook.chmod(0o755)
    assert install(repo.path, "--force") == 0
    stage(repo, f"key = '{SECRET}'\n")
    blocked = git_commit(repo)  # the old hook passes, spillguard blocks
    assert blocked.returncode == 1
    assert "AWS_CLIENT_ID" in blocked.stderr
    assert ran.read_text() == "\n"
    stage(repo, "x = 1\n")
    (tmp_path / "fail").touch()
    assert git_commit(repo).returncode == 1  # the old hook's failure fails the commit
    assert ran.read_text() == "\n\n"
    (tmp_path / "fail").unlink()
    assert git_commit(repo).returncode == 0
    assert install(repo.path) == 0  # a reinstall keeps running it
    assert "PREVIOUS=" in hook.read_text()
    capsys.readouterr()
    assert main(["uninstall", "--repo", str(repo.path)]) == 0
    assert hook.read_text() == mine
    assert not hook.with_name("pre-commit.bak").exists()
    assert capsys.readouterr().out == (
        f"spillguard: removed the pre-commit hook; restored the previous one: {hook}\n"
    )


def test_chained_pre_push_hooks_both_read_the_pushed_refs(repo: GitRepo, tmp_path: Path) -> None:
    bare = GitRepo(tmp_path / "remote.git", bare=True)
    repo.git("remote", "add", "origin", str(bare.path))
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    seen = tmp_path / "seen"
    hook.write_text(f"#!/bin/sh\ncat > {seen}\n")
    hook.chmod(0o755)
    assert install(repo.path, "pre-push", "--force") == 0
    repo.write("app.py", f"key = '{SECRET}'\n")
    bad = repo.commit("add a key")
    pushed = subprocess.run(
        ["git", "push", "-q", "origin", "main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env=clean_env(),
    )
    assert pushed.returncode == 1
    assert "AWS_CLIENT_ID" in pushed.stderr  # spillguard had the line too
    assert seen.read_text().startswith(f"refs/heads/main {bad} refs/heads/main ")
    assert bare.git("rev-parse", "--verify", "-q", "main", check=False) == ""


def test_uninstall_removes_only_spillguard_hooks(repo: GitRepo, capsys) -> None:
    hooks = repo.path / ".git" / "hooks"
    assert install(repo.path, "pre-commit") == 0
    hooks.joinpath("pre-push").write_text("#!/bin/sh\nexit 0\n")
    capsys.readouterr()
    assert main(["uninstall", "pre-push", "--repo", str(repo.path)]) == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: {hooks / 'pre-push'} was not written by spillguard; "
        "it is left as it is\n"
    )
    assert main(["uninstall", "--repo", str(repo.path)]) == 0
    assert capsys.readouterr().out == (
        f"spillguard: removed the pre-commit hook: {hooks / 'pre-commit'}\n"
    )
    assert sorted(path.name for path in hooks.iterdir()) == ["pre-push"]
    assert main(["uninstall", "--repo", str(repo.path)]) == 0
    assert capsys.readouterr().out == f"spillguard: no spillguard hook to remove in {hooks}\n"
