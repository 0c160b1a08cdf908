"""A push that only deletes refs is accepted as soon as its input is read, by the
server's pre-receive hook and the client's pre-push; any other push, deletions among
its updates or not, is judged whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spillguard.hooks.deletions import moves_to_known_commits, only_deletions, only_sent_deletions
from testing.gitrepo import GitRepo
from testing.server import Server, install_hook
from testing.tokens import expand

OLD = "a" * 40
ZERO = "0" * 40


@pytest.mark.parametrize(
    ("text", "deletes"),
    [
        (f"{OLD} {ZERO} refs/heads/gone\n", True),
        (f"{OLD} {ZERO} refs/heads/a\n{OLD} {ZERO} refs/tags/b\n", True),
        (f"{'b' * 64} {'0' * 64} refs/heads/sha256\n", True),
        (f"{OLD} {'b' * 40} refs/heads/moved\n", False),
        (f"{OLD} {ZERO} refs/heads/gone\n{ZERO} {'b' * 40} refs/heads/new\n", False),
        (f"{OLD} {ZERO}\n", False),  # malformed: the whole hook says so
        (f"{OLD} {'0' * 64} refs/heads/mixed\n", False),
        (f"{'A' * 40} {ZERO} refs/heads/upper\n", False),
        ("", False),
        ("\n\n", False),
    ],
)
def test_only_deletions(text: str, deletes: bool) -> None:
    assert only_deletions(text) is deletes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    server = Server(tmp_path_factory.mktemp("deletions"))
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("HEAD:refs/heads/main")
    install_hook(server.bare.path)
    return server


def test_a_push_that_only_deletes_is_accepted_at_once(server: Server) -> None:
    assert server.push("HEAD:refs/heads/doomed", "HEAD:refs/heads/doomed-too")[0] == 0
    code, output = server.push(":refs/heads/doomed", ":refs/heads/doomed-too")
    assert code == 0, output
    assert "push accepted: it only deletes refs, nothing to judge" in output
    assert "refs/heads/doomed" not in server.refs()


def test_a_deletion_beside_a_pushed_secret_is_judged_whole(server: Server) -> None:
    assert server.push("HEAD:refs/heads/doomed-3")[0] == 0
    server.work.git("checkout", "-q", "-b", "leaky")
    server.work.write("k.env", f"AWS_ID={expand('AKIA{rand:A2:16}', 'deletion')}\n")
    server.work.commit("a key")
    code, output = server.push(":refs/heads/doomed-3", "HEAD:refs/heads/leaky")
    assert code != 0
    assert "AWS_CLIENT_ID" in output
    assert "refs/heads/doomed-3" in server.refs()  # all or nothing


def test_the_answer_loads_neither_rules_nor_git(server: Server, tmp_path: Path) -> None:
    """What the hook script runs, with Python's own import log: nothing of spillguard's
    but the answer loads (no command line, configuration, rules, regex or libgit2)."""
    main = server.refs()["refs/heads/main"]
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "spillguard", "hook", "pre-receive"],
        input=f"{main} {ZERO} refs/heads/not-there\n",
        capture_output=True,
        text=True,
        cwd=server.bare.path,
        env={"PATH": str(tmp_path)},  # no git to run, either
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    loaded = {
        line.rsplit("|", 1)[1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:")
    }
    ours = {name for name in loaded if name.startswith("spillguard")}
    assert ours == {"spillguard", "spillguard.hooks", "spillguard.hooks.deletions"}
    assert not loaded & {"regex", "pygit2", "dataclasses", "subprocess"}


def test_a_push_moving_refs_to_known_commits_is_accepted_at_once(server: Server) -> None:
    server.work.git("checkout", "-q", "main")
    first = server.work.head()
    second = _commit(server, "two")
    assert server.push(f"{first}:refs/heads/release", "HEAD:refs/heads/main")[0] == 0
    code, output = server.push("HEAD:refs/heads/release")  # fast-forwarded, nothing new
    assert code == 0, output
    assert "push accepted: it moves refs to commits the repository has" in output
    assert server.refs()["refs/heads/release"] == second
    code, output = server.push("--force", f"{first}:refs/heads/release")  # and back
    assert code == 0, output
    assert "it moves refs to commits the repository has" in output
    assert server.refs()["refs/heads/release"] == first


def _commit(server: Server, text: str) -> str:
    server.work.write("notes.txt", f"{text}\n")
    return server.work.commit(text)


@pytest.fixture(scope="module")
def known(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The bare repository's ids: a commit on main, an annotated tag, and a commit no
    ref reaches (fetched in, then its ref deleted), holding a secret."""
    work, bare = server.work, server.bare
    work.git("checkout", "-q", "main")
    main = server.refs()["refs/heads/main"]
    work.git("tag", "-a", "-m", "a release", "v-known", main)
    assert server.push("refs/tags/v-known")[0] == 0
    work.git("checkout", "-q", "-b", "dangling")
    work.write("k.env", f"AWS_ID={expand('AKIA{rand:A2:16}', 'dangling')}\n")
    dangling = work.commit("a key")
    work.git("checkout", "-q", "main")
    bare.git("fetch", "-q", str(work.path), "dangling:refs/fetched")  # no hook runs
    bare.git("update-ref", "-d", "refs/fetched")
    quarantine = tmp_path_factory.mktemp("quarantine")
    tag = server.refs()["refs/tags/v-known"]
    return {"main": main, "tag": tag, "dangling": dangling, "quarantine": str(quarantine)}


@pytest.mark.parametrize(
    ("old", "new", "accepted"),
    [
        ("main", "main", True),  # a move to a commit a ref reaches
        ("main", "dangling", False),  # its commit is new to every ref: judged
        ("main", "tag", False),  # an annotated tag: its message is judged
        ("zero", "main", False),  # a new ref: its name is judged
    ],
)
def test_what_a_move_brings_is_asked_of_git(
    server: Server, known: dict[str, str], old: str, new: str, accepted: bool
) -> None:
    ids = {**known, "zero": ZERO}
    environ = {
        **os.environ,
        "GIT_DIR": str(server.bare.path),
        "GIT_QUARANTINE_PATH": known["quarantine"],
    }
    text = f"{ids[old]} {ids[new]} refs/heads/moved\n{OLD} {ZERO} refs/heads/gone\n"
    assert moves_to_known_commits(text, environ) is accepted


def test_a_move_that_brings_objects_is_judged(server: Server, tmp_path: Path) -> None:
    main = server.refs()["refs/heads/main"]
    quarantine = tmp_path / "quarantine"
    (quarantine / "pack").mkdir(parents=True)
    text = f"{main} {main} refs/heads/moved\n"
    environ = {**os.environ, "GIT_DIR": str(server.bare.path)}
    quarantined = {**environ, "GIT_QUARANTINE_PATH": str(quarantine)}
    assert moves_to_known_commits(text, quarantined)  # folders, no object
    (quarantine / "pack" / "pack-1.pack").write_bytes(b"PACK")
    assert not moves_to_known_commits(text, quarantined)
    assert not moves_to_known_commits(text, environ)  # no quarantine: run by hand


def test_the_move_answer_loads_no_rules_nor_subprocess(
    server: Server, known: dict[str, str]
) -> None:
    """What the hook script runs, with Python's own import log: the answer loads
    the hook's input reader and git's pinned command line, nothing else of ours."""
    main = known["main"]
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "spillguard", "hook", "pre-receive"],
        input=f"{main} {main} refs/heads/main\n",
        capture_output=True,
        text=True,
        cwd=server.bare.path,
        env={**os.environ, "GIT_DIR": ".", "GIT_QUARANTINE_PATH": known["quarantine"]},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "it moves refs to commits the repository has" in completed.stderr
    loaded = {
        line.rsplit("|", 1)[1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:")
    }
    ours = {name for name in loaded if name.startswith("spillguard")}
    core = {"spillguard.core", "spillguard.core.gitcommand"}
    assert ours == {"spillguard", "spillguard.hooks", "spillguard.hooks.deletions", *core}
    assert not loaded & {"regex", "dataclasses", "subprocess", "typing", "pathlib"}


@pytest.mark.parametrize(
    ("text", "deletes"),
    [
        (f"(delete) {ZERO} refs/heads/gone {OLD}\n", True),
        (f"(delete) {ZERO} refs/heads/a {OLD}\n(delete) {ZERO} refs/tags/b {OLD}\n", True),
        (f"(delete) {'0' * 64} refs/heads/sha256 {'b' * 64}\n", True),
        (f"refs/heads/main {'b' * 40} refs/heads/main {OLD}\n", False),
        (
            f"(delete) {ZERO} refs/heads/gone {OLD}\nrefs/heads/x {'b' * 40} refs/heads/x {ZERO}\n",
            False,
        ),
        (f"(delete) {ZERO} refs/heads/gone\n", False),  # malformed: the whole hook says so
        (f"(delete) {ZERO} refs/heads/gone {'A' * 40}\n", False),
        ("", False),
    ],
)
def test_only_sent_deletions(text: str, deletes: bool) -> None:
    assert only_sent_deletions(text) is deletes


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A clone with the pre-push hook, its origin holding main and two branches."""
    root = tmp_path_factory.mktemp("pre-push-deletions")
    GitRepo(root / "origin.git", bare=True)
    repo = GitRepo(root / "work")
    repo.git("remote", "add", "origin", str(root / "origin.git"))
    repo.write("README.md", "hello\n")
    repo.commit("base")
    repo.git("push", "-q", "origin", "main", "main:doomed", "main:doomed-too")
    installed = subprocess.run(
        [sys.executable, "-m", "spillguard", "install", "pre-push"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    return repo


def _push(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["git", "push", "origin", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path},
    )


def test_a_pre_push_that_only_deletes_is_accepted_at_once(clone: GitRepo) -> None:
    pushed = _push(clone, ":doomed")
    assert pushed.returncode == 0, pushed.stderr
    assert "push accepted: it only deletes refs, nothing to judge" in pushed.stderr
    assert "refs/heads/doomed\n" not in clone.git("ls-remote", "origin")


def test_a_pre_push_deletion_beside_a_secret_is_judged_whole(clone: GitRepo) -> None:
    clone.git("checkout", "-q", "-b", "leaky")
    clone.write("k.env", f"AWS_ID={expand('AKIA{rand:A2:16}', 'pre-push-deletion')}\n")
    clone.commit("a key")
    pushed = _push(clone, ":doomed-too", "leaky")
    assert pushed.returncode != 0
    assert "AWS_CLIENT_ID" in pushed.stderr
    assert "refs/heads/doomed-too\n" in clone.git("ls-remote", "origin")  # all or nothing
