"""Isolate git from the machine: no global or system config, a fixed identity."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testing.fake_server import FakeApp, serve
from testing.gitrepo import GitRepo

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(autouse=True, scope="session")
def _isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    # An empty regular file, never /dev/null: as root a `git config --global`
    # would rename its lock file over /dev/null and break the machine.
    global_config = home / "gitconfig"
    global_config.write_text("")
    templates = tmp_path_factory.mktemp("git-templates")
    patch = pytest.MonkeyPatch()
    values = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_GLOBAL": str(global_config),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TEMPLATE_DIR": str(templates),
        "GIT_AUTHOR_NAME": "Ada Tester",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Tester",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "NO_COLOR": "1",
    }
    for name, value in values.items():
        patch.setenv(name, value)
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "FORCE_COLOR",
        "SPILLGUARD_API_KEY",
        "SPILLGUARD_USERNAME",
        "SPILLGUARD_PASSWORD",
    ):
        patch.delenv(name, raising=False)
    yield
    patch.undo()


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def url(app: FakeApp) -> Iterator[str]:
    """The base URL of the fake scanning app; each sync test module defines ``app``."""
    with serve(app) as base:
        yield base


@pytest.fixture
def work(repo: GitRepo, monkeypatch: pytest.MonkeyPatch, app: FakeApp) -> GitRepo:
    """The repository as the current directory, with the app's user in the environment."""
    monkeypatch.chdir(repo.path)
    monkeypatch.setenv("SPILLGUARD_USERNAME", app.username)
    monkeypatch.setenv("SPILLGUARD_PASSWORD", app.password)
    return repo
