"""Pushes into SHA-256 bare repositories, judged by git alone, as in SHA-1 ones.

Every test of ``test_pre_receive_push`` also runs against a SHA-256 server; this one
compares the two formats on a merge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


def push_a_merge(server: Server) -> tuple[int, list[str]]:
    """A merge whose branch holds a key and whose conflict resolution adds one: the
    pusher's finding lines, with the commit ids left out."""
    install_hook(server.bare.path)
    work = server.work
    work.write("conf.py", "a = 1\n")
    work.commit("base")
    work.git("checkout", "-q", "-b", "side")
    work.write("side.py", f"key = '{aws_key('side')}'\n")
    work.write("conf.py", "a = 'side'\n")
    work.commit("side")
    work.git("checkout", "-q", "main")
    work.write("conf.py", "a = 'main'\n")
    work.commit("main")
    work.git("merge", "-q", "side", check=False)  # conflict in conf.py
    work.write("conf.py", f"a = 'both'\nkey = '{aws_key('merge')}'\n")
    work.commit("merge")
    code, output = server.push("main")
    findings = [
        line.split(maxsplit=3)[3].strip() for line in output.splitlines() if "  blocking  " in line
    ]
    return code, findings


def test_sha256_push_is_judged_as_sha1_is(tmp_path: Path) -> None:
    """libgit2 cannot open SHA-256 repositories: git reads the push, with the same verdict;
    a merge reports only the line its resolution adds, the branch's key once."""
    sha1 = push_a_merge(Server(tmp_path / "sha1"))
    sha256 = push_a_merge(Server(tmp_path / "sha256", object_format="sha256"))
    assert sha256 == sha1
    code, findings = sha256
    assert code != 0
    assert findings == [
        "refs/heads/main  side.py:1  AWS_CLIENT_ID  AKIA********",
        "refs/heads/main  conf.py:2  AWS_CLIENT_ID  AKIA********",
    ]
