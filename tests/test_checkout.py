"""Files are judged as a checkout of their commit writes them, with its own attributes.

A pushed ``.gitattributes`` line ``*.ini working-tree-encoding=UTF-16LE`` makes git
store an ASCII file as the CJK characters its bytes spell in UTF-16LE, while every
clone writes it back in ASCII; ``export-subst`` makes ``git archive`` expand
``$Format:%x67...$``. Real pushes into a bare repository with the pre-receive hook,
history scans, and what a fresh clone or archive really writes (so the test is of
git's behaviour, not of a model of it).
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.sources.checkout import reencoded
from testing.gitrepo import GitRepo
from testing.server import Server, blocking, guarded, hooked_commit
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

KEY = expand("AKIA{rand:A2:16}", "checkout")
LINE = f"aws_key = {KEY}\n"


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    return guarded(tmp_path, request.param)


def declare_utf16(server: Server, *, with_file: bool) -> None:
    """The attribute, and (in the same commit or later) an ASCII file that git stores
    as UTF-16LE read back to UTF-8: CJK characters, no secret in the stored bytes."""
    work = server.work
    work.write(".gitattributes", "*.ini working-tree-encoding=UTF-16LE\n")
    if with_file:
        work.write("prod.ini", f"[prod]\n{LINE}")


def checked_out(server: Server, tmp_path: Path, path: str) -> bytes:
    """What a fresh clone of the bare repository writes at ``path``."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(server.bare.path), str(clone)], check=True)
    return (clone / path).read_bytes()


@pytest.mark.parametrize("together", [True, False], ids=["one-commit", "attribute-first"])
def test_a_file_a_checkout_writes_in_clear_rejects_the_push(
    server: Server, tmp_path: Path, *, together: bool
) -> None:
    work = server.work
    declare_utf16(server, with_file=together)
    work.commit("settings")
    if not together:
        assert server.push("main")[0] == 0  # the attribute alone
        work.write("prod.ini", f"[prod]\n{LINE}")
        work.commit("the settings file")
    stored = subprocess.run(
        ["git", "cat-file", "-p", "HEAD:prod.ini"], cwd=work.path, capture_output=True, check=True
    ).stdout
    assert KEY.encode() not in stored
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == ["prod.ini:2  AWS_CLIENT_ID"]
    assert KEY not in output
    # and this is what a clone writes, once the server holds it
    server.admin("[hook]\nmode = 'warn'\n")
    assert server.push("main")[0] == 0
    assert LINE.encode() in checked_out(server, tmp_path, "prod.ini")


def test_an_attribute_that_makes_an_old_file_clear_rejects_the_push(server: Server) -> None:
    """The file was stored first (CJK, harmless as it checks out); the commit that
    declares its encoding is the one whose checkout writes the key."""
    work = server.work
    stored = f"[prod]\n{LINE}".encode().decode("utf-16-le")  # what git would store
    work.write("prod.ini", stored)
    work.commit("a file of CJK text")
    assert server.push("main")[0] == 0
    work.write(".gitattributes", "*.ini working-tree-encoding=UTF-16LE\n")
    work.git("add", ".gitattributes")  # alone: git would read prod.ini as UTF-16LE now
    work.git("commit", "-q", "-m", "declare its encoding")
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == ["prod.ini:2  AWS_CLIENT_ID"]


def test_export_subst_is_judged_as_git_archive_expands_it(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = server.work
    hidden = "".join(f"%x{ord(character):02x}" for character in KEY)
    work.write(".gitattributes", "version.py export-subst\n")
    work.write("version.py", f"aws_key = '$Format:{hidden}$'\n")
    work.commit("a version file")
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == ["version.py:1  AWS_CLIENT_ID"]
    archive = tmp_path / "archive.tar"
    work.git("archive", "-o", str(archive), "HEAD", "version.py")
    with tarfile.open(archive) as tar:
        member = tar.extractfile("version.py")
        assert member is not None
        assert KEY.encode() in member.read()
    assert main(["scan", "--repo", str(work.path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["path"], f["line"], f["rule"]) for f in found] == [
        ("version.py", 1, "AWS_CLIENT_ID")
    ]


def test_a_history_scan_judges_each_commit_as_its_checkout(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    work = server.work
    declare_utf16(server, with_file=True)
    commit = work.commit("settings")
    assert main(["scan", "--repo", str(work.path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["path"], f["line"], f["commit"]) for f in found] == [("prod.ini", 2, commit)]


def test_files_a_checkout_writes_as_stored_add_nothing(server: Server) -> None:
    """A real UTF-16 declaration over UTF-8 text: the checkout's UTF-16 reads as the
    stored text does, and nothing is judged twice."""
    work = server.work
    work.write(".gitattributes", "*.txt working-tree-encoding=UTF-16LE\n")
    work.write("notes.txt", "x = 1\n".encode("utf-16-le"))
    work.commit("notes")
    code, output = server.push("main")
    assert code == 0, output


def test_an_encoding_git_cannot_write_leaves_the_blob_as_stored() -> None:
    assert reencoded(b"abc", "UTF-16LE") == "abc".encode("utf-16-le")
    assert reencoded(b"\xff\xfe", "UTF-16LE") == b"\xff\xfe"  # not UTF-8
    assert reencoded(b"abc", "NO-SUCH-CODE") == b"abc"


@pytest.mark.parametrize("committed", [True, False], ids=["attribute-in-head", "both-staged"])
def test_the_pre_commit_hook_judges_the_index_as_its_checkout(
    tmp_path: Path, *, committed: bool
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "hello\n")
    repo.write(".gitattributes", "*.ini working-tree-encoding=UTF-16LE\n")
    if committed:
        repo.commit("attributes")
    assert main(["install", "pre-commit", "--repo", str(repo.path)]) == 0
    repo.write("prod.ini", f"[prod]\n{LINE}")
    repo.git("add", "-A")
    blocked = hooked_commit(repo)
    assert blocked.returncode == 1, blocked.stderr
    assert "prod.ini:2" in blocked.stderr
    assert "AWS_CLIENT_ID  blocking" in blocked.stderr
    assert KEY not in blocked.stderr
