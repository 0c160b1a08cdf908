"""A bare repository with spillguard's pre-receive hook, and a clone that pushes to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from testing.gitrepo import GitRepo

#: The hook script execs ``spillguard`` from PATH: make it this interpreter's one.
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


def hooked_commit(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """A real ``git commit -m change ARGS``, with the hooks ``spillguard install`` wrote."""
    return subprocess.run(
        ["git", "commit", "-q", "-m", "change", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )


def install_hook(bare: Path) -> None:
    """What a server administrator runs: ``spillguard install pre-receive --repo BARE``."""
    completed = subprocess.run(
        [sys.executable, "-m", "spillguard", "install", "pre-receive", "--repo", str(bare)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "installed the pre-receive hook" in completed.stdout


def copy_hook(bare: Path) -> None:
    """The hook written by hand, as an administrator copies it from the project's hooks/."""
    from spillguard.hooks.scripts import hook_script

    target = bare / "hooks" / "pre-receive"
    target.parent.mkdir(exist_ok=True)
    target.write_text(hook_script("pre-receive"))
    target.chmod(0o755)


class Server:
    """``bare`` receives pushes from ``work`` (remote ``origin``)."""

    def __init__(self, root: Path, *, object_format: str = "sha1") -> None:
        self.bare = GitRepo(root / "bare.git", bare=True, object_format=object_format)
        self.work = GitRepo(root / "work", object_format=object_format)
        self.work.git("remote", "add", "origin", str(self.bare.path))

    def admin(self, text: str) -> None:
        """The administrator's ``spillguard.toml`` in the bare repository."""
        (self.bare.path / "spillguard.toml").write_text(text)

    def push(self, *args: str) -> tuple[int, str]:
        """``git push origin ARGS``: the exit code and everything git printed."""
        completed = subprocess.run(
            ["git", "push", "--porcelain", "origin", *args],
            cwd=self.work.path,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PATH": PATH},
        )
        return completed.returncode, completed.stderr + completed.stdout

    def refs(self) -> dict[str, str]:
        """Every ref of the bare repository and the object it names."""
        listing = self.bare.git("for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in listing.splitlines())


def guarded(root: Path, object_format: str = "sha1") -> Server:
    """A server whose ``main`` holds one commit (a README), the hook installed after it."""
    server = Server(root, object_format=object_format)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


def blocking(output: str) -> list[str]:
    """``path:line  RULE`` of each blocking finding a pusher was shown."""
    return [
        "  ".join(line.split("  ")[4:6]) for line in output.splitlines() if "  blocking  " in line
    ]
