"""A generated estate: bare repositories in project folders, as a git server stores them.

Each repository's history is written by one ``git fast-import`` (two git processes a
repository), so a test builds fifty in a couple of seconds. Secrets come from
testing/tokens.py templates at run time.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from typing import TYPE_CHECKING, Any

from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

#: A line the built-in AWS rule blocks; generated, never stored.
AWS_SECRET = 'aws_secret_access_key = "{rand:b64:40}"'
#: Seconds since the epoch of the first commit (2024-01-01).
START = 1_704_067_200


@dataclasses.dataclass(frozen=True, slots=True)
class Commit:
    branch: str
    path: str
    text: str
    when: int


def _stream(commits: list[Commit], *, existing: bool) -> bytes:
    out: list[bytes] = []
    started: set[str] = set()
    for number, commit in enumerate(commits):
        data = commit.text.encode()
        message = f"change {number} on {commit.branch}\n".encode()
        out.append(f"commit refs/heads/{commit.branch}\n".encode())
        out.append(f"committer Ada Tester <ada@example.com> {commit.when} +0000\n".encode())
        out.append(b"data %d\n%s" % (len(message), message))
        if commit.branch not in started and (existing or commit.branch != "main"):
            # A branch continues from its tip on disk (^0: read from the repository),
            # or a new one starts from main's tip in this stream.
            source = f"refs/heads/{commit.branch}^0" if existing else "refs/heads/main"
            out.append(f"from {source}\n".encode())
        started.add(commit.branch)
        out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (commit.path.encode(), len(data), data))
    return b"".join(out)


def write_commits(repo: Path, commits: list[Commit], *, existing: bool = False) -> None:
    """Commit with fast-import: a new repository's main first, then branches from it."""
    subprocess.run(
        ["git", "--git-dir", str(repo), "fast-import", "--quiet"],
        input=_stream(commits, existing=existing),
        check=True,
    )


def new_bare(repo: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)


def plain_history(seed: str, *, branches: tuple[str, ...], secret_on: str | None) -> list[Commit]:
    """Three commits on main, one on each other branch; a secret on ``secret_on``."""
    commits = [
        Commit("main", f"src/module{i}.py", f"VALUE_{i} = {i}\n# {seed}\n", START + i * 60)
        for i in range(3)
    ]
    for offset, branch in enumerate(branches, start=10):
        commits.append(Commit(branch, f"{branch}.txt", f"work on {branch}\n", START + offset * 60))
    if secret_on is not None:
        line = expand(AWS_SECRET, seed)
        commits.append(Commit(secret_on, "settings.py", f"{line}\n", START + 3600))
    return commits


def break_repository(repo: Path) -> None:
    """A bare repository whose branch names an object that is not there (corrupt)."""
    new_bare(repo)
    (repo / "refs" / "heads" / "main").write_text("1" * 40 + "\n")


def repository(path: Path, seed: str, *, secret: bool) -> Path:
    """A bare repository of three commits on main, and a blocking secret when asked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new_bare(path)
    write_commits(path, plain_history(seed, branches=(), secret_on="main" if secret else None))
    return path


def run_audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """``spillguard audit --format json --branches '*' ARGS``: the exit code, the status
    tree and stderr."""
    from spillguard.cli import main

    code = main(["audit", "--format", "json", "--branches", "*", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def by_branch(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``PROJECT/NAME:BRANCH`` -> the branch's status."""
    return {
        f"{project['name']}/{repo['name']}:{branch['name']}": branch
        for project in tree["projects"]
        for repo in project["repositories"]
        for branch in repo["branches"]
    }


def by_repository(tree: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``PROJECT/NAME`` -> the repositories shown by that name (one, unless refused)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for project in tree["projects"]:
        for repo in project["repositories"]:
            found.setdefault(f"{project['name']}/{repo['name']}", []).append(repo)
    return found
