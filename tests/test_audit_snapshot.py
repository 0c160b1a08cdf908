"""An audit where nothing changed opens no repository; one where something did judges it.

A repository whose refs and configuration files are as when it was last judged is
taken as current from the state alone (``audit.snapshot``). Each test here changes one
thing a snapshot must see (a loose ref, a packed ref, HEAD, the administrator's files,
``--branches``) and fails if the audit skipped the change. Real repositories, real git.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from spillguard.cli import main
from testing.estate import AWS_SECRET, Commit, by_branch, repository, write_commits
from testing.estate import run_audit as audit
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

LATER = 1_800_000_000


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    """team/app.git (clean, three commits on main) and team/lib.git (a secret on main)."""
    root = tmp_path / "estate"
    repository(root / "team" / "app.git", "app", secret=False)
    repository(root / "team" / "lib.git", "lib", secret=True)
    return root


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def _secret_commit(repo: Path, branch: str) -> None:
    """A commit with a blocking secret on ``branch``, made from main if it is new."""
    if branch != "main":
        _git(repo, "branch", branch, "main")
    line = expand(AWS_SECRET, f"later-{branch}")
    write_commits(repo, [Commit(branch, "later.py", f"{line}\n", LATER)], existing=True)


def _comparable(tree: dict[str, Any]) -> dict[str, Any]:
    tree["summary"].pop("seconds")
    return tree


def _audited_twice(capsys: pytest.CaptureFixture[str], estate: Path, state: str) -> None:
    """Judged, then found current: the next audit compares with a snapshot."""
    audit(capsys, str(estate), "--state", state)
    assert audit(capsys, str(estate), "--state", state)[1]["summary"]["commits"] == 0


def test_an_unchanged_estate_reports_what_opening_every_repository_reports(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    code, fast, _ = audit(capsys, str(estate), "--state", state)
    with sqlite3.connect(state) as connection:
        connection.execute("UPDATE repositories SET snapshot = NULL")  # each one opened
    connection.close()
    slow = audit(capsys, str(estate), "--state", state)
    assert (code, _comparable(fast)) == (slow[0], _comparable(slow[1]))
    assert code == 1
    assert by_branch(fast)["team/lib:main"]["byRule"] == {"AWS_SECRET_ACCESS_KEY": 1}
    assert {b["reason"] for b in by_branch(fast).values()} == {"current"}


def test_an_unchanged_repository_is_not_opened_so_its_objects_are_not_read(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As docs/audit.md says: refs and configuration are compared, nothing more."""
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    shutil.rmtree(estate / "team" / "lib.git" / "objects")
    (estate / "team" / "lib.git" / "objects").mkdir()
    code, tree, err = audit(capsys, str(estate), "--state", state)
    assert (code, err) == (1, "")
    assert by_branch(tree)["team/lib:main"]["reason"] == "current"
    (estate / "team" / "lib.git" / "HEAD").write_text("ref: refs/heads/main\n\n")  # touched
    code, tree, err = audit(capsys, str(estate), "--state", state)
    assert (code, tree["summary"]["failed"]) == (3, 1)  # opened: its commits are gone
    assert "team/lib: unreadable" in err


def test_a_loose_ref_moved_to_a_secret_is_judged(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    _secret_commit(estate / "team" / "app.git", "main")
    code, tree, _ = audit(capsys, str(estate), "--state", state)
    branch = by_branch(tree)["team/app:main"]
    assert (code, branch["reason"], branch["commitsJudged"], branch["state"]) == (
        1, "behind", 1, "vulnerable",
    )  # fmt: skip


def test_a_packed_ref_moved_to_a_secret_is_judged(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = estate / "team" / "app.git"
    _git(app, "pack-refs", "--all")
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    _secret_commit(app, "elsewhere")  # a commit no judged branch has
    packed = (app / "packed-refs").read_text()
    tip = _git(app, "rev-parse", "refs/heads/elsewhere")
    _git(app, "update-ref", "-d", "refs/heads/elsewhere")
    old = _git(app, "rev-parse", "refs/heads/main")
    # main moved inside packed-refs alone, to a line of the same length: no loose ref.
    (app / "packed-refs").write_text(
        packed.replace(f"{old} refs/heads/main", f"{tip} refs/heads/main")
    )
    assert not (app / "refs" / "heads" / "main").exists()
    code, tree, _ = audit(capsys, str(estate), "--state", state)
    assert code == 1
    assert by_branch(tree)["team/app:main"]["state"] == "vulnerable"


def _default_branches(capsys: pytest.CaptureFixture[str], estate: Path, state: str) -> Any:
    """An audit of the default branches alone (no ``--branches``): its status tree."""
    main(["audit", str(estate), "--state", state, "--format", "json", "--quiet"])
    return json.loads(capsys.readouterr().out)


def _secret_elsewhere(
    capsys: pytest.CaptureFixture[str], estate: Path, state: str, branch: str
) -> Path:
    """app's secret on a new ``branch``, unseen by two audits of the default branches
    (the second compares with snapshots); app's folder."""
    app = estate / "team" / "app.git"
    _secret_commit(app, branch)
    for _ in range(2):
        assert sorted(by_branch(_default_branches(capsys, estate, state))) == [
            "team/app:main", "team/lib:main",
        ]  # fmt: skip
    return app


def test_a_new_default_branch_is_judged(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    app = _secret_elsewhere(capsys, estate, state, "trunk")
    _git(app, "symbolic-ref", "HEAD", "refs/heads/trunk")
    branches = by_branch(_default_branches(capsys, estate, state))
    assert sorted(branches) == ["team/app:trunk", "team/lib:main"]
    assert branches["team/app:trunk"]["state"] == "vulnerable"


def _admin_rule(repo: Path, _: pytest.MonkeyPatch) -> None:
    (repo / "spillguard.toml").write_text(
        "[custom_rules]\nSEED_MARKER = { regexp = '\\bapp\\b', blocking = true }\n"
    )


def _admin_review(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = expand(AWS_SECRET, "lib").split('"')[1]
    monkeypatch.setattr("sys.stdin", io.StringIO(secret + "\n"))
    assert main(["review", "add", "-", "--repo", str(repo)]) == 0


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("app", _admin_rule, ("vulnerable", 3)),  # the administrator's new rule: 3 commits
        ("lib", _admin_review, ("clean", 0)),  # the administrator reviewed lib's secret
    ],
)
def test_a_change_to_the_administrators_files_in_a_repository_judges_it_again(
    estate: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    change: Any,
    expected: tuple[str, int],
) -> None:
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    change(estate / "team" / f"{name}.git", monkeypatch)
    capsys.readouterr()
    _, tree, _ = audit(capsys, str(estate), "--state", state)
    branch = by_branch(tree)[f"team/{name}:main"]
    assert (branch["reason"], branch["commitsJudged"]) == ("outdated", 3 + (name == "lib"))
    assert (branch["state"], branch["blocking"]) == expected


def test_other_branches_asked_for_are_judged(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    _secret_elsewhere(capsys, estate, state, "develop")
    tree = audit(capsys, str(estate), "--state", state)[1]  # --branches '*'
    assert by_branch(tree)["team/app:develop"]["state"] == "vulnerable"
    assert by_branch(tree)["team/app:main"]["reason"] == "current"


def test_a_deleted_branch_new_and_removed_repositories_are_seen(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = estate / "team" / "app.git"
    _secret_commit(app, "develop")
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    _git(app, "branch", "-D", "develop")
    shutil.rmtree(estate / "team" / "lib.git")
    repository(estate / "team" / "web.git", "web", secret=True)
    code, tree, _ = audit(capsys, str(estate), "--state", state)
    assert sorted(by_branch(tree)) == ["team/app:main", "team/web:main"]
    assert by_branch(tree)["team/web:main"]["reason"] == "new"
    assert code == 1  # web's secret


def test_a_state_from_before_snapshots_keeps_its_memory(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    audit(capsys, str(estate), "--state", state)
    with sqlite3.connect(state) as connection:
        connection.execute("ALTER TABLE repositories DROP COLUMN snapshot")
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    connection.close()
    code, tree, err = audit(capsys, str(estate), "--state", state)
    assert (code, tree["summary"]["commits"], err) == (1, 0, "")  # opened once, not judged
    with sqlite3.connect(state) as connection:
        assert connection.execute("SELECT count(snapshot) FROM repositories").fetchone() == (2,)
    connection.close()


def test_a_repository_with_a_file_that_cannot_be_read_is_opened_each_time(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    _audited_twice(capsys, estate, state)
    packed = estate / "team" / "app.git" / "packed-refs"
    packed.unlink(missing_ok=True)
    packed.symlink_to(packed.name)  # a loop: no snapshot (libgit2 reads the loose refs)
    for _ in range(2):
        code, tree, _ = audit(capsys, str(estate), "--state", state)
        assert (code, by_branch(tree)["team/app:main"]["reason"]) == (1, "current")
        with sqlite3.connect(state) as connection:
            rows = connection.execute("SELECT name, snapshot IS NULL FROM repositories")
            assert dict(rows) == {"app": 1, "lib": 0}
        connection.close()


def test_a_config_that_cannot_be_read_fails_each_repository(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.sqlite")
    code, tree, err = audit(capsys, str(estate), "--state", state, "--config", str(tmp_path))
    assert (code, tree["summary"]["failed"]) == (3, 2)
    assert err.count(f"{tmp_path}: cannot read: Is a directory") == 2
