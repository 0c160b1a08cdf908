"""spillguard audit: a generated estate of bare repositories, judged incrementally."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from testing.estate import (
    Commit,
    break_repository,
    by_branch,
    new_bare,
    plain_history,
    write_commits,
)
from testing.estate import run_audit as audit

#: (project, index) -> the branch that gets a secret.
SECRETS = {("alpha", 3): "main", ("alpha", 7): "develop", ("beta", 10): "release/1"}
PER_PROJECT = 25


def _branches(index: int) -> tuple[str, ...]:
    return ("develop", "release/1") if index % 5 == 0 else ("develop",)


def build_estate(root: Path, per_project: int = PER_PROJECT) -> Path:
    """Two projects of 25 repositories each, and one corrupt repository: 51 in all."""
    for project in ("alpha", "beta"):
        (root / project).mkdir(parents=True)
        for index in range(per_project):
            repo = root / project / f"repo{index:02d}.git"
            new_bare(repo)
            history = plain_history(
                f"{project}{index:02d}",
                branches=_branches(index),
                secret_on=SECRETS.get((project, index)),
            )
            write_commits(repo, history)
    break_repository(root / "beta" / "broken.git")
    return root


def expected_commits(project: str, index: int, branch: str) -> int:
    secret = 1 if SECRETS.get((project, index)) == branch else 0
    return 3 + (0 if branch == "main" else 1) + secret


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    return build_estate(tmp_path / "estate")


def _comparable(tree: dict[str, Any]) -> dict[str, Any]:
    """The tree without what differs from run to run (times, seconds)."""
    for branch in by_branch(tree).values():
        branch.pop("scannedAt")
    tree["summary"].pop("seconds")
    return tree


def _on_dask(estate: Path, state: Path) -> tuple[int, dict[str, Any]]:
    """The same audit on a Dask cluster that testing/dask_audit.py starts, as a user
    starts theirs, in a process of its own (Dask leaves threads behind)."""
    command = [sys.executable, "-m", "testing.dask_audit", str(estate), "--state", str(state),
               "--format", "json", "--branches", "*", "--quiet"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    # The one repository that cannot be audited, and no other: a repository failed at
    # random on Dask (threads sharing one Vectorscan scratch) showed only as fewer
    # commits judged in the tree.
    failed = [line for line in done.stderr.splitlines() if line.startswith("spillguard: audit:")]
    assert len(failed) == 1, done.stderr
    assert "beta/broken: unreadable" in failed[0]
    return done.returncode, _comparable(json.loads(done.stdout))


def test_an_estate_is_judged_then_only_what_changed(
    estate: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "audit.sqlite")
    code, tree, err = audit(capsys, str(estate), "--state", state, "--jobs", "2")
    # The same audit on a Dask cluster (started here, as a user starts theirs): the same.
    on_dask = _on_dask(estate, tmp_path / "dask.sqlite")
    assert on_dask == (code, _comparable(json.loads(json.dumps(tree))))

    assert code == 1  # blocking findings
    summary = tree["summary"]
    assert summary["repositories"] == 51
    assert summary["failed"] == 1
    assert err.count("\n") == 1
    assert "spillguard: audit: beta/broken: unreadable:" in err
    branches = by_branch(tree)
    assert len(branches) == 2 * (PER_PROJECT * 2 + 5)  # main, develop, and 5 release/1 each
    vulnerable = {name for name, branch in branches.items() if branch["state"] == "vulnerable"}
    assert vulnerable == {"alpha/repo03:main", "alpha/repo07:develop", "beta/repo10:release/1"}
    assert branches["alpha/repo03:main"]["byRule"] == {"AWS_SECRET_ACCESS_KEY": 1}
    # Every commit of every branch judged on its own: main's three, and each branch's own.
    for name, branch in branches.items():
        project, rest = name.split("/", 1)
        repo, branch_name = rest.split(":", 1)
        assert branch["commitsJudged"] == expected_commits(project, int(repo[4:]), branch_name)
        assert branch["reason"] == "new"
    assert summary["commits"] == sum(b["commitsJudged"] for b in branches.values())

    # New commits on two branches, and a rule only one repository's administrator adds.
    write_commits(
        estate / "alpha" / "repo01.git",
        [Commit("main", f"more{i}.py", f"X_{i} = {i}\n", 1_800_000_000 + i) for i in range(2)],
        existing=True,
    )
    write_commits(
        estate / "beta" / "repo02.git",
        [Commit("develop", "notes.txt", "more notes\n", 1_800_000_000)],
        existing=True,
    )
    (estate / "alpha" / "repo05.git" / "spillguard.toml").write_text(
        "[custom_rules]\nPROJECT_MARKER = { regexp = '\\balpha05\\b', blocking = false }\n"
    )

    code, tree, _ = audit(capsys, str(estate), "--state", state, "--no-scan")
    states = {name: branch["state"] for name, branch in by_branch(tree).items()}
    changed = {
        name: state for name, state in states.items() if state not in {"clean", "vulnerable"}
    }
    assert changed == {
        "alpha/repo01:main": "behind",
        "beta/repo02:develop": "behind",
        "alpha/repo05:main": "outdated",
        "alpha/repo05:develop": "outdated",
        "alpha/repo05:release/1": "outdated",
    }
    assert tree["summary"]["commits"] == 0

    code, tree, _ = audit(capsys, str(estate), "--state", state, "--jobs", "2")
    judged = {name: b["commitsJudged"] for name, b in by_branch(tree).items() if b["commitsJudged"]}
    assert judged == {
        "alpha/repo01:main": 2,
        "beta/repo02:develop": 1,
        "alpha/repo05:main": 3,
        "alpha/repo05:develop": 4,
        "alpha/repo05:release/1": 4,
    }
    assert tree["summary"]["commits"] == 14
    rescanned = by_branch(tree)["alpha/repo05:main"]
    assert rescanned["reason"] == "outdated"
    assert rescanned["byRule"] == {"PROJECT_MARKER": 3}  # the new rule judged old commits
    assert rescanned["commits"] == 3
    assert by_branch(tree)["alpha/repo01:main"]["commits"] == 5  # 3 before, 2 now

    code, tree, _ = audit(capsys, str(estate), "--state", state)
    assert tree["summary"]["commits"] == 0  # nothing new: nothing judged
    assert code == 1  # the findings are still there


# -- a small estate: exports, the HTML report, resuming, clone URLs ----------------------

PRAGMA = "  # pragma: allowlist-secret"


def small_estate(root: Path) -> Path:
    """alpha/app: a secret on main and an allowlisted one; alpha/lib: clean; beta/web:
    a secret on develop."""
    from testing.estate import AWS_SECRET, START
    from testing.tokens import expand

    for project, name in (("alpha", "app"), ("alpha", "lib"), ("beta", "web")):
        (root / project).mkdir(parents=True, exist_ok=True)
        new_bare(root / project / f"{name}.git")
    write_commits(
        root / "alpha" / "app.git",
        [
            *plain_history("app", branches=("develop",), secret_on="main"),
            Commit("main", "test.py", expand(AWS_SECRET, "t") + PRAGMA + "\n", START + 7200),
        ],
    )
    write_commits(root / "alpha" / "lib.git", plain_history("lib", branches=(), secret_on=None))
    write_commits(
        root / "beta" / "web.git", plain_history("web", branches=("develop",), secret_on="develop")
    )
    return root


def test_exports_per_repository_per_project_and_as_one_zip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = small_estate(tmp_path / "estate")
    exports = tmp_path / "csv"
    code, _, _ = audit(
        capsys, str(estate), "--state", str(tmp_path / "s.sqlite"), "--export", str(exports),
        "--export-zip", str(tmp_path / "all.zip"),
    )  # fmt: skip
    assert code == 1
    app = (exports / "alpha" / "app.csv").read_text().splitlines()
    assert app[0].startswith("project,repository,ref,commit")
    assert len(app) == 2  # the allowlisted finding is left out by default
    assert ",main," in app[1]
    assert "AWS_SECRET_ACCESS_KEY" in app[1]
    assert len((exports / "alpha.csv").read_text().splitlines()) == 2  # app's, lib has none
    assert ",develop," in (exports / "beta.csv").read_text()
    with zipfile.ZipFile(tmp_path / "all.zip") as archive:
        assert sorted(archive.namelist()) == ["alpha/app.csv", "alpha/lib.csv", "beta/web.csv"]
    # The secret never reaches an export, nor the state.
    from testing.estate import AWS_SECRET
    from testing.tokens import expand

    secret = expand(AWS_SECRET, "app").split('"')[1]
    assert secret not in "\n".join(app)
    assert secret.encode() not in (tmp_path / "s.sqlite").read_bytes()

    # The server's export options: allowlisted included, a date window, a rule.
    audit(
        capsys, str(estate), "--state", str(tmp_path / "s.sqlite"), "--export", str(exports),
        "--include-allowlisted", "--since", "2024-01-01T01:30:00Z",
    )  # fmt: skip
    rows = (exports / "alpha" / "app.csv").read_text().splitlines()[1:]
    assert len(rows) == 1  # only the allowlisted one is in the window (committed at 02:00)
    assert "test.py" in rows[0]
    audit(
        capsys, str(estate), "--state", str(tmp_path / "s.sqlite"), "--export", str(exports),
        "--rule", "GITHUB_TOKEN",
    )  # fmt: skip
    assert len((exports / "alpha" / "app.csv").read_text().splitlines()) == 1  # the header


def test_clone_urls_are_mirrored_and_a_bad_one_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = small_estate(tmp_path / "estate")
    urls = tmp_path / "urls.txt"
    urls.write_text(
        f"# the estate\n{(estate / 'alpha' / 'lib.git').as_uri()}\n"
        f"{(estate / 'beta' / 'gone.git').as_uri()}\n"
    )
    state = str(tmp_path / "s.sqlite")
    code, tree, err = audit(capsys, str(urls), "--state", state)
    assert code == 3  # a repository could not be audited, and none blocks
    assert err.startswith("spillguard: audit: beta/gone: cannot fetch file://")
    assert err.count("\n") == 1
    assert by_branch(tree)["alpha/lib:main"]["state"] == "clean"
    write_commits(
        estate / "alpha" / "lib.git", [Commit("main", "x.py", "X = 1\n", 1_800_000_000)],
        existing=True,
    )  # fmt: skip
    _, tree, _ = audit(capsys, str(urls), "--state", state)
    assert by_branch(tree)["alpha/lib:main"]["commitsJudged"] == 1  # fetched again, only it


def test_an_interrupted_audit_resumes(tmp_path: Path) -> None:
    estate = build_estate(tmp_path / "estate", per_project=8)
    state = tmp_path / "s.sqlite"
    command = [sys.executable, "-m", "spillguard", "audit", str(estate), "--state", str(state),
               "--jobs", "1", "--branches", "*", "--format", "json"]  # fmt: skip
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = 0
    deadline = time.monotonic() + 120
    while done < 3 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.02)
        if state.exists():
            with sqlite3.connect(state) as connection:
                try:
                    done = connection.execute("SELECT count(*) FROM repositories").fetchone()[0]
                except sqlite3.OperationalError:  # the schema is being created
                    done = 0
    first.send_signal(signal.SIGKILL)
    first.communicate()
    with sqlite3.connect(state) as connection:
        rows = connection.execute("SELECT project, name FROM repositories")
        recorded = {f"{project}/{name}" for project, name in rows}
    assert 3 <= len(recorded) < 17

    second = subprocess.run(command, capture_output=True, text=True, check=False)
    tree = json.loads(second.stdout)
    for name, branch in by_branch(tree).items():
        repository = name.split(":", 1)[0]
        assert (branch["reason"] == "current") == (repository in recorded), name
    assert tree["summary"]["repositories"] == 17


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: apt-get install -y chromium (.ci/run does)")
    return found


def _browse(page: Path, fragment: str, profile: Path, *extra: str) -> str:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *extra,
               f"{page.as_uri()}{fragment}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def _shown_rows(dom: str) -> list[list[str]]:
    body = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr.*?</tr>", body)]


def test_the_html_report_renders_and_sorts_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = small_estate(tmp_path / "estate")
    page = tmp_path / "report.html"
    audit(capsys, str(estate), "--state", str(tmp_path / "s.sqlite"), "--html", str(page))
    assert "http" not in page.read_text().replace("http-equiv", "")  # nothing fetched

    dom = _browse(page, "", tmp_path / "profile", "--dump-dom")
    assert "3 repositories (0 failed), 5 branches, 2 findings, 2 blocking" in dom
    rows = _shown_rows(dom)
    assert [row[:3] for row in rows] == [
        ["alpha", "app", "develop"], ["alpha", "app", "main"],
        ["alpha", "lib", "main"], ["beta", "web", "develop"], ["beta", "web", "main"],
    ]  # fmt: skip
    sorted_dom = _browse(page, "#sort=repository:desc", tmp_path / "profile", "--dump-dom")
    assert [row[1] for row in _shown_rows(sorted_dom)] == ["web", "web", "lib", "app", "app"]
    assert 'data-key="repository" data-type="text" aria-sort="descending"' in sorted_dom

    artifacts = Path(os.environ.get("SPILLGUARD_ARTIFACTS", Path(__file__).parents[1] / "build"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "audit-report.png"
    _browse(page, "#sort=findings:desc", tmp_path / "profile", f"--screenshot={shot}",
            "--window-size=1280,480")  # fmt: skip
    assert shot.read_bytes().startswith(b"\x89PNG")
    with capsys.disabled():
        print(f"\naudit report screenshot: {shot}")
