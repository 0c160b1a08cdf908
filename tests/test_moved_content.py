"""Content that arrives at a path is judged by that path's rules, however it got there.

A rename (exact, or with edits) out of an allowlisted path brings what the old path
hid to a path that hides nothing: real pushes into a bare repository with the
pre-receive hook, real commits with the pre-commit hook, and history scans all judge
it at the new path. A rename between paths judged alike reports nothing again, and
several copies of one deleted file are each new content but one. A pure rename into
a path a path-scoped rule reads (``notes.txt`` to ``.pgpass``) is new content for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.server import PATH, Server, hooked_commit, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable

FIXTURES = "allowlist_paths = ['tests/fixtures/.*']\n"


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


def ini(seed: str) -> str:
    """A config file with a key on line 3, long enough for rename detection to pair it."""
    lines = [f"[section {n}]\nname = value number {n}\n" for n in range(8)]
    return f"# settings\n[prod]\nAWS_ID={aws_key(seed)}\n{''.join(lines)}"


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    """A bare repository with the hook and an administrator who allowlists fixtures."""
    server = Server(tmp_path, object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    server.admin(FIXTURES)
    return server


def findings(output: str) -> list[str]:
    """The pusher's finding lines, without the commit id and ref."""
    return [
        line.split(maxsplit=4)[4].strip() for line in output.splitlines() if "  blocking  " in line
    ]


@pytest.mark.parametrize("edit", [False, True], ids=["exact", "edited"])
def test_rename_out_of_an_allowlisted_path_is_rejected(server: Server, *, edit: bool) -> None:
    work = server.work
    work.write("tests/fixtures/prod.ini", ini("fixture"))
    work.commit("a fixture")
    (work.path / "src").mkdir()
    work.git("mv", "tests/fixtures/prod.ini", "src/prod.ini")
    if edit:
        text = (work.path / "src/prod.ini").read_text()
        work.write("src/prod.ini", text.replace("# settings", "# production settings"))
    moved = work.commit("move the fixture to production")
    code, output = server.push("main")
    assert code != 0, output
    assert findings(output) == ["src/prod.ini:3  AWS_CLIENT_ID  AKIA********"]
    assert f"{moved[:10]}  refs/heads/main  src/prod.ini:3" in output
    assert "push rejected: it adds secrets" in output


def test_rename_between_paths_judged_alike_reports_nothing_again(server: Server) -> None:
    """The key was pushed once (by the branch that wrote it, reported then); moving it
    within the same rules brings nothing new."""
    work = server.work
    work.write("tests/fixtures/a.ini", ini("alike"))
    work.commit("a fixture")
    assert server.push("main")[0] == 0
    work.git("mv", "tests/fixtures/a.ini", "tests/fixtures/b.ini")
    work.commit("rename within the fixtures")
    code, output = server.push("main")
    assert code == 0, output
    assert "push accepted: no secrets found" in output


def test_copies_of_one_deleted_file_are_each_judged(server: Server) -> None:
    """One deletion explains one addition: the other identical files are new content."""
    work = server.work
    server.admin("")
    work.write("legacy.ini", ini("copies"))
    work.commit("a key pushed before the hook judged it")
    server.admin("[hook]\nmode = 'warn'\n")
    assert server.push("main")[0] == 0
    server.admin("")
    work.git("rm", "-q", "legacy.ini")
    for name in ("a", "b", "c"):
        work.write(f"conf/{name}.ini", ini("copies"))
    work.commit("one file becomes three")
    code, output = server.push("main")
    assert code != 0, output
    found = findings(output)
    assert len(found) == 2, output  # two of the three copies; the third is the move
    assert all(line.startswith("conf/") and ".ini:3  AWS_CLIENT_ID" in line for line in found)


def spillguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spillguard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_pre_commit_hook_and_scan_judge_the_rename(tmp_path: Path, object_format: str) -> None:
    repo = GitRepo(tmp_path / "repo", object_format=object_format)
    repo.write(".spillguard.toml", FIXTURES)
    repo.write("tests/fixtures/prod.ini", ini("hook"))
    fixture = repo.commit("a fixture")  # no hook yet: the fixture is allowlisted anyway
    assert spillguard("install", "pre-commit", cwd=repo.path).returncode == 0
    (repo.path / "src").mkdir()
    repo.git("mv", "tests/fixtures/prod.ini", "src/prod.ini")
    committed = subprocess.run(
        ["git", "commit", "-q", "-m", "move"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )
    assert committed.returncode != 0
    assert "src/prod.ini:3" in committed.stderr
    assert "AWS_CLIENT_ID  blocking" in committed.stderr
    assert repo.head() == fixture
    assert committed_anyway(repo) == [("src/prod.ini", 3, "AWS_CLIENT_ID", repo.head())]


def committed_anyway(repo: GitRepo) -> list[tuple[str, int, str, str]]:
    """Commit what the hook blocked, then scan: each finding's path, line, rule, commit."""
    repo.git("commit", "-q", "--no-verify", "-m", "move anyway")
    report = repo.path.parent / "report.json"
    code = main(["scan", "--repo", str(repo.path), "--format", "json", "--output", str(report)])
    assert code == 1
    found = json.loads(report.read_text())["findings"]
    return [(f["path"], f["line"], f["rule"], f["commit"]) for f in found]


def test_a_symlink_turned_into_a_file_is_judged_as_a_file(server: Server) -> None:
    """A mode change is a way to arrive too: the same blob, first a symlink's target,
    then a regular file's text."""
    work = server.work
    key = f"AWS_ID={aws_key('symlink')}"
    (work.path / "link").symlink_to(key)
    work.commit("a symlink")
    server.admin("[hook]\nmode = 'warn'\n")
    assert server.push("main")[0] == 0
    server.admin(FIXTURES)
    (work.path / "link").unlink()
    work.write("link", key)
    changed = work.commit("now a file")
    code, output = server.push("main")
    assert code != 0, output
    assert f"{changed[:10]}  refs/heads/main  link:1  AWS_CLIENT_ID" in output


def pgpass(seed: str) -> str:
    """A .pgpass file (its password line only a credential at that path), long enough
    for rename detection to pair it."""
    lines = "".join(f"# note {n}: hostname:port:database:username:password\n" for n in range(8))
    return f"{lines}db.prod.internal:5432:app:app_user:{expand('{rand:Aa0:18}', seed)}\n"


def master_key(seed: str) -> str:
    return expand("{rand:h:32}", seed) + "\n"


#: (old path, new path, content, the rule that watches the new path, its line)
WATCHED = [
    ("notes.txt", ".pgpass", pgpass, "PGPASS_ENTRY", 9),
    ("key.txt", "config/master.key", master_key, "RAILS_MASTER_KEY", 1),
]


@pytest.mark.parametrize(
    ("old", "new", "content", "rule", "line"), WATCHED, ids=["pgpass", "master-key"]
)
def test_a_rename_into_a_watched_path_is_judged_there(
    server: Server, old: str, new: str, content: Callable[[str], str], rule: str, line: int
) -> None:
    """No allowlist anywhere: the old path is simply one no path-scoped rule reads, so
    the content was accepted there, and the rename must not carry it past the rule."""
    work = server.work
    work.write(old, content("watched"))
    work.commit("a harmless file")
    assert server.push("main")[0] == 0
    Path(work.path / new).parent.mkdir(parents=True, exist_ok=True)
    work.git("mv", old, new)
    moved = work.commit("now read as a credential file")
    code, output = server.push("main")
    assert code != 0, output
    assert f"{moved[:10]}  refs/heads/main  {new}:{line}  {rule}" in output


@pytest.mark.parametrize(
    ("old", "new", "content", "rule", "line"), WATCHED, ids=["pgpass", "master-key"]
)
def test_pre_commit_hook_and_scan_judge_a_rename_into_a_watched_path(
    tmp_path: Path, old: str, new: str, content: Callable[[str], str], rule: str, line: int
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write(old, content("watched"))
    before = repo.commit("a harmless file")
    assert spillguard("install", "pre-commit", cwd=repo.path).returncode == 0
    Path(repo.path / new).parent.mkdir(parents=True, exist_ok=True)
    repo.git("mv", old, new)
    committed = hooked_commit(repo)
    assert committed.returncode != 0
    assert f"{new}:{line}" in committed.stderr
    assert f"{rule}  blocking" in committed.stderr
    assert repo.head() == before
    assert committed_anyway(repo) == [(new, line, rule, repo.head())]
