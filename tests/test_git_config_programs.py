"""A repository's own git configuration never makes spillguard's gits run a program.

Each repository here names, in its ``config``, a program for every key git documents
as running one; the program writes a marker file and passes its input through.
spillguard's commands and hooks run over it (and a real push into a bare repository
so configured), and the marker must never appear.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.audit.locations import mirror_folder, parse_clone_url
from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator

KEY = expand("AKIA{rand:A2:16}", "config-programs")
#: The keys whose value git runs as a program (git-config(1)), each set to the trap.
PROGRAM_KEYS = (
    "core.fsmonitor",
    "core.pager",
    "pager.log",
    "pager.diff-tree",
    "pager.rev-list",
    "diff.external",
    "diff.trap.textconv",
    "diff.trap.command",
    "filter.trap.clean",
    "filter.trap.smudge",
    "merge.trap.driver",
    "gpg.program",
    "gpg.ssh.program",
    "gpg.x509.program",
    "core.sshCommand",
    "core.gitProxy",
    "core.askPass",
    "credential.helper",
    "core.editor",
    "sequence.editor",
    "core.alternateRefsCommand",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
    "uploadpack.packObjectsHook",
    "core.hooksPath",
)
#: What git-receive-pack runs itself, before the pre-receive hook starts: the hooks
#: (``core.hooksPath`` would replace spillguard's own), and the command that lists the
#: refs of the repository's alternates (the main store, seen from the quarantine).
RECEIVE_PACK_RUNS = ("core.hooksPath", "core.alternateRefsCommand")
HOOK_NAMES = ("reference-transaction", "pre-auto-gc", "post-checkout", "pre-commit", "pre-push")


class Trap:
    """A program that notes each run in ``marker`` (its arguments) and passes its
    input through, so that git carries on as if nothing ran (for 10 s at most: a
    transport that talks back would wait forever)."""

    def __init__(self, root: Path) -> None:
        root.mkdir()
        self.marker = root / "ran"
        self.program = root / "trap"
        self.program.write_text(f'#!/bin/sh\necho "$0 $*" >> {self.marker}\nexec timeout 10 cat\n')
        self.program.chmod(0o755)
        self.hooks = root / "hooks"
        self.hooks.mkdir()
        for name in HOOK_NAMES:
            (self.hooks / name).symlink_to(self.program)

    def arm(
        self, git_dir: Path, keys: tuple[str, ...] = PROGRAM_KEYS, *, attributes: bool = True
    ) -> None:
        """``keys`` of the repository at ``git_dir`` name the trap, and its hooks are the
        trap's unless ``core.hooksPath`` is left out; an included file names it as
        ``core.fsmonitor`` once more. ``attributes``: ``info/attributes`` names the
        trap's drivers for every path (which the libgit2 readers read)."""
        sections: dict[str, list[str]] = {}
        for key in keys:
            line = f"\t{key.rsplit('.', 1)[1]} = {self.program} {key}"
            section, _, _ = key.rpartition(".")
            name = section.split(".", 1)
            header = f'[{name[0]} "{name[1]}"]' if len(name) == 2 else f"[{section}]"
            sections.setdefault(header, []).append(line)
        text = "".join(f"{header}\n" + "\n".join(body) + "\n" for header, body in sections.items())
        text += '[log]\n\tshowSignature = true\n[filter "trap"]\n\trequired = false\n'
        if "core.hooksPath" in keys:
            text += f"[core]\n\thooksPath = {self.hooks}\n"
        included = git_dir / "trap.config"
        included.write_text(f"[core]\n\tfsmonitor = {self.program} included.core.fsmonitor\n")
        text += f"[include]\n\tpath = {included}\n"
        with (git_dir / "config").open("a") as config:
            config.write(text)
        if attributes:
            (git_dir / "info").mkdir(exist_ok=True)
            (git_dir / "info" / "attributes").write_text("* filter=trap diff=trap merge=trap\n")

    def ran(self) -> str:
        return self.marker.read_text() if self.marker.exists() else ""


def signed_commit(repo: GitRepo, message: str) -> str:
    """A commit on HEAD with a (forged) ``gpgsig`` header, which ``git log
    --show-signature`` hands to ``gpg.program``."""
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    head = repo.head()
    raw = (
        f"tree {tree}\nparent {head}\n"
        "author Ada Tester <ada@example.com> 1700000000 +0000\n"
        "committer Ada Tester <ada@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n"
        f"\n{message}\n"
    )
    commit = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input_text=raw).strip()
    repo.git("update-ref", "HEAD", commit)
    return commit


@pytest.fixture(scope="module", params=["sha1", "sha256", "sha1-libgit2"])
def armed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[GitRepo, Trap]:
    """A work tree with history (a signed commit, a merge, a key), a staged key and a
    ``.gitattributes`` naming the trap's drivers, armed after it was built; with
    ``info/attributes`` too (``-libgit2``), where history scans read with libgit2."""
    object_format = request.param.split("-")[0]
    root = tmp_path_factory.mktemp(f"armed-{request.param}")
    origin = GitRepo(root / "origin.git", bare=True, object_format=object_format)
    repo = GitRepo(root / "work", object_format=object_format)
    repo.write(".gitattributes", "* filter=trap diff=trap merge=trap\n")
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.py", "y = 2\n")
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.write("main.py", "z = 3\n")
    repo.commit("main")
    repo.git("merge", "-q", "--no-edit", "side")
    signed_commit(repo, "signed")
    repo.git("remote", "add", "origin", str(origin.path))
    repo.git("push", "-q", "origin", "main")
    repo.git("fetch", "-q", "origin")
    repo.git("remote", "set-head", "origin", "main")
    repo.write("prod.env", f"AWS_ID={KEY}\n")
    repo.commit("key")
    repo.write("staged.env", f"AWS_ID={KEY}\n")
    repo.git("add", "staged.env")
    trap = Trap(root / "trap")
    trap.arm(repo.path / ".git", attributes=request.param.endswith("libgit2"))
    # An index older than its entries: git can tell none of the files from their
    # staged version by times, and reads each again (through the clean filter).
    os.utime(repo.path / ".git" / "index", (1, 1))
    return repo, trap


@pytest.fixture
def quiet(armed: tuple[GitRepo, Trap], monkeypatch: pytest.MonkeyPatch) -> Iterator[GitRepo]:
    """The armed work tree as the current directory; no program may have run after."""
    repo, trap = armed
    trap.marker.unlink(missing_ok=True)  # each test's own runs
    monkeypatch.chdir(repo.path)
    yield repo
    assert trap.ran() == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--repo", "."],
        ["scan", "--repo", ".", "--all"],
        ["scan", "--repo", ".", "--tree", "HEAD"],
        ["scan", "--repo", ".", "--config-from", "default-branch"],
        ["hook", "pre-commit"],
    ],
    ids=["scan", "scan-all", "scan-tree", "default-branch", "pre-commit"],
)
def test_a_command_over_an_armed_work_tree_runs_no_program(quiet: GitRepo, argv: list[str]) -> None:
    assert main(argv) == 1


def test_review_add_at_runs_no_program(quiet: GitRepo) -> None:
    assert main(["review", "add", "--repo", ".", "--at", "staged.env:1"]) == 0
    (quiet.path / ".spillguard-reviewed.toml").unlink()


def test_pre_push_over_an_armed_work_tree_runs_no_program(quiet: GitRepo) -> None:
    head = quiet.head()
    url = quiet.git("remote", "get-url", "origin").strip()
    pushed = subprocess.run(
        [sys.executable, "-m", "spillguard", "hook", "pre-push", "origin", url],
        input=f"refs/heads/main {head} refs/heads/main {'0' * len(head)}\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert pushed.returncode == 1, pushed.stderr


def test_an_audit_of_an_armed_repository_runs_no_program(quiet: GitRepo, tmp_path: Path) -> None:
    if quiet.git("rev-parse", "--show-object-format").strip() == "sha256":
        pytest.skip("the audit reads SHA-1 repositories only")
    code = main(["audit", str(quiet.path), "--state", str(tmp_path / "state.sqlite")])
    assert code == 1


def test_an_audit_fetch_runs_no_hook(tmp_path: Path) -> None:
    """A mirror fetched again runs no hook, though ``core.hooksPath`` names one (as a
    global setting or a template would give it): ``reference-transaction`` ran for
    every ref the fetch moved."""
    trap = Trap(tmp_path / "trap")
    source = GitRepo(tmp_path / "estate" / "team" / "app.git", bare=True)
    work = GitRepo(tmp_path / "work")
    work.write("app.py", "x = 1\n")
    work.commit("base")
    work.git("push", "-q", str(source.path), "main")
    url = f"file://{source.path}"
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{url}\n")
    clones = tmp_path / "clones"
    state = tmp_path / "state.sqlite"
    arguments = ["audit", str(urls), "--state", str(state), "--clone-dir", str(clones)]
    assert main(arguments) == 0
    with (mirror_folder(parse_clone_url(url), clones) / "config").open("a") as config:
        config.write(f"[core]\n\thooksPath = {trap.hooks}\n")
    work.write("app.py", "x = 2\n")
    work.commit("more")
    work.git("push", "-q", str(source.path), "main")
    assert main(arguments) == 0
    assert trap.ran() == ""


@pytest.fixture(params=["sha1", "sha256", "sha1-libgit2"])
def armed_server(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Server, Trap]:
    """A hooked bare repository whose own configuration names the trap for every key
    but those git's receive-pack runs itself; ``-libgit2``: with ``info/attributes``
    as armed, which pre-receive reads with libgit2."""
    server = Server(tmp_path, object_format=request.param.split("-")[0])
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    trap = Trap(tmp_path / "trap")
    keys = tuple(key for key in PROGRAM_KEYS if key not in RECEIVE_PACK_RUNS)
    trap.arm(server.bare.path, keys, attributes=request.param.endswith("libgit2"))
    return server, trap


def test_a_push_into_an_armed_bare_repository_runs_no_program(
    armed_server: tuple[Server, Trap],
) -> None:
    server, trap = armed_server
    server.work.write("notes.txt", "clean\n")
    server.work.commit("clean")
    signed_commit(server.work, "signed")
    assert server.push("main")[0] == 0
    server.work.write("prod.env", f"AWS_ID={KEY}\n")
    server.work.commit("key")
    code, output = server.push("main")
    assert code != 0, output
    assert "prod.env:1" in output
    assert trap.ran() == ""


def test_a_partial_clone_fetches_nothing_to_scan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blob missing from a partial clone is not fetched from its promisor remote
    (which runs what the clone's configuration names): the scan says it is missing."""
    trap = Trap(tmp_path / "trap")
    source = GitRepo(tmp_path / "source")
    source.git("config", "uploadpack.allowFilter", "true")
    source.write("old.env", f"AWS_ID={KEY}\n")
    source.commit("old")
    source.write("old.env", "AWS_ID=none\n")
    source.commit("newer")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:none", f"file://{source.path}", str(clone)],
        check=True,
    )
    with (clone / ".git" / "config").open("a") as config:
        config.write(f'[remote "origin"]\n\tuploadpack = {trap.program} upload; git-upload-pack\n')
    assert main(["scan", "--repo", str(clone)]) == 3
    assert "is missing from the repository" in capsys.readouterr().err
    assert trap.ran() == ""


def test_every_git_spillguard_starts_is_pinned() -> None:
    """No module starts a process, or names a git command, but ``core.gitcommand``
    (whose ``run`` and ``start`` also bound each git by a push's deadline)."""
    source = Path(__file__).parents[1] / "src" / "spillguard"
    unpinned = []
    for path in sorted(source.rglob("*.py")):
        if path.name == "gitcommand.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.List) and node.elts:
                first = node.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    unpinned.append(f"{path.name}:{node.lineno}: a git command of its own")
            called = node.func if isinstance(node, ast.Call) else None
            if (
                isinstance(called, ast.Attribute)
                and isinstance(called.value, ast.Name)
                and called.value.id in {"subprocess", "os"}
                and called.attr
                in {"run", "Popen", "check_output", "check_call", "call", "system", "popen"}
                | {"posix_spawn", "posix_spawnp", "execv", "execvp", "fork"}
            ):
                unpinned.append(f"{path.name}:{node.lineno}: {called.value.id}.{called.attr}")
    assert unpinned == []
