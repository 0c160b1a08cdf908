"""The newcomer's path, and every command of the README and docs/, run as written.

A sandbox stands for a fresh machine: a home directory with the user's own
repository, a copy of this checkout (a git repository tagged v0.2.0, the URL the
docs' ``git+https://...`` stands for), bare repositories where the docs name
``/srv/git``, and pip offline, from a wheelhouse repacked from this environment.
The README's quick-start command installs spillguard from the checkout into a
fresh virtual environment; the hook it installs blocks a commit made without
that environment on PATH (as from an IDE); the command printed under the finding
reviews it; the next commit passes. Then every shell command of the README and
of docs/ runs in the sandbox, in the order the pages give them, or is named here
with the test that exercises it instead (a server, a benchmark, a placeholder).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from testing.gitrepo import GitRepo
from testing.tokens import expand
from testing.wheelhouse import build_wheelhouse

PROJECT = Path(__file__).resolve().parent.parent
PAGES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
PASSWORD = expand("{rand:Aa0:14}", "newcomer")
URL = "https://example.com/spillguard.git"

#: Commands of the docs that the sandbox does not run, and what exercises them instead.
ELSEWHERE = {
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest": (
        ".ci/run (the suite itself; checked below to run the same commands)"
    ),
    "pre-commit install -t pre-commit -t pre-push": "tests/test_pre_commit_framework.py",
    "pre-commit run --hook-stage manual spillguard-history": "tests/test_pre_commit_framework.py",
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
        "bench/"
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
                    found.append(Command(name, command))
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
        self, command: str, cwd: Path, *, venv: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``command`` in sh, as the docs give it but for the sandbox's places; with
        ``venv`` the quick start's virtual environment is active, as after its command."""
        env = dict(self.env)
        if venv:
            env["PATH"] = f"{self.checkout / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"
            env["VIRTUAL_ENV"] = str(self.checkout / ".venv")
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
            command.replace(URL, (self.root / "spillguard").as_uri())
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


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    root = tmp_path_factory.mktemp("newcomer")
    dependencies = [
        requirement
        for requirement in importlib.metadata.distribution("spillguard").requires or ()
        if "extra ==" not in requirement
    ]
    wheelhouse = build_wheelhouse([*dependencies, "hatchling"], root / "wheels")
    checkout = root / "spillguard"
    release = GitRepo(checkout)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(PROJECT / name, checkout / name)
    shutil.copytree(PROJECT / "src", checkout / "src", ignore=shutil.ignore_patterns("__pycache__"))
    release.commit("spillguard")
    release.git("tag", "v0.2.0")
    home = root / "home"
    yours = GitRepo(home / "your-repository")
    yours.write("app.py", "print('hello')\n")
    yours.commit("first")
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


def readme_command(pattern: str) -> str:
    """The README's own command line that starts with ``pattern``: the test runs what
    the README says, not a copy of it."""
    commands = [c.text for c in documented_commands() if c.page == "README.md"]
    return next(command for command in commands if command.startswith(pattern))


def test_the_newcomer_path(sandbox: Sandbox) -> None:
    quick = sandbox.run(
        readme_command("python3 -m venv .venv && . .venv/bin/activate && pip install . "),
        sandbox.checkout,
        venv=False,
    )
    assert quick.returncode == 0, quick.stdout + quick.stderr
    # the quick start scans the checkout it is typed in: spillguard's own, one commit here
    assert "0 finding(s), 0 blocking; scanned 1 commit(s)" in quick.stdout
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
    for command in documented_commands():
        if command.text in ELSEWHERE or command.text in ran:
            continue
        cwd = yours
        if command.text.startswith("cd "):
            cwd = sandbox.home
        elif "./spillguard" in command.text:  # a checkout in the current directory
            cwd = sandbox.root
        placed = command.text
        if " - " in placed:  # the reviewed text from stdin
            placed = f"echo fixture-not-a-secret | {placed}"
        result = sandbox.run(placed, cwd)
        output = result.stdout + result.stderr
        assert result.returncode in {0, 1}, f"{command.page}: {command.text}\n{output}"
        assert "Traceback" not in output, f"{command.page}: {command.text}\n{output}"
        assert "error:" not in result.stderr, f"{command.page}: {command.text}\n{output}"
        ran.append(command.text)
    assert len(ran) >= 25
    assert (yours / "spillguard.sarif").is_file()  # the CI recipe's report


def test_every_command_not_run_here_is_documented_and_exercised_elsewhere() -> None:
    documented = {command.text for command in documented_commands()}
    assert set(ELSEWHERE) <= documented  # no stale entry
    for where in ELSEWHERE.values():
        assert (PROJECT / where.split(" ")[0]).exists(), where
    ci = (PROJECT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in ci
    assert "pip install --quiet -e '.[test]'" in ci
    assert "python -m pytest" in ci
