"""What the audit remembers across runs: a repository that fails once, a configuration
that changes, and the cap on the commits a branch may bring."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testing.estate import by_branch, repository
from testing.estate import run_audit as audit

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    """``team/app.git``: three commits on main, the last with a blocking secret."""
    return repository(tmp_path / "estate" / "team" / "app.git", "state", secret=True)


def test_a_repository_unreadable_once_keeps_what_was_judged(
    leaky: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "audit.sqlite")
    code, tree, _ = audit(capsys, str(leaky), "--state", state)
    assert (code, tree["summary"]["commits"]) == (1, 4)
    ref = leaky / "refs" / "heads" / "main"
    tip = ref.read_text()
    ref.write_text("1" * len(tip.strip()) + "\n")  # an object that is not there
    code, tree, _ = audit(capsys, str(leaky), "--state", state)
    assert (code, tree["summary"]["failed"]) == (3, 1)
    ref.write_text(tip)
    code, tree, _ = audit(capsys, str(leaky), "--state", state)
    # Its branch and finding were kept: nothing to judge again, the finding still there.
    assert (code, tree["summary"]["commits"]) == (1, 0)
    assert by_branch(tree)["team/app:main"]["byRule"] == {"AWS_SECRET_ACCESS_KEY": 1}


def test_a_branch_judged_again_under_new_rules_has_each_finding_once(
    leaky: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "audit.sqlite")
    admin = tmp_path / "admin.toml"
    admin.write_text("")
    audit(capsys, str(leaky), "--state", state, "--config", str(admin))
    admin.write_text("[custom_rules]\nMARKER = { regexp = 'nowhere_[0-9]{9}' }\n")
    code, tree, _ = audit(capsys, str(leaky), "--state", state, "--config", str(admin))
    branch = by_branch(tree)["team/app:main"]
    assert (code, branch["reason"], tree["summary"]["commits"]) == (1, "outdated", 4)
    assert branch["byRule"] == {"AWS_SECRET_ACCESS_KEY": 1}


def test_max_commits_allows_exactly_that_many(
    leaky: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "audit.sqlite")
    code, tree, _ = audit(capsys, str(leaky), "--state", state, "--max-commits", "3")
    assert (code, tree["summary"]["failed"]) == (3, 1)  # four commits: too many
    code, tree, _ = audit(capsys, str(leaky), "--state", state, "--max-commits", "4")
    assert (code, tree["summary"]["failed"], tree["summary"]["commits"]) == (1, 0, 4)
