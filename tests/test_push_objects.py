"""Every object a push carries is accounted for: one that no pushed ref reaches is never
stored silently (real pushes into a hooked bare repository, SHA-1 and SHA-256).

The route: a line in the client's ``.git/info/grafts`` gives a clean commit a fake
parent holding a key; ``git push`` sends that parent too, git would store it, and
anyone could fetch it by its id, while the pushed commit itself names its real parent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator

KEY = expand("AKIA{rand:A2:16}", "grafted")
BIG = "".join(
    f"line {number} of a file long enough to be sent as a delta\n" for number in range(400)
)


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Server:
    server = Server(tmp_path_factory.mktemp("objects"), object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.write("big.txt", BIG)
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


@pytest.fixture(autouse=True)
def fresh(server: Server) -> Iterator[None]:
    server.work.git("checkout", "-q", "--detach", "main")
    yield
    (server.bare.path / "spillguard.toml").unlink(missing_ok=True)
    (server.work.path / ".git" / "info" / "grafts").unlink(missing_ok=True)


def grafted(server: Server) -> tuple[str, str]:
    """A clean commit on main, given by the client's grafts a parent that adds a key."""
    work = server.work
    work.write("prod.env", f"AWS_ID={KEY}\n")
    hidden = work.commit("the fake parent")
    work.git("reset", "-q", "--hard", "main")
    work.write("notes.txt", "nothing to see\n")
    clean = work.commit("clean")
    grafts = work.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{clean} {hidden}\n")
    return clean, hidden


def test_objects_no_pushed_ref_reaches_reject_the_push(server: Server) -> None:
    clean, hidden = grafted(server)
    before = server.refs()
    code, output = server.push(f"{clean}:refs/heads/grafted")
    assert code != 0, output
    assert "push rejected by policy (on_unreachable = reject): the push carries 3 objects" in (
        output
    )
    assert "that no pushed ref reaches" in output
    assert server.refs() == before
    missing = server.bare.git("cat-file", "-t", hidden, check=False)
    assert missing == ""  # the quarantine is gone: nothing was stored


def test_the_administrator_may_have_them_judged_whole(server: Server) -> None:
    clean, _ = grafted(server)
    server.admin('on_unreachable = "judge"\n')
    code, output = server.push(f"{clean}:refs/heads/grafted")
    assert code != 0, output
    assert "<unreached blob>:1  AWS_CLIENT_ID" in output
    assert "the push carries 3 objects that no pushed ref reaches: judged whole" in output


def test_judged_whole_and_clean_they_are_accepted(server: Server) -> None:
    work = server.work
    work.write("prod.env", "AWS_ID=none\n")
    hidden = work.commit("a harmless fake parent")
    work.git("reset", "-q", "--hard", "main")
    clean = work.commit("clean")
    (work.path / ".git" / "info" / "grafts").write_text(f"{clean} {hidden}\n")
    server.admin('on_unreachable = "judge"\n')
    code, output = server.push(f"{clean}:refs/heads/harmless")
    assert code == 0, output
    assert "push accepted: no secrets found" in output


def test_an_honest_push_carries_nothing_unreached(server: Server) -> None:
    """The control: a thin pack (a file git sends as a delta of the server's version, whose
    base git adds to the pack it keeps) and a pack git keeps whole (over 100 objects)."""
    work = server.work
    work.write("big.txt", BIG.replace("line 7 ", "line seven "))
    for number in range(120):
        work.write(f"many/{number}.txt", f"file {number}\n")
    work.commit("many files")
    code, output = server.push("HEAD:refs/heads/honest")
    assert code == 0, output
    assert "push accepted: no secrets found" in output


def test_the_trees_of_a_large_push_are_read_one_by_one_with_the_same_findings(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push of many trees has each read as the walk reaches it, not all at once with
    the commits: the same findings, names at every depth included."""
    from spillguard.configuration.loading import load_server_config, no_files
    from spillguard.core.models import RefUpdate
    from spillguard.hooks.pre_receive import scan_push_cli
    from spillguard.sources import pushed
    from testing.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "repo")
    for depth in range(4):
        path = "/".join([*(f"d{level}" for level in range(depth)), f"AWS_ID={KEY}.txt"])
        repo.write(path, f"depth {depth}\n")  # no two folders one tree: each is walked
        repo.commit(f"depth {depth}")
    tip = repo.head()
    repo.git("update-ref", "-d", "refs/heads/main")  # none of them is on the server yet
    config = load_server_config(repo_dir=str(repo.path), config_path=None, read_file=no_files)
    updates = (RefUpdate("0" * 40, tip, "refs/heads/topic"),)

    def findings() -> list[tuple[str, str, int]]:
        scan = scan_push_cli(str(repo.path / ".git"), updates, config, deadline=float("inf"))
        assert scan.incomplete is None
        return [(f.commit.id if f.commit else "", f.path, f.line) for f in scan.result.findings]

    at_once = findings()
    monkeypatch.setattr(pushed, "_TREES_AT_ONCE", 1)
    assert findings() == at_once
    assert sum(path == "<path name>" for _, path, _ in at_once) == 4
