"""Which files apply to a scan, in which order, and what a server trusts: real files, real repos."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.loading import (
    decoded,
    default_branch_file,
    load_config,
    load_server_config,
    no_files,
)
from spillguard.configuration.reviewed import REVIEWED_FILE, new_file, render_reviewed, with_record
from spillguard.configuration.reviewed import Record as ReviewedRecord
from spillguard.core.errors import ConfigError
from spillguard.detection.fingerprint import reviewed_digest
from spillguard.git import open_repository
from testing.gitrepo import GitRepo
from testing.server import Server, install_hook
from testing.synccache import write_sync_cache
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def enabled(config, name: str) -> bool:
    return next(rule.enabled for rule in config.ruleset.rules if rule.name == name)


def source(config, name: str) -> str:
    return next(rule.source for rule in config.ruleset.rules if rule.name == name)


def user_file(tmp_path: Path, text: str) -> tuple[dict[str, str], Path]:
    """An environment whose XDG_CONFIG_HOME holds ``text`` as the user's own file."""
    path = tmp_path / "xdg" / "spillguard" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}, path


def test_user_file_honours_xdg_config_home(repo: GitRepo, tmp_path: Path) -> None:
    environ, path = user_file(tmp_path, "disabled_rules = ['AWS_CLIENT_ID']\n")
    config = load_config(root=str(repo.path), environ=environ)
    assert not enabled(config, "AWS_CLIENT_ID")
    assert source(config, "AWS_CLIENT_ID") == str(path)
    assert ("global", str(path)) in config.layers


def test_user_file_defaults_to_home_dot_config(repo: GitRepo, tmp_path: Path) -> None:
    path = tmp_path / ".config" / "spillguard" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("disabled_rules = ['AWS_CLIENT_ID']\n")
    config = load_config(root=str(repo.path), environ={"HOME": str(tmp_path)})
    assert source(config, "AWS_CLIENT_ID") == str(path)


def test_config_flag_replaces_the_user_file(repo: GitRepo, tmp_path: Path) -> None:
    environ, _ = user_file(tmp_path, "disabled_rules = ['AWS_CLIENT_ID']\n")
    other = tmp_path / "other.toml"
    other.write_text("disabled_rules = ['GENERIC_PASSWORD']\n")
    config = load_config(root=str(repo.path), config_path=str(other), environ=environ)
    assert enabled(config, "AWS_CLIENT_ID")
    assert not enabled(config, "GENERIC_PASSWORD")


def test_missing_config_flag_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nothere\.toml: cannot read"):
        load_config(root=None, config_path=str(tmp_path / "nothere.toml"), environ={})


def test_file_that_is_not_utf8_is_an_error(repo: GitRepo) -> None:
    repo.write(".spillguard.toml", b"rules = ['\xff']\n")
    with pytest.raises(ConfigError, match=r"\.spillguard\.toml: not UTF-8 text"):
        load_config(root=str(repo.path), environ={})


def test_layers_apply_in_order_user_server_repository_flags(repo: GitRepo, tmp_path) -> None:
    environ, path = user_file(
        tmp_path,
        # keep_local_rules: the rules the server does not list stay as this file has them.
        "disabled_rules = ['AWS_CLIENT_ID', 'AWS_SECRET_ACCESS_KEY']\n"
        "[sync]\nkeep_local_rules = true\n",
    )
    write_sync_cache(
        repo.path,
        environ,
        rules=[
            {"name": "AWS_CLIENT_ID", "kind": "builtin", "enabled": True},
            {"name": "GENERIC_PASSWORD", "kind": "builtin", "enabled": True},
        ],
    )
    repo.write(".spillguard.toml", "disabled_rules = ['GENERIC_PASSWORD']\n")
    config = load_config(root=str(repo.path), environ=environ, include_allowlisted=True)
    repository = str(repo.path / ".spillguard.toml")
    assert [role for role, _ in config.layers] == [
        "builtin",
        "global",
        "server",
        "repository",
        "flags",
    ]
    assert (enabled(config, "AWS_CLIENT_ID"), source(config, "AWS_CLIENT_ID")) == (True, "server")
    assert source(config, "AWS_SECRET_ACCESS_KEY") == str(path)
    assert (enabled(config, "GENERIC_PASSWORD"), source(config, "GENERIC_PASSWORD")) == (
        False,
        repository,
    )
    assert config.ruleset.include_allowlisted
    assert ("include_allowlisted", "command line") in config.origins


def test_offline_leaves_the_synced_layer_out(repo: GitRepo, tmp_path: Path) -> None:
    environ, _ = user_file(tmp_path, "disabled_rules = ['AWS_CLIENT_ID']\n")
    write_sync_cache(repo.path, environ, rules=[{"name": "AWS_CLIENT_ID", "kind": "builtin"}])
    assert enabled(load_config(root=str(repo.path), environ=environ), "AWS_CLIENT_ID")
    offline = load_config(root=str(repo.path), environ=environ, offline=True)
    assert not enabled(offline, "AWS_CLIENT_ID")


def test_reviewed_entries_come_from_the_cache_and_the_repository(repo: GitRepo) -> None:
    write_sync_cache(repo.path, {}, reviewed=[{"digest": reviewed_digest("from-server", "5a17")}])
    reviewed = with_record(new_file(), ReviewedRecord(digest="d" * 64, rule="AWS_CLIENT_ID"))
    repo.write(REVIEWED_FILE, render_reviewed(reviewed))
    config = load_config(root=str(repo.path), environ={})
    assert [(entry.source, entry.rule) for entry in config.ruleset.reviewed] == [
        ("server", None),
        (str(repo.path / REVIEWED_FILE), "AWS_CLIENT_ID"),
    ]


def test_staged_text_is_used_instead_of_the_files_on_disk(repo: GitRepo) -> None:
    repo.write(".spillguard.toml", "disabled_rules = ['AWS_CLIENT_ID']\n")
    repo.write(REVIEWED_FILE, "this is = not [valid")
    config = load_config(
        root=str(repo.path),
        environ={},
        read_file={".spillguard.toml": ("rules = []\n", ".spillguard.toml (staged)")}.get,
    )
    assert enabled(config, "AWS_CLIENT_ID")
    assert config.ruleset.reviewed == ()


# --- the server: what a bare repository's hook trusts -----------------------------------

WEAKENING = (
    "disabled_rules = ['AWS_CLIENT_ID', 'GENERIC_PASSWORD']\n"
    "bypass_token = ''\n[hook]\nmode = 'warn'\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A bare repository whose main has a weakening .spillguard.toml and a reviewed file;
    branch ``feature`` carries an even weaker file that was pushed but is not main."""
    base = tmp_path_factory.mktemp("server")
    bare = GitRepo(base / "bare.git", bare=True)
    work = GitRepo(base / "work")
    work.write(".spillguard.toml", WEAKENING)
    reviewed = with_record(new_file(), ReviewedRecord(digest="e" * 64, reason="fixture"))
    work.write(REVIEWED_FILE, render_reviewed(reviewed))
    work.commit("config")
    work.git("push", "-q", str(bare.path), "HEAD:refs/heads/main")
    work.git("checkout", "-q", "-b", "feature")
    work.write(".spillguard.toml", "inherit_builtin_rules = false\n")
    work.commit("weaker")
    work.git("push", "-q", str(bare.path), "HEAD:refs/heads/feature")
    return bare


def server_config(bare: GitRepo, admin: str | None, tmp_path: Path):
    config_path = None
    if admin is not None:
        config_path = tmp_path / "admin.toml"
        config_path.write_text(admin)
    repo = open_repository(str(bare.path))
    return load_server_config(
        repo_dir=str(bare.path),
        config_path=None if config_path is None else str(config_path),
        read_file=lambda name: default_branch_file(repo, name),
        environ={},
    )


def test_server_ignores_the_repository_file_unless_enabled(server: GitRepo, tmp_path) -> None:
    config = server_config(server, None, tmp_path)
    assert enabled(config, "AWS_CLIENT_ID")
    assert config.ruleset.reviewed == ()
    assert [role for role, _ in config.layers] == ["builtin"]


def test_server_reads_the_default_branch_when_enabled(server: GitRepo, tmp_path) -> None:
    config = server_config(server, "repository_config = true\n", tmp_path)
    assert not enabled(config, "AWS_CLIENT_ID")
    assert enabled(config, "AWS_SECRET_ACCESS_KEY")  # feature's file is not main's
    assert source(config, "AWS_CLIENT_ID") == ".spillguard.toml on refs/heads/main"
    assert [entry.source for entry in config.ruleset.reviewed] == [
        f"{REVIEWED_FILE} on refs/heads/main"
    ]
    # Policy keys in a repository file are the administrator's: ignored, said so.
    assert (config.bypass_tokens[0], config.hook_mode) == ("skip-secret-scan", "block")
    assert any("bypass_token is the administrator's setting" in n for n in config.notices)


def test_server_locked_rule_survives_the_repository_file(server: GitRepo, tmp_path) -> None:
    admin = "repository_config = true\nlocked_rules = ['AWS_CLIENT_ID']\n"
    config = server_config(server, admin, tmp_path)
    assert enabled(config, "AWS_CLIENT_ID")
    assert not enabled(config, "GENERIC_PASSWORD")
    assert any("AWS_CLIENT_ID is locked by the administrator" in n for n in config.notices)


def test_administrators_file_in_the_bare_repository(server: GitRepo) -> None:
    admin = server.path / "spillguard.toml"
    admin.write_text("disabled_rules = ['GENERIC_PASSWORD']\n")
    try:
        config = load_server_config(
            repo_dir=str(server.path),
            config_path=None,
            read_file=no_files,
            environ={},
        )
    finally:
        admin.unlink()
    assert source(config, "GENERIC_PASSWORD") == str(admin)


def test_server_ignores_a_broken_repository_file_but_keeps_its_own(tmp_path: Path) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    work = GitRepo(tmp_path / "work")
    work.write(".spillguard.toml", "[custom_rules]\nAWS_CLIENT_ID = 'akid_[0-9]{20}'\n")
    work.commit("clashing custom rule")
    work.git("push", "-q", str(bare.path), "HEAD:refs/heads/main")
    config = server_config(bare, "repository_config = true\nmax_commits = 7\n", tmp_path)
    assert config.max_commits == 7
    assert enabled(config, "AWS_CLIENT_ID")
    assert any(
        "repository configuration ignored" in n and "has the name of a built-in rule" in n
        for n in config.notices
    )


def test_a_push_cannot_review_its_own_secret(tmp_path: Path) -> None:
    """The reviewed file, like .spillguard.toml, is judged as it was before the push."""
    server = Server(tmp_path)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    assert server.push("HEAD:refs/heads/main")[0] == 0
    install_hook(server.bare.path)
    server.admin("repository_config = true\n")
    key = expand("AKIA{rand:A2:16}", "self-review")
    assert main(["review", "add", key, "--repo", str(server.work.path)]) == 0
    server.work.write("k.env", f"A={key}\n")
    server.work.commit("a secret and its own review")
    code, output = server.push("HEAD:refs/heads/main")
    assert code != 0
    assert "k.env:1  AWS_CLIENT_ID" in output
    # Once on main (here, fetched by the administrator), the entry counts for later pushes.
    server.bare.git("fetch", "-q", str(server.work.path), "HEAD:refs/heads/main")
    server.work.write("again.env", f"B={key}\n")
    server.work.commit("the reviewed string again")
    code, output = server.push("HEAD:refs/heads/main")
    assert code == 0, output


def test_a_file_from_git_that_is_not_utf8_is_an_error() -> None:
    assert decoded(None, "x") is None
    with pytest.raises(ConfigError, match=r"^\.spillguard\.toml \(staged\): not UTF-8 text$"):
        decoded(b"rules = ['\xff']\n", ".spillguard.toml (staged)")


def test_server_ignores_a_broken_reviewed_file_on_the_default_branch(tmp_path: Path) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    work = GitRepo(tmp_path / "work")
    work.write(".spillguard.toml", "disabled_rules = ['GENERIC_PASSWORD']\n")
    work.write(REVIEWED_FILE, "version = 1\n")
    work.commit("no salt")
    work.git("push", "-q", str(bare.path), "HEAD:refs/heads/main")
    config = server_config(bare, "repository_config = true\n", tmp_path)
    assert enabled(config, "GENERIC_PASSWORD")
    assert any(
        f"repository configuration ignored: {REVIEWED_FILE} on refs/heads/main: missing key"
        in notice
        for notice in config.notices
    )


def test_a_byte_order_mark_is_not_an_error(repo: GitRepo) -> None:
    repo.write(".spillguard.toml", b"\xef\xbb\xbfdisabled_rules = ['AWS_CLIENT_ID']\n")
    assert not enabled(load_config(root=str(repo.path), environ={}), "AWS_CLIENT_ID")
    assert decoded(b"\xef\xbb\xbfrules = []\n", "staged") == ("rules = []\n", "staged")
