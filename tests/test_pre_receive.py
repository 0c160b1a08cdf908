"""``spillguard hook pre-receive`` in process: git's stdin protocol and bad input."""

from __future__ import annotations

import io

import pytest

from spillguard.cli import main
from spillguard.core.errors import UsageError
from spillguard.core.models import RefUpdate
from spillguard.hooks.pre_receive import parse_ref_updates
from testing.gitrepo import GitRepo

OLD, NEW = "a" * 40, "b" * 40
OLD256, NEW256 = "c" * 64, "d" * 64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ()),
        (f"{OLD} {NEW} refs/heads/main\n", (RefUpdate(OLD, NEW, "refs/heads/main"),)),
        (
            f"{OLD} {NEW} refs/heads/a\n\n{'0' * 40} {NEW} refs/tags/v1\n",
            (RefUpdate(OLD, NEW, "refs/heads/a"), RefUpdate("0" * 40, NEW, "refs/tags/v1")),
        ),
        (f"{OLD256} {'0' * 64} refs/heads/x", (RefUpdate(OLD256, "0" * 64, "refs/heads/x"),)),
    ],
)
def test_parse_ref_updates(text: str, expected: tuple[RefUpdate, ...]) -> None:
    assert parse_ref_updates(text) == expected


@pytest.mark.parametrize(
    "line",
    [
        f"{OLD} {NEW}",
        f"{OLD} {NEW} refs/heads/a extra",
        f"{OLD[:-1]} {NEW} refs/heads/a",
        f"{OLD.upper()} {NEW} refs/heads/a",
        f"{OLD} {NEW256} refs/heads/a x",
    ],
)
def test_malformed_input_names_the_line(line: str) -> None:
    with pytest.raises(UsageError, match="pre-receive input line 2: expected"):
        parse_ref_updates(f"{OLD} {NEW} refs/heads/ok\n{line}\n")


def test_malformed_input_is_one_error_line_and_exit_2(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    monkeypatch.chdir(bare.path)
    monkeypatch.setattr("sys.stdin", io.StringIO("not a ref update\n"))
    assert main(["hook", "pre-receive"]) == 2
    assert capsys.readouterr().err == (
        "spillguard: error: pre-receive input line 1: expected '<old-id> <new-id> <ref>'\n"
    )


def test_broken_administrator_file_rejects_with_one_error_line(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    (bare.path / "spillguard.toml").write_text('on_error = "maybe"\n')
    monkeypatch.chdir(bare.path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["hook", "pre-receive"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spillguard: error: ")
    assert "on_error must be" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "option", [["--format", "json"], ["--output", "report.txt"], ["--include-plaintext"]]
)
def test_options_the_pusher_cannot_be_given_are_refused(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys, option: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["hook", "pre-receive", *option]) == 2
    assert capsys.readouterr().err == (
        f"spillguard: error: hook pre-receive: {option[0]} is not supported "
        "(plain text to the pusher)\n"
    )
    assert not (tmp_path / "report.txt").exists()


@pytest.mark.parametrize(
    ("admin", "code", "verdict"),
    [
        ("", 1, "push rejected: it adds secrets"),
        (
            '[hook]\nmode = "warn"\n',
            3,
            "push rejected by policy (on_error = reject): spillguard failed: ",
        ),
        (
            'on_error = "accept"\n[hook]\nmode = "warn"\n',
            0,
            "push accepted UNCHECKED by policy (on_error = accept): spillguard failed: ",
        ),
    ],
)
def test_a_failure_mid_scan_keeps_what_was_found_and_follows_the_policy(
    tmp_path, admin: str, code: int, verdict: str
) -> None:
    """The second commit names a blob that does not exist: reading it fails."""
    from spillguard.configuration.loading import load_server_config, no_files
    from spillguard.hooks.pre_receive import scan_push_cli
    from spillguard.hooks.pre_receive import verdict as decide
    from testing.tokens import expand

    repo = GitRepo(tmp_path / "repo")
    repo.write("k.env", f"A={expand('AKIA{rand:A2:16}', 'failure')}\n")
    first = repo.commit("adds a key")
    tree = repo.git("mktree", "--missing", input_text=f"100644 blob {'e' * 40}\tgone.txt\n")
    broken = repo.git("commit-tree", tree.strip(), "-p", first, "-m", "broken").strip()
    repo.git("update-ref", "-d", "refs/heads/main")  # neither commit is on the server yet
    (tmp_path / "admin.toml").write_text(admin)
    config = load_server_config(
        repo_dir=str(repo.path),
        config_path=str(tmp_path / "admin.toml"),
        read_file=no_files,
    )
    updates = (RefUpdate("0" * 40, broken, "refs/heads/topic"),)
    scan = scan_push_cli(str(repo.path / ".git"), updates, config, deadline=float("inf"))
    assert [finding.rule for finding in scan.result.findings] == ["AWS_CLIENT_ID"]
    decision = decide(scan, config)
    assert int(decision.code) == code
    assert decision.message.startswith(verdict)


def test_a_ref_name_that_is_not_utf8_does_not_crash_the_hook(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    monkeypatch.chdir(bare.path)
    line = f"{OLD} {'0' * 40} refs/heads/caf\xe9\n".encode("latin-1")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(line), encoding="utf-8"))
    assert main(["hook", "pre-receive"]) == 0
    assert "push accepted: no secrets found" in capsys.readouterr().err


def test_summary_counts_every_new_commit(tmp_path) -> None:
    from spillguard.configuration.loading import load_server_config, no_files
    from spillguard.hooks.pre_receive import scan_push_cli

    repo = GitRepo(tmp_path / "repo")
    repo.write("a.txt", "x = 1\n")
    repo.commit("adds")
    repo.commit("empty")
    repo.git("rm", "-q", "a.txt")
    tip = repo.commit("deletes")
    repo.git("update-ref", "-d", "refs/heads/main")  # none of them is on the server yet
    config = load_server_config(repo_dir=str(repo.path), config_path=None, read_file=no_files)
    updates = (RefUpdate("0" * 40, tip, "refs/heads/topic"),)
    scan = scan_push_cli(str(repo.path / ".git"), updates, config, deadline=float("inf"))
    assert scan.result.stats.commits == 3


def test_without_git_the_hook_fails_closed_in_one_line(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Nothing but git reads a push as git stores it: without git on PATH the push is
    rejected (exit 3) with one line, whatever the administrator's on_error says."""
    bare = GitRepo(tmp_path / "bare.git", bare=True)
    (bare.path / "spillguard.toml").write_text('on_error = "accept"\n')
    monkeypatch.chdir(bare.path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{'0' * 40} {'1' * 40} refs/heads/main\n"))
    assert main(["hook", "pre-receive"]) == 3
    told = capsys.readouterr()
    assert told.err.splitlines() == [
        "spillguard: error: git is not installed (the pre-receive hook reads pushes with it)"
    ]


def test_content_that_failed_to_be_read_leaves_the_push_incomplete(tmp_path) -> None:
    """A part of the push its source could not read (a failed skip) is no clean part:
    the push is incomplete, and the administrator's on_error decides."""
    from spillguard.configuration.loading import load_server_config, no_files
    from spillguard.core.models import ScanResult, Skipped
    from spillguard.hooks.pre_receive import PushScan, _incomplete, _Progress, verdict

    config = load_server_config(repo_dir=str(tmp_path), config_path=None, read_file=no_files)
    result = ScanResult(skipped=(Skipped(path="a.bin", reason="unreadable", failed=True),))
    progress = _Progress(deadline=float("inf"), clock=lambda: 0.0)
    incomplete = _incomplete(0, config, progress, result)
    assert incomplete == "part of the push could not be judged"
    decision = verdict(PushScan(result=result, refs=1, incomplete=incomplete), config)
    assert decision.message.startswith("push rejected by policy (on_error = reject)")
