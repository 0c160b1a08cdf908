"""A name and its value on two lines are judged together, whichever line a commit edits.

A Kubernetes env entry, a Terraform variable, a YAML block or plain scalar: the commit
that changes only the value line (or only the name line) adds one line of the two,
and the file supplies the other (``sources.context``). Real pushes into a bare
repository with the pre-receive hook, real commits with the pre-commit hook, and
history scans all judge it; an edit that leaves no secret stays accepted, and a
secret a commit did not touch is not reported again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.sources.context import may_need_context
from testing.gitrepo import GitRepo
from testing.server import Server, blocking, guarded, hooked_commit
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

SECRET = expand("{rand:Aa0:24}", "context")
OTHER = expand("{rand:Aa0:24}", "context-other")

#: (file, its first version: accepted, its second: the same but one line, the rule,
#: the line the finding is on)
CASES = {
    "k8s-value": (
        "deploy.yaml",
        'env:\n  - name: DB_PASSWORD\n    value: "${DB_PASSWORD}"\n  - name: MODE\n    value: prod\n',
        f'env:\n  - name: DB_PASSWORD\n    value: "{SECRET}"\n  - name: MODE\n    value: prod\n',
        "NAME_VALUE_SECRET_NEXT_LINE",
        3,
    ),
    "k8s-name": (
        "deploy.yaml",
        f'env:\n  - name: DB_HOST_SUFFIX\n    value: "{SECRET}"\n',
        f'env:\n  - name: DB_PASSWORD\n    value: "{SECRET}"\n',
        "NAME_VALUE_SECRET_NEXT_LINE",
        3,
    ),
    "terraform-default": (
        "variables.tf",
        'variable "db_password" {\n  type      = string\n  sensitive = true\n  default   = ""\n}\n',
        f'variable "db_password" {{\n  type      = string\n  sensitive = true\n  default   = "{SECRET}"\n}}\n',
        "GENERIC_TERRAFORM_DEFAULT",
        4,
    ),
    "yaml-block": (
        "values.yaml",
        "app:\n  api_token: >-\n    ${API_TOKEN}\n  replicas: 2\n",
        f"app:\n  api_token: >-\n    {SECRET}\n  replicas: 2\n",
        "GENERIC_YAML_BLOCK_SECRET",
        3,
    ),
    "yaml-plain-next-line": (
        "values.yaml",
        "db:\n  host: db.internal\n  password:\n    ${DB_PASSWORD}\n",
        f"db:\n  host: db.internal\n  password:\n    {SECRET}\n",
        "GENERIC_YAML_BLOCK_SECRET",
        4,
    ),
}


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    return guarded(tmp_path, request.param)


@pytest.mark.parametrize("case", CASES)
def test_an_edit_of_one_line_of_the_two_rejects_the_push(server: Server, case: str) -> None:
    path, first, second, rule, line = CASES[case]
    work = server.work
    work.write(path, first)
    work.commit("the entry, without its secret")
    code, output = server.push("main")
    assert code == 0, output
    work.write(path, second)
    work.commit("one line changed")
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == [f"{path}:{line}  {rule}"]


def test_an_edit_beside_an_entry_reports_nothing_again(server: Server) -> None:
    """A secret already in the file (pushed in warn mode) is not the finding of a
    commit that edits the line after it."""
    work = server.work
    work.write(
        "deploy.yaml", f'env:\n  - name: DB_PASSWORD\n    value: "{SECRET}"\n  - name: MODE\n'
    )
    work.commit("a secret pushed in warn mode")
    server.admin("[hook]\nmode = 'warn'\n")
    assert server.push("main")[0] == 0
    server.admin("")
    work.write(
        "deploy.yaml", f'env:\n  - name: DB_PASSWORD\n    value: "{SECRET}"\n  - name: LEVEL\n'
    )
    work.commit("the next entry renamed")
    code, output = server.push("main")
    assert code == 0, output


def test_pre_commit_hook_and_scan_judge_the_edited_line(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    path, first, second, rule, line = CASES["k8s-value"]
    repo.write(path, first)
    repo.commit("the entry")
    assert main(["install", "pre-commit", "--repo", str(repo.path)]) == 0
    repo.write(path, second)
    repo.git("add", path)
    blocked = hooked_commit(repo)
    assert blocked.returncode == 1, blocked.stderr
    assert f"{path}:{line}" in blocked.stderr
    assert f"{rule}  blocking" in blocked.stderr
    assert hooked_commit(repo, "--no-verify").returncode == 0
    report = tmp_path / "report.json"
    code = main(["scan", "--repo", str(repo.path), "--format", "json", "--output", str(report)])
    assert code == 1
    found = json.loads(report.read_text())["findings"]
    assert [(f["path"], f["line"], f["rule"], f["commit"]) for f in found] == [
        (path, line, rule, repo.head())
    ]


def test_which_added_lines_need_the_lines_around_them() -> None:
    assert may_need_context({3: b'    value: "abc"\n'})
    assert may_need_context({3: b'  default   = "x"\n'})
    assert may_need_context({3: b"    aB3dEfGhIjKlMnOp9q\n"})
    assert may_need_context({3: b"api_token: >-\n"})
    assert may_need_context({3: b"  - name: DB_PASSWORD\n"})
    assert may_need_context({3: b'variable "db_password" {\n'})
    assert not may_need_context({3: b"x = 1\n", 4: b"    return compute(x)\n"})
    assert not may_need_context({3: b"  secret_key = os.environ['X']\n"})
    assert not may_need_context({})


def test_the_engine_keeps_only_findings_that_rest_on_added_lines() -> None:
    from spillguard.configuration.rules import builtin_rules

    scanner = Scanner(RuleSet(rules=builtin_rules()))
    before = f'  - name: API_TOKEN\n    value: "{OTHER}"\n  - name: DB_PASSWORD\n'
    fragment = Fragment(
        path="deploy.yaml", text=f'    value: "{SECRET}"\n', start_line=4, before=before
    )
    assert [(f.line, f.rule) for f in scanner.scan(fragment)] == [
        (4, "NAME_VALUE_SECRET_NEXT_LINE")
    ]
