"""An administrator's day: real pushes into a real bare repository with the hook.

A new administrator installs the hook, a push is rejected for a false positive, and
the administrator reviews it on the server; a pusher meets a locked rule, warn mode,
a broken administrator's file. One server is shared by the module; each test
leaves the administrator's files as it found them.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FIXTURE_KEY = expand("AKIA{rand:A2:16}", "administrator-fixture")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    server = Server(tmp_path_factory.mktemp("server"))
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("HEAD:refs/heads/main")
    install_hook(server.bare.path)
    return server


@pytest.fixture(autouse=True)
def fresh(server: Server) -> Iterator[None]:
    """Each test starts at main with no administrator's file and no reviewed entry."""
    server.work.git("checkout", "-q", "--detach", "main")
    yield
    for name in ("spillguard.toml", "spillguard-reviewed.toml"):
        (server.bare.path / name).unlink(missing_ok=True)
    server.work.git("reset", "-q", "--hard")
    server.work.git("clean", "-q", "-fdx")


def review_on_server(
    server: Server, text: str, *extra: str, monkeypatch: pytest.MonkeyPatch
) -> int:
    """``spillguard review add - --repo BARE.git ...`` with the text on stdin."""
    monkeypatch.setattr("sys.stdin", io.StringIO(text + "\n"))
    return main(["review", "add", "-", "--repo", str(server.bare.path), *extra])


def flat(output: str) -> str:
    """git's ``remote:`` lines as one line of text, as the pusher reads the sentences."""
    return " ".join(" ".join(line.removeprefix("remote:").split()) for line in output.splitlines())


def push_fixture(server: Server, branch: str) -> tuple[int, str]:
    server.work.write("tests/fixtures/aws.env", f"AWS_ACCESS_KEY_ID={FIXTURE_KEY}\n")
    server.work.commit(f"a test fixture for {branch}")  # its own commit: not one pushed before
    return server.push(f"HEAD:refs/heads/{branch}")


@pytest.mark.parametrize(
    ("admin", "rule"),
    [
        ("", ["--rule", "AWS_CLIENT_ID"]),
        ("repository_config = true\n", []),  # a repository's files trusted; every rule
    ],
)
def test_a_review_on_the_server_lets_the_next_push_pass(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys, admin: str, rule: list[str]
) -> None:
    server.admin(admin)
    branch = f"fixture-{len(rule)}"
    code, output = push_fixture(server, branch)
    assert code != 0
    assert "AWS_CLIENT_ID" in output
    assert review_on_server(server, FIXTURE_KEY, *rule, monkeypatch=monkeypatch) == 0
    reviewed = server.bare.path / "spillguard-reviewed.toml"
    assert f"added to {reviewed}" in capsys.readouterr().err
    assert FIXTURE_KEY not in reviewed.read_text()
    code, output = server.push(f"HEAD:refs/heads/{branch}")
    assert code == 0, output
    assert "silenced: 1 reviewed" in output


def test_scan_hook_and_audit_judge_a_bare_repository_with_the_same_reviewed_entries(
    server: Server, monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path
) -> None:
    # The fixture is on the server already: pushed by break-glass, before any review.
    server.admin('bypass_push_option = "spillguard-bypass"\n')
    server.bare.git("config", "receive.advertisePushOptions", "true")
    server.work.write("fixture.env", f"AWS_ACCESS_KEY_ID={FIXTURE_KEY}\n")
    server.work.commit("a fixture")
    assert server.push("-o", "spillguard-bypass", "HEAD:refs/heads/audited")[0] == 0
    bare = str(server.bare.path)

    def scan_and_audit(state: str) -> tuple[int, int]:
        scan = main(["scan", "--repo", bare, "--all", "--format", "json", "--quiet"])
        audit = ["audit", bare, "--state", str(tmp_path / state), "--branches", "*", "--jobs", "1"]
        found = main([*audit, "--format", "json", "--quiet"])
        capsys.readouterr()
        return scan, found

    assert scan_and_audit("before.sqlite") == (1, 1)
    assert review_on_server(server, FIXTURE_KEY, monkeypatch=monkeypatch) == 0
    assert scan_and_audit("after.sqlite") == (0, 0)
    server.work.write("copy.env", f"AWS_ACCESS_KEY_ID={FIXTURE_KEY}\n")
    server.work.commit("the fixture again")
    code, output = server.push("HEAD:refs/heads/audited")
    assert code == 0, output
    assert "silenced: 1 reviewed" in output


def test_a_pushed_reviewed_file_never_reviews_the_push_that_brings_it(
    server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only the administrator's files review on the server: a pusher who writes the
    reviewed files (the repository's, or one named like the administrator's) into a
    commit is still rejected, also where the administrator trusts repository files."""
    server.admin("repository_config = true\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert main(["review", "add", FIXTURE_KEY, "--repo", str(elsewhere)]) == 0
    made = (elsewhere / ".spillguard-reviewed.toml").read_text()
    server.work.write(".spillguard-reviewed.toml", made)
    server.work.write("spillguard-reviewed.toml", made)
    code, output = push_fixture(server, "self-reviewed")
    assert code != 0
    assert "AWS_CLIENT_ID" in output


def test_a_pragma_on_a_locked_rule_is_met_with_the_lock_and_who_can_help(server: Server) -> None:
    server.admin('locked_rules = ["AWS_CLIENT_ID"]\ncontact = "#security on chat"\n')
    server.work.write("fixture.env", f"AWS_ID={FIXTURE_KEY}  # pragma: allowlist-secret\n")
    server.work.commit("a fixture, with the pragma the last rejection advised")
    code, output = server.push("HEAD:refs/heads/locked")
    output = flat(output)
    assert code != 0
    assert "AWS_CLIENT_ID" in output
    assert "the administrator locked this rule, so a pragma does not hide it" in output
    assert "Ask #security on chat to review the match on the server" in output
    assert f"spillguard review add - --repo {server.bare.path} --rule AWS_CLIENT_ID" in output
    assert "put 'pragma: allowlist-secret' in a comment" not in output


def test_pragmas_turned_off_are_not_advised(server: Server) -> None:
    server.admin("allow_pragma = false\n")
    code, output = push_fixture(server, "no-pragma")
    output = flat(output)
    assert code != 0
    assert "pragmas are turned off here (allow_pragma = false)" in output
    assert "the administrator of this server to review the match on the server" in output
    assert "put 'pragma: allowlist-secret' in a comment" not in output


def test_warn_mode_says_the_push_is_in_and_asks_for_no_push_again(server: Server) -> None:
    server.admin('[hook]\nmode = "warn"\n')
    code, output = push_fixture(server, "warned")
    output = flat(output)
    assert code == 0, output
    assert "push accepted (warn-only mode)" in output
    assert (
        'the push was accepted (hook.mode = "warn") and these commits are on the server' in output
    )
    assert "revoke and rotate it" in output
    assert "and push again" not in output
    assert "git commit --amend" not in output


def test_a_top_level_key_after_a_table_is_named_as_such_to_both(server: Server, capsys) -> None:
    server.admin(
        "[custom_rules]\nINTERNAL_TOKEN = 'itk_[a-z0-9]{24}'\nlocked_rules = ['AWS_CLIENT_ID']\n"
    )
    meant = (
        "unknown key 'locked_rules': locked_rules is a top-level key, but it is written "
        "after [custom_rules], so TOML reads it as part of that table: move it above the "
        "[custom_rules] line"
    )
    assert main(["config", "check", "--repo", str(server.bare.path)]) == 2
    assert meant in capsys.readouterr().err
    server.work.write("notes.txt", "nothing secret\n")
    server.work.commit("a clean change")
    code, output = server.push("HEAD:refs/heads/broken-admin")
    output = flat(output)
    assert code != 0
    assert meant in output
    assert "malformed" not in output
    assert "UPPER_SNAKE_CASE" not in output
    assert "the server's spillguard configuration is broken" in output
    assert "tell the administrator of this server" in output


def test_a_top_level_key_in_the_hook_table_is_named_as_such(server: Server, capsys) -> None:
    server.admin('[hook]\nmode = "warn"\nallow_pragma = false\n')
    assert main(["config", "check", "--repo", str(server.bare.path)]) == 2
    assert "[hook]: unknown key 'allow_pragma': allow_pragma is a top-level key" in (
        capsys.readouterr().err
    )


def test_config_check_of_a_server_repository_is_a_summary_unless_asked(
    server: Server, capsys
) -> None:
    server.admin(
        "locked_rules = ['AWS_CLIENT_ID']\ndisabled_rules = ['GENERIC_PASSWORD']\n"
        "[custom_rules]\nINTERNAL_TOKEN = { regexp = 'itk_[a-z0-9]{24}', blocking = false }\n"
    )
    bare = str(server.bare.path)
    assert main(["config", "check", "--repo", bare]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) < 60
    assert "built-in, 1 custom):" in out
    assert "1 locked" in out
    rules = out.split("rules:", 1)[1].split("settings:", 1)[0].splitlines()[2:]
    listed = [line.split()[0] for line in rules]
    assert listed == ["AWS_CLIENT_ID", "GENERIC_PASSWORD", "INTERNAL_TOKEN"]
    assert out.endswith("configuration OK\n")
    assert main(["config", "check", "--repo", bare, "--rules"]) == 0
    everything = capsys.readouterr().out
    assert len(everything.splitlines()) > 1000
    assert "  every rule:" in everything


def test_the_first_push_to_a_new_remote_says_nothing_of_its_default_branch(
    tmp_path: Path,
) -> None:
    """A developer's first push, with the pre-push hook, into a repository just made."""
    import subprocess
    import sys

    from testing.gitrepo import GitRepo
    from testing.server import PATH

    GitRepo(tmp_path / "new.git", bare=True)
    work = GitRepo(tmp_path / "work")
    work.write("README.md", "hello\n")
    work.commit("first")
    work.git("remote", "add", "origin", str(tmp_path / "new.git"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PATH": PATH}
        return subprocess.run(
            args, cwd=work.path, capture_output=True, text=True, check=False, env=env
        )

    installed = run(sys.executable, "-m", "spillguard", "install", "pre-push")
    assert installed.returncode == 0, installed.stderr
    pushed = run("git", "push", "-u", "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
    assert "scanned 1 commit(s)" in pushed.stderr
    assert "default branch" not in pushed.stderr
    assert "note:" not in pushed.stderr
