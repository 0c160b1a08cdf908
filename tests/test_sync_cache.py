"""Scans read the sync cache: server rules block, server reviewed lines hide, --offline ignores."""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.sync_cache import cache_path, write_cache
from spillguard.detection.fingerprint import reviewed_digest
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = expand("itk_{rand:Aa0:32}", "sync-cache")
REVIEWED = expand("itk_{rand:Aa0:32}", "sync-cache-reviewed")


def cache_data(*, hours_old: float = 0, **extra: object) -> dict[str, object]:
    when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours_old)
    return {
        "server": "https://scm.example.com",
        "variant": "code-hosting",
        "scope": {"project": "PRJ", "repo": "app"},
        "synced_at": when.isoformat(),
        "release_line": {"blocking": True, "review_rule_name": True},
        "salt": "5a17",
        "rules": [
            {"name": "GENERIC_PASSWORD", "kind": "builtin", "enabled": False},
            {"name": "NOT_A_LOCAL_RULE", "kind": "builtin", "enabled": True},
            {
                "name": "INTERNAL_TOKEN",
                "kind": "custom",
                "enabled": True,
                "blocking": None,
                "regexp": "itk_[A-Za-z0-9]{32}",
            },
        ],
        "repository_rules": None,
        "reviewed": [{"digest": reviewed_digest(REVIEWED, "5a17"), "rule": "INTERNAL_TOKEN"}],
        **extra,
    }


def scan_json(capsys: pytest.CaptureFixture[str], repo: GitRepo, *flags: str) -> tuple[int, dict]:
    code = main(["scan", "--files", str(repo.path / "app.cfg"), "--format", "json", *flags])
    return code, json.loads(capsys.readouterr().out)


def test_cache_lives_in_the_common_git_dir_shared_by_worktrees(repo: GitRepo, tmp_path) -> None:
    repo.commit("root")
    repo.git("worktree", "add", "-q", str(tmp_path / "other"), "-b", "other")
    expected = (repo.path / ".git" / "spillguard" / "sync-cache.json").resolve()
    assert cache_path(repo.path / "sub", {}) == expected
    assert cache_path(tmp_path / "other", {}) == expected


def test_cache_outside_a_repository_is_in_the_user_cache_dir(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert cache_path(tmp_path, environ) == tmp_path / "cache" / "spillguard" / "sync-cache.json"


def test_synced_custom_rule_blocks_and_synced_reviewed_line_hides(
    repo: GitRepo, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(repo.path)
    write_cache(cache_path(repo.path, os.environ), cache_data())
    repo.write("app.cfg", f"internal = {TOKEN}\nold = {REVIEWED}\n")
    code, report = scan_json(capsys, repo)
    assert code == 1
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("INTERNAL_TOKEN", 1)]
    assert "NOT_A_LOCAL_RULE" not in capsys.readouterr().err


def test_offline_ignores_the_cache(repo: GitRepo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(repo.path)
    write_cache(cache_path(repo.path, os.environ), cache_data())
    repo.write("app.cfg", f"internal = {TOKEN}\n")
    code, report = scan_json(capsys, repo, "--offline")
    assert (code, report["findings"]) == (0, [])


def test_rules_shows_which_rules_came_from_the_server(repo: GitRepo, capsys) -> None:
    write_cache(cache_path(repo.path, os.environ), cache_data())
    assert main(["rules", "--repo", str(repo.path), "--format", "json"]) == 0
    rules = {rule["name"]: rule for rule in json.loads(capsys.readouterr().out)["rules"]}
    assert rules["INTERNAL_TOKEN"] == {
        "name": "INTERNAL_TOKEN",
        "kind": "custom",
        "enabled": True,
        "blocking": True,
        "source": "server",
        "description": "",
        "server_rule": "INTERNAL_TOKEN",
        "server_enabled": True,
    }
    assert (rules["GENERIC_PASSWORD"]["enabled"], rules["GENERIC_PASSWORD"]["source"]) == (
        False,
        "server",
    )
    # Not listed by the server: off, as the server has it.
    assert (rules["AWS_CLIENT_ID"]["enabled"], rules["AWS_CLIENT_ID"]["source"]) == (
        False,
        "server",
    )


def test_stale_cache_is_used_with_a_warning(repo: GitRepo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(repo.path)
    write_cache(cache_path(repo.path, os.environ), cache_data(hours_old=30))
    repo.write("app.cfg", f"internal = {TOKEN}\n")
    assert main(["scan", "--files", "app.cfg"]) == 1
    out = capsys.readouterr().out
    assert "synced from https://scm.example.com are 30 hours old" in out
    repo.write("user.toml", "[sync]\nmax_age = 48\n")
    assert main(["scan", "--files", "app.cfg", "--config", "user.toml"]) == 1
    assert "hours old" not in capsys.readouterr().out


def test_broken_cache_never_breaks_a_scan(repo: GitRepo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(repo.path)
    path = cache_path(repo.path, os.environ)
    write_cache(path, cache_data())
    path.write_text(path.read_text()[:40])
    repo.write("app.cfg", f"internal = {TOKEN}\n")
    assert main(["scan", "--files", "app.cfg"]) == 0
    assert "ignoring the sync cache" in capsys.readouterr().out


def test_write_is_atomic_a_failed_write_keeps_the_previous_cache(repo: GitRepo) -> None:
    path = cache_path(repo.path, os.environ)
    write_cache(path, cache_data())
    before = path.read_text()
    unserialisable = cache_data(scope={object()})
    with pytest.raises(TypeError):
        write_cache(path, unserialisable)
    assert path.read_text() == before
    assert [p.name for p in path.parent.iterdir()] == ["sync-cache.json"]


@pytest.mark.parametrize(
    "sync_table",
    [
        'server = "https://scm.example.com"\npassword = "x"',
        'server = "https://scm.example.com"\napi_key = "x"',
        'server = "https://ada:pw@scm.example.com/"',
        'server = "ada:pw@scm.example.com"',
    ],
)
def test_credentials_in_a_configuration_file_are_rejected(
    tmp_path: Path, capsys, sync_table: str
) -> None:
    config = tmp_path / "user.toml"
    config.write_text(f"[sync]\n{sync_table}\n")
    (tmp_path / "a.txt").write_text("hello\n")
    assert main(["scan", "--files", str(tmp_path / "a.txt"), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "credentials never go in a configuration file" in err
    assert "pw" not in err.replace("SPILLGUARD_PASSWORD", "")


def test_a_cache_that_clashes_with_the_local_rules_is_ignored_with_a_warning(
    repo: GitRepo, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(repo.path)
    clash = {"name": "AWS_CLIENT_ID", "kind": "custom", "enabled": True, "regexp": "itk_[a-z]{9}"}
    write_cache(cache_path(repo.path, os.environ), cache_data(rules=[clash]))
    repo.write("app.cfg", "nothing here\n")
    assert main(["scan", "--files", "app.cfg"]) == 0
    assert "ignoring the sync cache" in capsys.readouterr().out
