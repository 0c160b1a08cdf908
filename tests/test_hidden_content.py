"""End to end: content a pusher could hope to hide from the scan is judged everywhere.

Each case stages a change the way a hostile pusher would (a byte order mark in the
middle of a file, a secret stored as a symlink's target, ...), then shows that the
pre-commit hook blocks the commit, that a real ``git push`` into a bare repository
with the pre-receive hook is rejected, and that ``spillguard scan`` reports the same
path and line; in SHA-1 and SHA-256 repositories alike (git alone reads the latter).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.server import Server, hooked_commit, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

KEY = expand("AKIA{rand:A2:16}", "hidden-content")
NOTES = "".join(f"note {number}\n" for number in range(1, 6))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Server:
    """main holds notes.txt; the pre-receive hook guards the bare repository and the
    pre-commit hook the clone."""
    server = Server(tmp_path_factory.mktemp("server"), object_format=request.param)
    server.work.write("notes.txt", NOTES)
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    installed = subprocess.run(
        [sys.executable, "-m", "spillguard", "install", "pre-commit", "--repo", "."],
        cwd=server.work.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    return server


@pytest.fixture
def pushed(server: Server) -> Iterator[Server]:
    """The server, its clone back on main (detached) for each test."""
    server.work.git("checkout", "-q", "--detach", "main")
    yield server
    (server.bare.path / "spillguard.toml").unlink(missing_ok=True)
    server.work.git("reset", "-q", "--hard")
    server.work.git("clean", "-q", "-fdx")


def scan_findings(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """``spillguard scan main..HEAD``: its exit code and each finding's ``path:line``."""
    code = main(["scan", "--repo", str(repo.path), "--format", "json", "main..HEAD"])
    report = json.loads(capsys.readouterr().out)
    return code, sorted(f"{item['path']}:{item['line']}" for item in report["findings"])


def judged_everywhere(
    server: Server,
    capsys: pytest.CaptureFixture[str],
    stage: Callable[[GitRepo], None],
    where: str,
    *,
    settings: str = "",
) -> str:
    """Stage the change, then: the pre-commit hook blocks it, the push of its commit is
    rejected, and a history scan reports it; each names ``where``. ``settings`` go in
    the administrator's file (the caller puts them in the user's own file too).
    Returns what the pusher saw."""
    work = server.work
    if settings:
        server.admin(settings)
    stage(work)
    blocked = hooked_commit(work)
    assert blocked.returncode == 1, blocked.stderr
    assert where in blocked.stderr
    committed = hooked_commit(work, "--no-verify")
    assert committed.returncode == 0, committed.stderr
    before = server.refs()
    code, output = server.push("HEAD:refs/heads/hidden")
    assert code != 0, output
    assert "push rejected: it adds secrets" in output
    assert f"{where}  AWS_CLIENT_ID" in output
    assert KEY not in output
    assert server.refs() == before
    assert scan_findings(work, capsys) == (1, [where])
    return output


def stage_symlink(work: GitRepo) -> None:
    """A blob stored as a symlink: git keeps any content under mode 120000."""
    blob = work.git("hash-object", "-w", "--stdin", input_text=f"aws_key = {KEY}\n").strip()
    work.git("update-index", "--add", "--cacheinfo", f"120000,{blob},id_rsa")


def test_symlink_target_is_judged_as_text(pushed: Server, capsys) -> None:
    judged_everywhere(pushed, capsys, stage_symlink, "id_rsa:1")


def test_symlink_on_disk_is_judged_by_a_files_scan(tmp_path, capsys) -> None:
    (tmp_path / "creds").symlink_to(f"aws_key={KEY}")
    (tmp_path / "dir-link").symlink_to(tmp_path)
    code = main(["scan", "--files", str(tmp_path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [item["path"] for item in report["findings"]] == [f"{tmp_path}/creds"]
    assert report["skipped"] == []


@pytest.mark.parametrize("mark", [b"\xff\xfe", b"\xfe\xff"])
def test_byte_order_mark_opening_an_added_block_hides_nothing(
    pushed: Server, capsys, mark: bytes
) -> None:
    """The mark is the file's bytes like any others: the file's own first bytes are
    plain text, so the block is too."""

    def stage(work: GitRepo) -> None:
        work.write("notes.txt", NOTES.encode() + mark + f"aws_key = {KEY}\n".encode())
        work.git("add", "notes.txt")

    judged_everywhere(pushed, capsys, stage, "notes.txt:6")


def test_new_file_opening_with_a_mark_and_no_nul_is_read_as_its_bytes(
    pushed: Server, capsys
) -> None:
    """Read as UTF-16, plain text after ``FF FE`` is unreadable characters: its bytes
    are judged too."""

    def stage(work: GitRepo) -> None:
        work.write("creds.txt", b"\xff\xfe" + f"x = 1\naws_key = {KEY}\n".encode())
        work.git("add", "creds.txt")

    judged_everywhere(pushed, capsys, stage, "creds.txt:2")


SMALL = "max_file_size = 400\n"
POINTER = f"version https://git-lfs.github.com/spec/v1\noid sha256:{'0' * 64}\nsize 9\n"


def staging(name: str, content: bytes) -> Callable[[GitRepo], None]:
    def stage(work: GitRepo) -> None:
        work.write(name, content)
        work.git("add", name)

    return stage


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        # text one line over max_file_size: judged whatever its size
        ("big.txt", ("v = 0\n" * 100 + f"x = '{KEY}'\n").encode(), "big.txt:101"),
        # text a NUL makes binary: its printable runs keep their lines
        ("nul.txt", f"\0x = 1\naws_key = {KEY}\n".encode(), "nul.txt:2"),
        # a binary's printable runs, as strings finds them
        ("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0tEXt\0" + f"aws_key={KEY}\0".encode(), "logo.png:3"),
        # an LFS pointer followed by more lines is no pointer
        ("model.bin", f"{POINTER}aws_key = {KEY}\n".encode(), "model.bin:4"),
    ],
)
def test_content_once_skipped_is_judged(
    pushed: Server, capsys, name: str, content: bytes, where: str, own_settings: Path
) -> None:
    own_settings.write_text(SMALL)
    judged_everywhere(pushed, capsys, staging(name, content), where, settings=SMALL)


def notebook(source: str) -> bytes:
    """A Jupyter notebook as json.dump writes it outside ASCII: every character escaped."""
    escaped = "".join(f"\\u{ord(character):04x}" for character in source)
    return f'{{\n "cells": [\n  {{\n   "source": [\n    "{escaped}"\n   ]\n  }}\n ]\n}}\n'.encode()


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        # JSON's \uXXXX, as Jupyter and json.load read it
        ("analysis.ipynb", notebook(f"aws_key = '{KEY}'"), "analysis.ipynb:5"),
        # HTML's numeric references, as a browser shows them
        (
            "page.html",
            ("<p>aws_key = " + "".join(f"&#{ord(c)};" for c in KEY) + "</p>\n").encode(),
            "page.html:1",
        ),
        # percent-encoding, as a URL parser reads it
        (
            "links.txt",
            ("x = 1\naws_key=" + "".join(f"%{ord(c):02X}" for c in KEY) + "\n").encode(),
            "links.txt:2",
        ),
        # quoted-printable, its soft line break inside the key
        (
            "mail.eml",
            f"Content-Transfer-Encoding: quoted-printable\n\naws_key=3D{KEY[:7]}=\n{KEY[7:]}\n".encode(),
            "mail.eml:3",
        ),
        # zero-width spaces inside the key, which no editor shows
        ("zero.txt", f"aws_key = {chr(0x200B).join(KEY)}\n".encode(), "zero.txt:1"),
        # EBCDIC, as a mainframe reads it
        ("jcl.txt", f"//JOB\naws_key = {KEY}\n".encode("cp037"), "jcl.txt:2"),
        # UTF-16 and UTF-32 without a byte order mark
        ("le.ini", f"[a]\naws_key = {KEY}\n".encode("utf-16-le"), "le.ini:2"),
        ("be.ini", f"[a]\naws_key = {KEY}\n".encode("utf-16-be"), "be.ini:2"),
        ("wide.ini", f"[a]\naws_key = {KEY}\n".encode("utf-32-le"), "wide.ini:2"),
    ],
    ids=lambda value: value if isinstance(value, str) and ":" not in value else "",
)
def test_content_its_reader_decodes_is_judged(
    pushed: Server, capsys, name: str, content: bytes, where: str
) -> None:
    judged_everywhere(pushed, capsys, staging(name, content), where)


@pytest.fixture
def own_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's own configuration file, for the hooks and scans of this test."""
    own = tmp_path / "xdg" / "spillguard" / "config.toml"
    own.parent.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return own


LARGE_BINARY = b"\0" + b"x" * 500 + f"aws_key = {KEY}\n".encode()


def commit_huge_binary(work: GitRepo) -> str:
    """A binary over the server's max_file_size, committed past the local hook (whose
    limit is the default: it would find the key)."""
    work.write("huge.bin", LARGE_BINARY)
    work.git("add", "huge.bin")
    work.git("commit", "-q", "--no-verify", "-m", "huge binary")
    return work.head()


def test_a_binary_too_large_to_search_rejects_the_push_by_default(pushed: Server) -> None:
    pushed.admin(SMALL)
    commit_huge_binary(pushed.work)
    before = pushed.refs()
    code, output = pushed.push("HEAD:refs/heads/huge")
    assert code != 0, output
    assert (
        "push rejected by policy (on_unscannable = reject): 1 file(s) not judged: "
        "huge.bin (binary over max_file_size)"
    ) in output
    assert pushed.refs() == before


def test_the_administrator_may_accept_it_with_a_notice(pushed: Server) -> None:
    pushed.admin(SMALL + 'on_unscannable = "accept"\n')
    tip = commit_huge_binary(pushed.work)
    code, output = pushed.push("HEAD:refs/heads/huge-accepted")
    assert code == 0, output
    assert (
        "push accepted by policy (on_unscannable = accept): 1 file(s) not judged: "
        "huge.bin (binary over max_file_size)"
    ) in output
    assert pushed.refs()["refs/heads/huge-accepted"] == tip


def test_locally_a_binary_too_large_to_search_is_named(
    pushed: Server, capsys, tmp_path, own_settings: Path
) -> None:
    """The pre-commit hook and scan name it and go on, unless the user's own file says
    "reject" (a repository file may not loosen or set the policy)."""
    work = pushed.work
    own_settings.write_text(SMALL)
    work.write("huge.bin", LARGE_BINARY)
    work.git("add", "-A")
    committed = hooked_commit(work)
    assert committed.returncode == 0, committed.stderr
    named = "1 file(s) not judged: huge.bin (binary over max_file_size)"
    assert named in committed.stderr
    assert main(["scan", "--repo", str(work.path), "main..HEAD"]) == 0
    assert named in capsys.readouterr().out
    strict = tmp_path / "strict.toml"
    strict.write_text(SMALL + 'on_unscannable = "reject"\n')
    assert main(["scan", "--repo", str(work.path), "--config", str(strict), "main..HEAD"]) == 3
    assert named in capsys.readouterr().out


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_tree_and_files_scans_judge_the_same_content(
    tmp_path, capsys, object_format: str, own_settings: Path
) -> None:
    """``scan --tree`` reads whole blobs, ``scan --files`` the files on disk: each case
    above is found there too, on the same line."""
    repo = GitRepo(tmp_path / "repo", object_format=object_format)
    cases = {
        "creds.txt": (b"\xff\xfe" + f"x = 1\naws_key = {KEY}\n".encode(), 2),
        "big.txt": (("v = 0\n" * 100 + f"x = '{KEY}'\n").encode(), 101),
        "nul.txt": (f"\0x = 1\naws_key = {KEY}\n".encode(), 2),
        "model.bin": (f"{POINTER}aws_key = {KEY}\n".encode(), 4),
    }
    for name, (content, _) in cases.items():
        repo.write(name, content)
    own_settings.write_text(SMALL)
    repo.git("add", "-A")
    stage_symlink(repo)  # in the index only: `git add -A` would stage its deletion
    repo.git("commit", "-q", "-m", "everything")
    expected = sorted([*(f"{name}:{line}" for name, (_, line) in cases.items()), "id_rsa:1"])
    code = main(["scan", "--repo", str(repo.path), "--tree", "HEAD", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert sorted(f"{item['path']}:{item['line']}" for item in report["findings"]) == expected
    (repo.path / "id_rsa").symlink_to(f"aws_key={KEY}")  # what a checkout would make
    code = main(["scan", "--repo", str(repo.path), "--files", str(repo.path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert sorted(f"{item['path']}:{item['line']}" for item in report["findings"]) == expected


def test_a_binary_edited_elsewhere_does_not_report_its_old_strings_again(tmp_path, capsys) -> None:
    """A key in a binary's printable runs is the finding of the commit that added it;
    a later commit that changes other bytes of the binary adds only its new runs."""
    repo = GitRepo(tmp_path / "repo")
    key = expand("AKIA{rand:A2:16}", "edited-binary")
    head = b"\x00\x01" + f"aws_id={key}".encode() + b"\x00\x02"
    repo.write("asset.bin", head + b"version one\x00")
    first = repo.commit("a binary")
    repo.write("asset.bin", head + b"version two, longer\x00\x03")
    repo.commit("edited elsewhere")
    assert main(["scan", "--repo", str(repo.path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(item["commit"], item["path"]) for item in report["findings"]] == [(first, "asset.bin")]
