"""History, files and tree scans on several processes report exactly what one reports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pygit2
import pytest

from spillguard.cli import main
from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleError, RuleSet, Selection
from spillguard.detection.engine import Scanner
from spillguard.scanning import parallel
from spillguard.scanning.run import run_scan
from spillguard.sources.history import iter_history, select_commits
from testing.genrepo import generate
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

MAX_SIZE = 1 << 20


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple]:
    target = tmp_path_factory.mktemp("parallel") / "repo.git"
    made = generate(target, commits=300, seed=11)
    return target, made.planted


def commit_ids(path: Path) -> list[str]:
    repo = pygit2.Repository(str(path))
    return [str(commit.id) for commit in select_commits(repo, Selection(all_refs=True))]


def without_seconds(result):
    return result.findings, result.errors, result.skipped, result.stats.commits, result.stats.files


def test_chunks_cover_every_commit_once_in_order() -> None:
    commits = [f"{n:040x}" for n in range(1000)]
    parts = parallel.chunks(commits, 2)
    assert [c for part in parts for c in part] == commits
    assert len(parts) > 2
    assert parallel.chunks([], 2) == []


def test_one_process_and_two_match_the_simple_scan(generated) -> None:
    path, planted = generated
    ruleset = RuleSet(rules=builtin_rules())
    repo = pygit2.Repository(str(path))
    simple = run_scan(iter_history(repo, Selection(all_refs=True), max_size=MAX_SIZE), ruleset)
    assert threading.active_count() == 1  # so jobs=2 really forks
    for jobs in (1, 2):
        result = parallel.scan_commits(
            repo.path, commit_ids(path), ruleset, max_size=MAX_SIZE, jobs=jobs
        )
        assert without_seconds(result) == without_seconds(simple)
        assert result.stats.bytes == simple.stats.bytes
    assert {(f.commit.id, f.path, f.line) for f in simple.findings} >= {
        (p.commit, p.path, p.line) for p in planted if p.kind.startswith("aws")
    }


def test_streamed_findings_come_in_report_order(generated) -> None:
    path, _ = generated
    streamed = []
    result = parallel.scan_commits(
        str(path),
        commit_ids(path),
        RuleSet(rules=builtin_rules()),
        max_size=MAX_SIZE,
        jobs=2,
        on_finding=streamed.append,
    )
    assert streamed == list(result.findings)
    assert streamed


def run_cli(*argv: str) -> tuple[int, dict]:
    completed = subprocess.run(
        [sys.executable, "-m", "spillguard", *argv, "--format", "json", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(completed.stdout)
    report["summary"].pop("seconds")
    return completed.returncode, report


def test_cli_jobs_change_nothing_in_the_report(generated) -> None:
    path, _ = generated
    one = run_cli("scan", "--all", "--repo", str(path), "--jobs", "1")
    two = run_cli("scan", "--all", "--repo", str(path), "-j", "2")
    assert one == two
    assert one[0] == 1
    assert one[1]["summary"]["commits"] > 250


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_jobs_must_be_a_positive_number(value, capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["scan", "--all", "--jobs", value])
    assert raised.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_a_huge_jobs_is_capped_by_the_cpus_and_the_commits(generated) -> None:
    """Not a million forked processes: as many as the CPUs and the chunks can use."""
    cpus = parallel.default_jobs()
    assert parallel.worker_count(10**6, 10**6) == parallel.MAX_JOBS_PER_CPU * cpus
    assert parallel.worker_count(10**6, 3) == min(3, parallel.MAX_JOBS_PER_CPU * cpus)
    path, _ = generated
    assert run_cli("scan", "--all", "--repo", str(path), "--jobs", str(10**6)) == run_cli(
        "scan", "--all", "--repo", str(path), "--jobs", "1"
    )


def test_help_says_how_jobs_is_capped(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    assert "at most 4 per CPU" in " ".join(capsys.readouterr().out.split())


def test_errors_noted_from_a_worker_skip_that_rule_from_then_on() -> None:
    ruleset = RuleSet(rules=builtin_rules())
    rule = next(rule for rule in ruleset.rules if rule.name == "AWS_CLIENT_ID")
    fragment = Fragment(path="a.py", text=f"key = {expand('AKIA{rand:A2:16}', 'note')}\n")
    scanner = Scanner(ruleset)
    assert [f.rule for f in scanner.scan(fragment)] == [rule.name]
    error = RuleError(rule=rule.name, message="exceeded its time budget")
    scanner.note_errors([error])
    assert rule.name not in [f.rule for f in scanner.scan(fragment)]
    assert scanner.errors == [error]


@pytest.fixture(scope="module")
def tree_of_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough files for several chunks: plain text, secrets, binaries, an empty file."""
    root = tmp_path_factory.mktemp("files")
    for number in range(400):
        folder = root / f"pkg{number % 7}"
        folder.mkdir(exist_ok=True)
        text = f"value_{number} = {number}\n" * (number % 13)
        if number % 37 == 0:
            text += f"aws_key = '{expand('AKIA{rand:A2:16}', f'files-{number}')}'\n"
        (folder / f"mod{number}.py").write_text(text)
    (root / "pkg0" / "blob.bin").write_bytes(b"\0binary" * 10)
    return root


def test_files_on_two_processes_match_one(tree_of_files) -> None:
    """A --files scan is cut into chunks of files as history is into chunks of commits."""
    from spillguard.sources.files import list_files, read_files

    ruleset = RuleSet(rules=builtin_rules())
    given = [str(tree_of_files), str(tree_of_files / "missing.py")]
    listed = list_files(given)
    assert len(parallel.chunks(listed, 2)) > 2
    simple = run_scan(read_files(listed, max_size=MAX_SIZE), ruleset, scope="files")
    assert threading.active_count() == 1  # so jobs=2 really forks
    for jobs in (1, 2):
        items = parallel.file_items(MAX_SIZE)
        result = parallel.scan_listed(listed, items, ruleset, jobs=jobs)
        assert without_seconds(result) == without_seconds(simple)
        assert result.stats.bytes == simple.stats.bytes
    assert len(simple.findings) == 11
    # the binary is judged too: its printable runs
    assert {(s.reason, s.failed) for s in simple.skipped} == {("does not exist", True)}


def test_cli_jobs_change_nothing_in_a_files_report(tree_of_files) -> None:
    one = run_cli("scan", "--files", str(tree_of_files), "--jobs", "1")
    two = run_cli("scan", "--files", str(tree_of_files), "--jobs", "2")
    assert one == two
    assert one[0] == 1
    assert one[1]["summary"]["files"] == 401  # the binary's printable runs are judged


def test_a_tree_on_two_processes_matches_one(tree_of_files, tmp_path) -> None:
    """``--tree``: the tree's files are listed by git, then read by the workers, in
    chunks, as libgit2 reads the whole tree (the oracle)."""
    from spillguard import git
    from spillguard.sources.tree import list_tree

    repo = GitRepo(tmp_path / "repo")
    shutil.copytree(tree_of_files, repo.path, dirs_exist_ok=True)
    repo.commit("many files")
    opened = pygit2.Repository(str(repo.path))
    tree = git.resolve_tree(opened, "HEAD")
    ruleset = RuleSet(rules=builtin_rules())
    simple = run_scan(git.iter_tree(opened, tree, max_size=MAX_SIZE), ruleset, scope="files")
    git_dir, listed = list_tree(str(repo.path), "HEAD")
    assert len(parallel.chunks(listed, 2)) > 2
    assert threading.active_count() == 1  # so jobs=2 really forks
    for jobs in (1, 2):
        items = parallel.tree_items(git_dir, MAX_SIZE)
        result = parallel.scan_listed(listed, items, ruleset, jobs=jobs)
        assert without_seconds(result) == without_seconds(simple)
    assert len(simple.findings) == 11
    one = run_cli("scan", "--tree", "HEAD", "--repo", str(repo.path), "--jobs", "1")
    assert one == run_cli("scan", "--tree", "HEAD", "--repo", str(repo.path), "--jobs", "2")
    assert one[1]["summary"]["files"] == 401
