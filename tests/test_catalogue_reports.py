"""Every rule of the catalogue, found for real, is written by every report and hook.

One file per built-in rule (its first true-positive example, at its example path)
is committed once; each report format then writes the scan of that commit, the
pre-commit hook judges the same files staged, and a real push in warn mode and in
block mode shows them to the pusher. A rule whose secret is not on its name's line
(a YAML block scalar, a property list) crashed every writer once; none may now, and
no report may show a secret in full.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.rules import builtin_table
from testing.server import PATH, Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

    from testing.gitrepo import GitRepo

FORMATS = ("text", "json", "jsonl", "sarif", "csv")
#: Secrets shorter than this may occur in a report by chance (in a path, a word).
_CHECKED_LENGTH = 10


def _catalogue_files() -> dict[str, str]:
    """A file per rule: ``rules/NAME/<example path>`` holding its first example."""
    files = {}
    for spec in builtin_table():
        template = spec["tp"][0]
        path = f"rules/{spec['name']}/{spec.get('example_path', 'example.txt')}"
        files[path] = expand(template, f"catalogue-{spec['name']}") + "\n"
    return files


FILES = _catalogue_files()


def _write_all(repo: GitRepo) -> None:
    for path, text in FILES.items():
        repo.write(path, text)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """The catalogue committed once, with a server that has received nothing yet."""
    server = Server(tmp_path_factory.mktemp("catalogue"))
    server.work.write("README.md", "the catalogue\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    _write_all(server.work)
    server.work.commit("every rule")
    return server


@pytest.fixture(scope="module")
def secrets(history: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each file's reported secret in plaintext (path -> secret), as a scan in clear gives it."""
    output = tmp_path_factory.mktemp("plain") / "plain.json"
    argv = ["scan", "--repo", str(history.work.path), "--format", "json"]
    code = main([*argv, "--include-plaintext", "--output", str(output)])
    assert code == 1
    findings = json.loads(output.read_text())["findings"]
    return {finding["path"]: finding["matchText"] for finding in findings}


def test_every_rule_is_found_in_its_own_file(secrets: dict[str, str]) -> None:
    assert sorted(FILES) == sorted(secrets)


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_writes_every_rule_and_shows_no_secret(
    name: str, history: Server, secrets: dict[str, str], tmp_path: Path
) -> None:
    output = tmp_path / f"report.{name}"
    argv = ["scan", "--repo", str(history.work.path), "--format", name, "--output", str(output)]
    assert main(argv) == 1
    report = output.read_text(encoding="utf-8")
    _assert_masked(report, secrets)
    paths = _reported_paths(name, report)
    assert set(FILES) <= paths


def _reported_paths(name: str, report: str) -> set[str]:
    if name == "json":
        return {finding["path"] for finding in json.loads(report)["findings"]}
    if name == "jsonl":
        return {json.loads(line)["path"] for line in report.splitlines()}
    if name == "sarif":
        results = json.loads(report)["runs"][0]["results"]
        return {
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in results
        }
    if name == "csv":
        return {row["path"] for row in csv.DictReader(io.StringIO(report))}
    return {path for path in FILES if f"{path}:" in report}


def _assert_masked(report: str, secrets: dict[str, str]) -> None:
    shown = [
        path
        for path, secret in secrets.items()
        if len(secret) >= _CHECKED_LENGTH and secret in report
    ]
    assert shown == [], "secrets shown in full"


def test_the_pre_commit_hook_shows_every_rule_staged(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    from testing.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "staged")
    _write_all(repo)
    repo.git("add", "-A")
    completed = subprocess.run(
        ["spillguard", "hook", "pre-commit"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )
    assert completed.returncode == 1, completed.stderr
    _assert_masked(completed.stderr + completed.stdout, secrets)
    missing = [path for path in FILES if f"{path}:" not in completed.stderr]
    assert missing == []


# Block first: once the warn push is accepted, the server has the commit.
@pytest.mark.parametrize("mode", ["block", "warn"])
def test_a_push_shows_every_rule_to_the_pusher(
    mode: str, history: Server, secrets: dict[str, str]
) -> None:
    history.admin(f'[hook]\nmode = "{mode}"\n')
    code, output = history.push(f"HEAD:refs/heads/catalogue-{mode}")
    _assert_masked(output, secrets)
    missing = [path for path in FILES if f"{path}:" not in output]
    assert missing == []
    if mode == "warn":
        assert code == 0, output
    else:
        assert code != 0
        assert "refs/heads/catalogue-block" not in history.refs()
