"""Routes a hostile pusher tries beyond the obvious ones: each a real ``git push`` into a
bare repository with the pre-receive hook, in SHA-1 and SHA-256 repositories.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    """A hooked bare repository whose main has one clean commit."""
    server = Server(tmp_path, object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


def test_a_replace_ref_does_not_hide_the_commit_it_replaces(server: Server) -> None:
    """``refs/replace/<C>`` pushed first makes git read a clean commit wherever C is named;
    C itself, pushed next, is what a clone gets and shows: its key is judged as stored."""
    work = server.work
    work.write("prod.env", f"AWS_ID={aws_key('replaced')}\n")
    hidden = work.commit("add config")
    work.git("reset", "-q", "--hard", "HEAD~1")
    work.write("prod.env", "AWS_ID=none\n")
    decoy = work.commit("add config")
    work.git("update-ref", f"refs/replace/{hidden}", decoy)
    code, output = server.push(f"refs/replace/{hidden}")
    assert code == 0, output
    work.git("update-ref", "refs/heads/feature", hidden)
    code, output = server.push("feature")
    assert code != 0, output
    assert "prod.env:1" in output
    assert "refs/heads/feature" not in server.refs()


def test_a_replace_ref_does_not_rewrite_the_repository_file(server: Server) -> None:
    """Where the administrator honours the repository's file, a pushed replacement of
    that file's blob (an allowlist for everything) does not change how a push is judged."""
    work = server.work
    server.admin("repository_config = true\n")
    work.write(".spillguard.toml", 'disabled_rules = ["GENERIC_PASSWORD"]\n')
    work.commit("repository file")
    assert server.push("main")[0] == 0
    stored = work.git("rev-parse", "main:.spillguard.toml").strip()
    lenient = work.git("hash-object", "-w", "--stdin", input_text="allowlist_paths = ['.*']\n")
    work.git("update-ref", f"refs/replace/{stored}", lenient.strip())
    code, output = server.push(f"refs/replace/{stored}")
    assert code == 0, output
    work.write("prod.env", f"AWS_ID={aws_key('lenient')}\n")
    work.commit("add config")
    code, output = server.push("HEAD:refs/heads/feature")
    assert code != 0, output
    assert "prod.env:1" in output


def test_git_notes_are_judged(server: Server) -> None:
    """``git log`` shows a commit's notes under it: a key in a note is rejected."""
    server.work.git("notes", "add", "-m", f"AWS_ID={aws_key('note')}", "HEAD")
    code, output = server.push("refs/notes/commits")
    assert code != 0, output
    assert "refs/notes/commits" not in server.refs()


def test_pushed_attributes_do_not_hide_content(server: Server) -> None:
    """A ``.gitattributes`` on the default branch that calls every file binary, with no
    diff and a diff driver, changes nothing the hook reads."""
    work = server.work
    work.write(".gitattributes", "* binary -diff diff=hidden\n")
    work.commit("attributes")
    assert server.push("main")[0] == 0
    work.write("prod.env", f"AWS_ID={aws_key('attributes')}\n")
    work.commit("add config")
    code, output = server.push("main")
    assert code != 0, output
    assert "prod.env:1" in output


def test_a_key_in_the_author_or_committer_is_judged(server: Server) -> None:
    """Every ``git log`` shows who wrote and who committed a commit."""
    work = server.work
    for person, seed in (("AUTHOR", "author"), ("COMMITTER", "committer")):
        work.write(f"{seed}.txt", "fine\n")
        work.git("add", "-A")
        subprocess.run(
            ["git", "commit", "-q", "-m", "fine"],
            cwd=work.path,
            check=True,
            env={**os.environ, f"GIT_{person}_NAME": f"AWS {aws_key(seed)}"},
        )
        code, output = server.push("HEAD:refs/heads/people")
        assert code != 0, output
        assert "<commit author>:" in output
        work.git("reset", "-q", "--hard", "HEAD~1")


def test_a_message_git_log_re_encodes_is_judged_as_stored(server: Server) -> None:
    """``i18n.commitEncoding=UTF-16LE`` records an ``encoding`` header over a message
    stored as typed: ``git log`` decodes it into other characters, a clone holds it in
    clear. Judged both ways, the key is found."""
    work = server.work
    work.write("notes.txt", "fine\n")
    work.git("add", "-A")
    message = f"deploys with {aws_key('encoded')}"  # even: git log can decode it
    work.git("-c", "i18n.commitEncoding=UTF-16LE", "commit", "-q", "-m", message)
    log = ["git", "log", "-1", "--format=%B"]
    shown = subprocess.run(log, cwd=work.path, capture_output=True, check=True).stdout
    assert aws_key("encoded").encode() not in shown  # git log shows other characters
    code, output = server.push("HEAD:refs/heads/encoded")
    assert code != 0, output
    assert "<commit message>:1  AWS_CLIENT_ID" in output


def test_names_are_judged_wherever_a_clone_shows_them(server: Server) -> None:
    """A file named after a key, a folder named after one (``git ls-tree``), and a
    branch named after one (``git ls-remote``), made with git's own porcelain."""
    work = server.work
    work.write(f"keys/AWS_ID={aws_key('file')}.txt", "fine\n")
    work.write(f"{aws_key('folder')}/README.md", "fine\n")
    work.git("add", "-A")
    work.git("commit", "-q", "-m", "names")
    code, output = server.push(f"HEAD:refs/heads/names-{aws_key('branch')}")
    assert code != 0, output
    paths = [line for line in output.splitlines() if "AWS_CLIENT_ID" in line]
    assert sum("<path name>:" in line for line in paths) >= 2, output
    assert any("<ref name>:1" in line for line in paths), output
    told = [line for line in output.splitlines() if line.startswith("remote:")]
    assert not any(aws_key(seed) in line for line in told for seed in ("file", "folder", "branch"))
