"""The newcomer's path, and every command of the README and docs/, run as written.

A sandbox stands for a fresh machine: a home directory with the user's own
repository (a clone with an origin), spillguard's repository as published (this
repository's own history on a branch ``main``, no tags, plus a commit of the work
tree as it is: the URL the docs' ``https://example.com/spillguard.git`` stands
for), a checkout of it, bare repositories where the docs name ``/srv/git``, and pip
offline, from a wheelhouse repacked from this environment. The README's quick-start
command installs spillguard from the checkout into a fresh virtual environment; the
hook it installs blocks a commit made without that environment on PATH (as from an
IDE); the command printed under the finding reviews it; the next commit passes.
Then every shell command of the README and of docs/ runs in the sandbox, in the
order the pages give them: the CI recipes' steps in a virtual environment of their
own (as a CI job starts), installing the commit the docs pin from the published
repository; the pre-commit framework's commands in a repository whose
``.pre-commit-config.yaml`` is the one the docs give. What cannot run here (a
server, a benchmark, a placeholder) is named with the test that exercises it. Every
``rev:`` and ``@commit`` the docs give is a commit of this repository's history.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest
from packaging.requirements import Requirement

from testing.gitrepo import GitRepo
from testing.tokens import expand
from testing.wheelhouse import build_wheelhouse

if TYPE_CHECKING:
    from collections.abc import Iterable

PROJECT = Path(__file__).resolve().parent.parent
PAGES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
PASSWORD = expand("{rand:Aa0:14}", "newcomer")
URL = "https://example.com/spillguard.git"

#: Commands of the docs that the sandbox does not run, and what exercises them instead.
ELSEWHERE = {
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest": (
        ".ci/run (the suite itself; checked below to run the same commands)"
    ),
    "spillguard review add --at 9cb539d589:config/app.py:12   # ... in that commit": (
        "tests/test_review_finding.py (a commit id of its own)"
    ),
    "spillguard review add --fingerprint 5f0c...          # a JSON/SARIF report's fingerprint (64 digits)": (
        "tests/test_review_finding.py (a fingerprint of its own)"
    ),
    "pip install -e '.[bench]'      # optional: gitleaks and betterleaks, timed in the same run": (
        "bench/ (performance is measured there, never in the suite)"
    ),
    "python bench/run.py            # or --quick for a 2,000-commit smoke run": "bench/",
    "python bench/run.py --real     # git/git and psf/requests, then the generated smoke test": (
        "tests/test_newcomer.py (without network it ends with one line)"
    ),
    "dask scheduler                        # on one machine": "tests/test_audit.py (a cluster)",
    "dask worker tcp://scheduler:8786      # on each worker machine": (
        "tests/test_audit.py (a cluster)"
    ),
    "spillguard audit /srv/git/ --state audit.sqlite --scheduler tcp://scheduler:8786": (
        "tests/test_audit.py (a LocalCluster's scheduler)"
    ),
    "export SPILLGUARD_USERNAME=ada SPILLGUARD_PASSWORD=...        # or ~/.netrc, or the keyring": (
        "tests/test_sync_http.py"
    ),
    "spillguard sync --server https://scm.example.com --project PRJ --repo app   # code hosting": (
        "tests/test_sync_end_to_end.py (the stand-in server)"
    ),
    "spillguard sync --variant wiki --server https://wiki.example.com --space DOCS": (
        "tests/test_sync.py (the stand-in server)"
    ),
    "spillguard sync --variant issue-tracker --server https://issues.example.com --project OPS": (
        "tests/test_sync.py (the stand-in server)"
    ),
    "SPILLGUARD_API_KEY=... spillguard sync --variant hosted --server https://app.example.net": (
        "tests/test_sync.py (the stand-in server)"
    ),
    "spillguard review add --remote --rule INTERNAL_TOKEN -   # mark a string reviewed on the server": (
        "tests/test_sync_review.py (the stand-in server)"
    ),
}


class Command(NamedTuple):
    page: str
    text: str
    #: "sh", or "yaml" for a CI recipe's step
    kind: str = "sh"


def documented_commands() -> list[Command]:
    """Every line of the pages' ``sh`` blocks, and the ``run:``/``script:`` lines of
    their CI recipes that call pip or spillguard, in page order."""
    found: list[Command] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(PROJECT).as_posix()
        for kind, block in re.findall(r"```(sh|yaml)\n(.*?)```", text, flags=re.DOTALL):
            for line in block.splitlines():
                command = line.strip()
                if kind == "yaml":
                    step = re.fullmatch(r"(?:- )?(?:run: )?((?:pip|spillguard) .*)", command)
                    command = step.group(1) if step else ""
                if command:
                    found.append(Command(name, command, kind))
    return found


class Sandbox(NamedTuple):
    root: Path
    home: Path
    checkout: Path
    env: dict[str, str]

    @property
    def yours(self) -> Path:
        return self.home / "your-repository"

    def run(
        self, command: str, cwd: Path, *, venv: bool | Path = True
    ) -> subprocess.CompletedProcess[str]:
        """``command`` in sh, as the docs give it but for the sandbox's places; with
        ``venv`` the quick start's virtual environment is active, as after its command
        (or the one ``venv`` names)."""
        env = dict(self.env)
        if venv:
            active = self.checkout / ".venv" if venv is True else venv
            env["PATH"] = f"{active / 'bin'}{os.pathsep}{env['PATH']}"
            env["VIRTUAL_ENV"] = str(active)
        return subprocess.run(
            ["sh", "-c", self.placed(command)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    def placed(self, command: str) -> str:
        return (
            command.replace(URL, (self.root / "published" / "spillguard.git").as_uri())
            .replace("/opt/spillguard", str(self.root / "opt" / "spillguard"))
            .replace("/srv/git/", f"{self.root / 'srv' / 'git'}/")
        )


def machine_path() -> str:
    """PATH without this suite's virtual environment, as a fresh shell has it, with the
    Python that runs the suite first: its ``python3`` matches the wheelhouse's wheels."""
    ours = str(Path(sys.executable).parent)
    python = str(Path(sys._base_executable).parent)  # the interpreter the venv is made from
    rest = [part for part in os.environ["PATH"].split(os.pathsep) if part not in {ours, python}]
    return os.pathsep.join([python, *rest])


def _extra(requires: Iterable[str], *extras: str) -> list[str]:
    """The requirements (but spillguard's own) that these extras add on this platform."""
    found = []
    for text in requires:
        requirement = Requirement(text)
        marker = requirement.marker
        if requirement.name == "spillguard" or marker is None:
            continue
        if any(marker.evaluate({"extra": extra}) for extra in extras):
            found.append(f"{requirement.name}{requirement.specifier}")
    return found


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    root = tmp_path_factory.mktemp("newcomer")
    requires = importlib.metadata.distribution("spillguard").requires or ()
    dependencies = [requirement for requirement in requires if "extra ==" not in requirement]
    # the quick start's fast extra (its wheels where this platform has them), and the
    # cluster extra of the audit's docs: Dask distributed (extras are not followed)
    wheelhouse = build_wheelhouse(
        [
            *dependencies,
            *_extra(requires, "fast", "vectorscan"),
            "hatchling",
            "dask",
            "distributed",
        ],
        root / "wheels",
    )
    published = publish(root / "published" / "spillguard.git")
    checkout = root / "spillguard"
    git_run("clone", "-q", str(published), str(checkout))
    home = root / "home"
    yours = GitRepo(home / "your-repository")
    yours.write("app.py", "print('hello')\n")
    yours.commit("first")
    # a clone of a server's repository, as most are: pushes have somewhere to go
    GitRepo(root / "origin.git", bare=True)
    yours.git("remote", "add", "origin", str(root / "origin.git"))
    yours.git("push", "-q", "-u", "origin", "main")
    yours.git("remote", "set-head", "origin", "--auto")
    for branch in ("feature", "release"):
        yours.git("branch", branch)
    for bare in ("project.git", "app.git"):
        GitRepo(root / "srv" / "git" / bare, bare=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": machine_path(),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for name in ("VIRTUAL_ENV", "PYTHONPATH"):  # nothing of this suite's environment
        env.pop(name, None)
    return Sandbox(root=root, home=home, checkout=checkout, env=env)


def git_run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def publish(bare: Path) -> Path:
    """This repository as published: its history on ``main`` (no tags, no other branch),
    and on top a commit of the work tree as it is, when it differs from HEAD."""
    git_run("init", "-q", "--bare", "-b", "main", str(bare))
    git_run("-C", str(bare), "fetch", "-q", "--no-tags", str(PROJECT), "HEAD:refs/heads/main")
    index = bare.parent / "work-tree.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    work_tree = ["--git-dir", str(bare), "--work-tree", str(PROJECT)]
    git_run(*work_tree, "add", "-A", env=env)  # .gitignore leaves out .venv and caches
    tree = git_run(*work_tree, "write-tree", env=env)
    if tree != git_run("-C", str(bare), "rev-parse", "main^{tree}"):
        commit = git_run("-C", str(bare), "commit-tree", tree, "-p", "main", "-m", "work tree")
        git_run("-C", str(bare), "update-ref", "refs/heads/main", commit)
    return bare


def readme_command(pattern: str) -> str:
    """The README's own command line that starts with ``pattern``: the test runs what
    the README says, not a copy of it."""
    commands = [c.text for c in documented_commands() if c.page == "README.md"]
    return next(command for command in commands if command.startswith(pattern))


def test_the_newcomer_path(sandbox: Sandbox) -> None:
    quick = sandbox.run(
        readme_command("python3 -m venv .venv && . .venv/bin/activate && pip install "),
        sandbox.checkout,
        venv=False,
    )
    assert quick.returncode == 0, quick.stdout + quick.stderr
    # the quick start scans the checkout it is typed in: spillguard's own history
    assert re.search(
        r"^0 finding\(s\), 0 blocking; scanned \d{3,} commit\(s\)", quick.stdout, re.MULTILINE
    )
    installed = sandbox.run("cd ~/your-repository && spillguard install pre-commit", sandbox.home)
    assert installed.returncode == 0, installed.stderr
    (sandbox.yours / "config").mkdir()
    (sandbox.yours / "config" / "settings.py").write_text(
        f'import os\ndb_password = "{PASSWORD}"\n', encoding="utf-8"
    )
    subprocess.run(["git", "add", "config"], cwd=sandbox.yours, check=True)
    # from an IDE: git on PATH, the virtual environment not
    blocked = sandbox.run("git commit -q -m settings", sandbox.yours, venv=False)
    assert blocked.returncode == 1, blocked.stderr
    assert PASSWORD not in blocked.stderr
    (printed,) = re.findall(r"not a secret\? (spillguard review add .*)", blocked.stderr)
    assert printed == readme_command("spillguard review add --at config/settings.py:2")
    reviewed = sandbox.run(printed, sandbox.yours / "config")  # pasted in the user's shell
    assert reviewed.returncode == 0, reviewed.stderr
    committed = sandbox.run("git commit -q -m settings", sandbox.yours, venv=False)
    assert committed.returncode == 0, committed.stderr
    history = sandbox.run(
        readme_command("spillguard scan --repo ~/your-repository --all"), sandbox.home
    )
    assert history.returncode == 0, history.stdout
    assert PASSWORD not in (sandbox.yours / ".spillguard-reviewed.toml").read_text()


def test_every_documented_command_runs_as_written(sandbox: Sandbox) -> None:
    if not (sandbox.checkout / ".venv").is_dir():  # run alone: the quick start first
        test_the_newcomer_path(sandbox)
    yours = sandbox.yours
    (yours / "config").mkdir(exist_ok=True)
    key = expand("AKIA{rand:A2:16}", "newcomer-docs")
    (yours / "config" / "app.py").write_text("x = 1\n" * 11 + f"key = '{key}'\n")
    subprocess.run(["git", "add", "config/app.py"], cwd=yours, check=True)
    # run by the newcomer's path already (the finding is reviewed now)
    ran = [readme_command("python3 -m venv .venv"), readme_command("spillguard review add")]
    framework = framework_repository(sandbox)
    for command in documented_commands():
        if command.text in ELSEWHERE or command.text in ran:
            continue
        cwd = yours
        venv: bool | Path = True
        if command.text.startswith("cd "):
            cwd = sandbox.home
        elif "# in your spillguard checkout" in command.text:
            cwd = sandbox.checkout
        elif command.text.startswith("pre-commit "):
            cwd = framework
        if command.kind == "yaml":  # a CI job: a Python of its own, in what it checked out
            venv = ci_environment(sandbox)
        placed = command.text
        if " - " in placed:  # the reviewed text from stdin
            placed = f"echo fixture-not-a-secret | {placed}"
        result = sandbox.run(placed, cwd, venv=venv)
        output = result.stdout + result.stderr
        assert result.returncode in {0, 1}, f"{command.page}: {command.text}\n{output}"
        assert "Traceback" not in output, f"{command.page}: {command.text}\n{output}"
        assert "error:" not in result.stderr, f"{command.page}: {command.text}\n{output}"
        ran.append(command.text)
        if command.text.startswith("pre-commit install"):
            assert_the_framework_blocks_a_secret(sandbox, framework)
    assert len(ran) >= 25
    assert (yours / "spillguard.sarif").is_file()  # the CI recipe's report


def ci_environment(sandbox: Sandbox) -> Path:
    """The CI job's Python: a virtual environment of its own, made on first use."""
    venv = sandbox.root / "ci-venv"
    if not venv.is_dir():
        subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    return venv


def framework_repository(sandbox: Sandbox) -> Path:
    """A repository with the docs' ``.pre-commit-config.yaml`` (the URL placed), the
    whole-repository id added as the docs show, and ``pre-commit`` on PATH."""
    hooks = (PROJECT / "docs" / "hooks.md").read_text(encoding="utf-8")
    config, *added = re.findall(r"```yaml\n(.*?)```", hooks, flags=re.DOTALL)
    repo = GitRepo(sandbox.home / "framework-repository")
    repo.write(".pre-commit-config.yaml", sandbox.placed(config + "".join(added)))
    repo.write("README", "hello\n")
    repo.commit("the framework's configuration")
    shim = sandbox.root / "bin" / "pre-commit"
    if not shim.exists():
        shim.parent.mkdir(exist_ok=True)
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pre_commit "$@"\n')
        shim.chmod(0o755)
    sandbox.env["PATH"] = f"{shim.parent}{os.pathsep}{sandbox.env['PATH']}"
    return repo.path


def assert_the_framework_blocks_a_secret(sandbox: Sandbox, framework: Path) -> None:
    """The framework installs spillguard at the commit the docs pin, and its hook blocks
    a commit that adds a secret (the command printed then is run as printed by
    tests/test_pre_commit_framework.py, at this work tree)."""
    key = expand("AKIA{rand:A2:16}", "newcomer-framework")
    (framework / "app.py").write_text(f"key = '{key}'\n")
    subprocess.run(["git", "add", "app.py"], cwd=framework, check=True)
    blocked = sandbox.run("git commit -q -m key", framework, venv=False)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "app.py:1:8  AWS_CLIENT_ID  blocking" in blocked.stdout + blocked.stderr
    assert key not in blocked.stdout + blocked.stderr
    subprocess.run(["git", "rm", "-q", "--cached", "app.py"], cwd=framework, check=True)


def test_every_rev_and_ref_the_docs_pin_is_a_commit_of_this_repository() -> None:
    """spillguard is published as a branch main without tags: a ``rev:`` or ``@ref``
    must be a commit id on it, with the hook ids the docs' configuration names."""
    pinned = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        pinned += [
            (page.name, ref) for ref in re.findall(r"^\s*rev: (\S+)", text, flags=re.MULTILINE)
        ]
        pinned += [(page.name, ref) for ref in re.findall(r"git\+\S+?\.git@([^\s\"']+)", text)]
    assert len(pinned) >= 3
    ids = set(re.findall(r"- id: (\S+)", (PROJECT / "docs" / "hooks.md").read_text()))
    for page, ref in pinned:
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{page}: {ref} is not a commit id"
        git_run("-C", str(PROJECT), "merge-base", "--is-ancestor", ref, "HEAD")
        hooks = git_run("-C", str(PROJECT), "show", f"{ref}:.pre-commit-hooks.yaml")
        assert ids <= set(re.findall(r"- id: (\S+)", hooks)), f"{page}: {ref}"


def test_every_command_not_run_here_is_documented_and_exercised_elsewhere() -> None:
    documented = {command.text for command in documented_commands()}
    assert set(ELSEWHERE) <= documented  # no stale entry
    for where in ELSEWHERE.values():
        assert (PROJECT / where.split(" ")[0]).exists(), where
    ci = (PROJECT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in ci
    assert "pip install --quiet -e '.[test]'" in ci
    assert "python -m pytest" in ci


def test_the_benchmark_of_real_histories_without_network_ends_with_one_line(
    tmp_path: Path,
) -> None:
    """``python bench/run.py --real`` clones git/git and psf/requests on first use: with
    no network (git refuses https here, so no traffic) one line says so, no traceback."""
    env = {**os.environ, "SPILLGUARD_BENCH_WORK": str(tmp_path), "GIT_ALLOW_PROTOCOL": "file"}
    done = subprocess.run(
        [sys.executable, str(PROJECT / "bench" / "run.py"), "--real"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("bench: error: cannot clone https://github.com/psf/requests (")
    assert "Traceback" not in done.stderr
    assert not any(tmp_path.glob("real/*"))  # no half clone left behind


def _section(text: str, heading: str) -> str:
    """The part of a Markdown page under ``heading``, up to the next heading of its level."""
    level = heading.split(" ", maxsplit=1)[0]
    start = text.index(heading + "\n")
    end = text.find(f"\n{level} ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def test_the_quick_start_names_what_the_suite_needs_that_pip_does_not_install() -> None:
    """What .ci/run installs besides the test extras (apt-get and npm packages) is named
    where the README gives the test command: a fresh machine has Python and git only."""
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    packages = [
        name.partition("@")[0] if not name.startswith("@") else "@" + name[1:].partition("@")[0]
        for line in re.findall(r"(?:apt-get install|npm install)([^\n&|;]*)", ci)
        for name in line.split()
        if not name.startswith(("-", ">"))
    ]
    assert {"chromium", "@microsoft/sarif-multitool"} <= set(packages)
    quick = _section((PROJECT / "README.md").read_text(encoding="utf-8"), "## Quick start")
    assert [name for name in packages if name not in quick] == []


def test_operations_are_documented_with_real_rule_names() -> None:
    """Upgrading, removing the package (not only the hooks), a pushed secret (rewrite,
    force-push, the server's copies and forks), rotating per provider, and allowlisting
    without the server app; every rule the rotation table names exists."""
    page = (PROJECT / "docs" / "operations.md").read_text(encoding="utf-8")
    for heading, words in {
        "## Upgrading spillguard and its rules": ["pre-commit autoupdate", "spillguard sync"],
        "## Uninstalling": ["pip uninstall spillguard", "spillguard uninstall", "pipx uninstall"],
        "## A secret that was pushed": ["git filter-repo", "--force", "gc", "Forks", "refs/pull"],
        "## Rotating a secret": ["aws iam", "GitHub", "GitLab", "Slack", "Stripe", "ssh-keygen"],
        "## Allowlisting a string without the server app": ["repository_config", "allowlist_paths"],
    }.items():
        section = _section(page, heading)
        assert [word for word in words if word not in section] == [], heading
    from spillguard.configuration.rules import builtin_rules

    names = {rule.name for rule in builtin_rules()}
    rotation = _section(page, "## Rotating a secret")
    named = set(re.findall(r"`([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)`", rotation))
    assert len(named) > 10
    assert named <= names, named - names
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert "(docs/operations.md)" in readme
