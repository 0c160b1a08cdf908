"""The pre-commit framework runs spillguard from this project's ``.pre-commit-hooks.yaml``.

The framework clones the hook repository (here a commit of this project's current
files, by ``file://`` URL) and pip-installs it into its own virtual environment,
offline: pip gets ``--no-index`` and a wheelhouse repacked from this environment.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.gitrepo import GitRepo
from testing.tokens import expand
from testing.wheelhouse import build_wheelhouse

PROJECT = Path(__file__).resolve().parent.parent
SECRET = expand("AKIA{rand:A2:16}", "framework")
FIXTURE = expand("AKIA{rand:A2:16}", "framework-fixture")


def hook_repository(target: Path) -> tuple[str, str]:
    """This project's files as they are now, committed in a repository of their own."""
    repo = GitRepo(target)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(PROJECT / name, target / name)
    shutil.copytree(PROJECT / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return target.as_uri(), repo.commit("spillguard at HEAD")


def test_framework_runs_the_hooks_from_pre_commit_hooks_yaml(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dependencies = [
        requirement
        for requirement in importlib.metadata.distribution("spillguard").requires or ()
        if "extra ==" not in requirement
    ]
    wheelhouse = build_wheelhouse([*dependencies, "hatchling"], tmp_path / "wheels")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    url, rev = hook_repository(tmp_path / "spillguard")
    repo.write(
        ".pre-commit-config.yaml",
        f"repos:\n- repo: {url}\n  rev: {rev}\n  hooks:\n  - id: spillguard\n"
        "  - id: spillguard-pre-push\n  - id: spillguard-tree\n  - id: spillguard-history\n",
    )
    repo.commit("config")
    framework = [
        sys.executable,
        "-m",
        "pre_commit",
        "install",
        "-t",
        "pre-commit",
        "-t",
        "pre-push",
    ]
    installed = subprocess.run(
        framework, cwd=repo.path, capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    repo.write("app.py", f"key = '{SECRET}'\n")
    repo.git("add", "app.py")
    blocked = subprocess.run(
        ["git", "commit", "-m", "leak"], cwd=repo.path, capture_output=True, text=True, check=False
    )
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "spillguard (secrets in the staged changes)" in output
    assert "app.py:1:8  AWS_CLIENT_ID  blocking  AWS access key ID" in output
    assert SECRET not in output
    repo.write("app.py", "key = os.environ['KEY']\n")
    repo.git("add", "app.py")
    accepted = subprocess.run(
        ["git", "commit", "-m", "clean"], cwd=repo.path, capture_output=True, text=True, check=False
    )
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr

    review_as_printed(repo)

    # pre-push: a new branch (the framework passes PRE_COMMIT_LOCAL_BRANCH), then an
    # existing one (PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF)
    GitRepo(tmp_path / "origin.git", bare=True)
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    first = push(repo)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "spillguard (secrets in the pushed commits)" in first.stdout + first.stderr
    repo.write("app.py", f"key = '{SECRET}'\n")
    leak = _commit_unchecked(repo)
    pushed = push(repo)
    output = pushed.stdout + pushed.stderr
    assert pushed.returncode != 0, output
    assert f"commit {leak[:10]}" in output
    assert "push blocked by 1 blocking finding(s)" in output

    # the whole repository: --all-files runs the index-only hook, which passes; the
    # manual-stage ids find the committed secret
    everything = run_framework(repo, "run", "--all-files")
    assert everything.returncode == 0, everything.stdout + everything.stderr
    for hook_id, shown in (("spillguard-tree", "app.py:1:8"), ("spillguard-history", leak[:10])):
        found = run_framework(repo, "run", "--hook-stage", "manual", hook_id)
        assert found.returncode == 1, found.stdout + found.stderr
        assert shown in found.stdout
        assert SECRET not in found.stdout + found.stderr


def review_as_printed(repo: GitRepo) -> None:
    """A blocked fixture, the command printed under it pasted in the user's shell (where
    the framework's spillguard is not on PATH: it names the hook's own interpreter),
    and the commit passes."""
    repo.write("fixture.py", f"sample = '{FIXTURE}'\n")
    repo.git("add", "fixture.py")
    fixture = subprocess.run(
        ["git", "commit", "-m", "fixture"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fixture.returncode != 0
    (printed,) = re.findall(r"not a secret\? (.*)", fixture.stdout + fixture.stderr)
    assert printed.endswith(
        " -m spillguard review add --at fixture.py:1 && git add :/.spillguard-reviewed.toml"
    )
    without = os.pathsep.join(
        part
        for part in os.environ["PATH"].split(os.pathsep)
        if not Path(part, "spillguard").exists()
    )
    reviewed = subprocess.run(
        ["sh", "-c", printed],
        cwd=repo.path,
        env={**os.environ, "PATH": without},
        capture_output=True,
        text=True,
        check=False,
    )
    assert reviewed.returncode == 0, reviewed.stderr
    passed = subprocess.run(
        ["git", "commit", "-m", "a reviewed fixture"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr


def run_framework(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )


def push(repo: GitRepo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "push", "origin", "main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )


def _commit_unchecked(repo: GitRepo) -> str:
    repo.git("commit", "-q", "--no-verify", "-am", "leak")
    return repo.head()
