"""End to end: sync from a real server, then real `git commit`s through the pre-commit hook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.cli import main
from testing.fake_server import FakeApp, serve
from testing.tokens import expand

if TYPE_CHECKING:
    import pytest

    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "e2e-password")
NEW_TOKEN = expand("itk_{rand:Aa0:32}", "e2e-new")
REVIEWED_TOKEN = expand("itk_{rand:Aa0:32}", "e2e-reviewed")


def commit(repo: GitRepo, path: str, content: str) -> subprocess.CompletedProcess[str]:
    repo.write(path, content)
    repo.git("add", path)
    return subprocess.run(
        ["git", "commit", "-q", "-m", f"add {path}"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_synced_rule_blocks_a_commit_and_a_synced_reviewed_line_does_not(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    app = FakeApp(
        password=PASSWORD,
        rules=[
            {
                "id": "9",
                "name": "Internal token",
                "regexp": "itk_[A-Za-z0-9]{32}",
                "hardcoded": False,
                "enabled": True,
                "blocking": True,
            }
        ],
        reviewed=[(REVIEWED_TOKEN, "Internal token")],
    )
    monkeypatch.chdir(repo.path)
    monkeypatch.setenv("SPILLGUARD_USERNAME", "ada")
    monkeypatch.setenv("SPILLGUARD_PASSWORD", PASSWORD)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    repo.commit("root")
    with serve(app) as url:
        assert main(["sync", "--server", url, "--project", "PRJ", "--repo", "app"]) == 0
    assert main(["install", "pre-commit", "--repo", str(repo.path)]) == 0
    capsys.readouterr()

    blocked = commit(repo, "deploy.cfg", f"internal = {NEW_TOKEN}\n")
    assert blocked.returncode != 0
    assert "INTERNAL_TOKEN" in blocked.stdout + blocked.stderr
    assert NEW_TOKEN not in blocked.stdout + blocked.stderr
    repo.git("rm", "-q", "--cached", "deploy.cfg")

    accepted = commit(repo, "legacy.cfg", f"internal = {REVIEWED_TOKEN}\n")
    assert accepted.returncode == 0, accepted.stderr
    assert repo.git("log", "-1", "--format=%s").strip() == "add legacy.cfg"
