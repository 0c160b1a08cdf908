"""A throwaway git repository driven through the real git CLI."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def git(*args: str, cwd: Path | str, input_text: str | None = None, check: bool = True) -> str:
    """Run git and return its stdout; failures raise with git's stderr."""
    completed = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=input_text,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and completed.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {completed.stderr}")
    return completed.stdout


class GitRepo:
    """A repository in a temporary directory with helpers for writing and committing."""

    def __init__(self, path: Path, *, bare: bool = False, object_format: str = "sha1") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "-q", "-b", "main", f"--object-format={object_format}"]
        if bare:
            args.append("--bare")
        git(*args, str(path), cwd=path.parent)

    def git(self, *args: str, input_text: str | None = None, check: bool = True) -> str:
        return git(*args, cwd=self.path, input_text=input_text, check=check)

    def write(self, relative: str, content: str | bytes) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def commit(self, message: str = "change", *paths: str, date: str | None = None) -> str:
        """Stage ``paths`` (everything when none) and commit; returns the commit id."""
        self.git("add", *(paths or ("-A",)))
        env_date = {} if date is None else {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        completed = subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", message],
            cwd=self.path,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **env_date},
        )
        if completed.returncode != 0:
            raise AssertionError(f"git commit failed: {completed.stderr}{completed.stdout}")
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()
