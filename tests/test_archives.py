"""Small compressed files are opened within hard limits and their members judged as files.

A zip (and every format built on it: jar, docx, xlsx), a gzip file, archives inside
archives: each member is judged at ``archive!member`` by the pre-commit hook, a real
push into a bare repository with the pre-receive hook, and every scan. A bomb, an
encrypted or damaged archive is not opened: it is named, and ``on_unscannable``
decides, as for a binary over ``max_file_size``.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.core.archives import MAX_MEMBERS, Unopenable, members, opened
from testing.gitrepo import GitRepo
from testing.server import Server, blocking, guarded, hooked_commit
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

KEY = expand("AKIA{rand:A2:16}", "archives")
LINE = f"aws_key = {KEY}\n"


def zipped(files: dict[str, bytes], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def docx(text: str) -> bytes:
    """A minimal Word document: its text in word/document.xml."""
    body = f"<w:document><w:body><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:body></w:document>"
    return zipped({"[Content_Types].xml": b"<Types/>", "word/document.xml": body.encode()})


#: (file name, content, where the key is found)
ARCHIVES = {
    "zip": (
        "bundle.zip",
        zipped({"conf/app.properties": f"# app\n{LINE}".encode()}),
        "bundle.zip!conf/app.properties:2",
    ),
    "stored-zip": (
        "plain.zip",
        zipped({"a.txt": LINE.encode()}, method=zipfile.ZIP_STORED),
        "plain.zip!a.txt:1",
    ),
    "gzip": (
        "settings.ini.gz",
        gzip.compress(f"[a]\n{LINE}".encode(), mtime=0),
        "settings.ini.gz!settings.ini:2",
    ),
    "jar": (
        "lib/app.jar",
        zipped(
            {"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", "app.properties": LINE.encode()}
        ),
        "lib/app.jar!app.properties:1",
    ),
    "docx": ("notes.docx", docx(f"the key: aws_key = {KEY}"), "notes.docx!word/document.xml:1"),
    "nested": (
        "release.zip",
        zipped({"app.war": zipped({"WEB-INF/lib/x.jar": zipped({"x.properties": LINE.encode()})})}),
        "release.zip!app.war!WEB-INF/lib/x.jar!x.properties:1",
    ),
}


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    return guarded(tmp_path, request.param)


@pytest.mark.parametrize("kind", ARCHIVES)
def test_a_member_with_a_key_rejects_the_push(server: Server, kind: str) -> None:
    name, content, where = ARCHIVES[kind]
    server.work.write(name, content)
    server.work.commit("an archive")
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == [f"{where}  AWS_CLIENT_ID"]
    assert KEY not in output


def test_only_the_members_a_commit_changes_are_judged(server: Server) -> None:
    work = server.work
    server.admin("[hook]\nmode = 'warn'\n")
    work.write("bundle.zip", zipped({"a.properties": LINE.encode(), "b.txt": b"one\n"}))
    work.commit("an archive with a key, accepted in warn mode")
    assert server.push("main")[0] == 0
    server.admin("")
    work.write("bundle.zip", zipped({"a.properties": LINE.encode(), "b.txt": b"two\n"}))
    work.commit("another member changed")
    code, output = server.push("main")
    assert code == 0, output


def test_a_member_is_judged_by_the_rules_of_its_own_path(server: Server) -> None:
    secret = expand("{rand:Aa0:18}", "archives-pgpass")
    server.work.write(
        "backup.zip", zipped({"home/.pgpass": f"db:5432:app:app:{secret}\n".encode()})
    )
    server.work.commit("a backup")
    code, output = server.push("main")
    assert code != 0, output
    assert blocking(output) == ["backup.zip!home/.pgpass:1  PGPASS_ENTRY"]


def bomb() -> bytes:
    """A zip of 2 MB of zeros, a hundred times over its members' ratio limit."""
    return zipped({"zeros.bin": bytes(200 << 20)})


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("bomb.zip", bomb(), "archive over its limits"),
        (
            "many.zip",
            zipped({f"f{n}": b"x" for n in range(MAX_MEMBERS + 1)}),
            "archive over its limits",
        ),
        ("damaged.zip", b"PK\x03\x04" + bytes(range(256)) * 4, "damaged archive"),
    ],
    ids=["bomb", "too-many-members", "damaged"],
)
def test_what_cannot_be_opened_rejects_the_push_by_policy(
    server: Server, name: str, content: bytes, reason: str
) -> None:
    server.work.write(name, content)
    server.work.commit("an archive that does not open")
    code, output = server.push("main")
    assert code != 0, output
    assert f"1 file(s) not judged: {name} ({reason})" in output
    server.admin('on_unscannable = "accept"\n')
    code, output = server.push("main")
    assert code == 0, output
    assert (
        f"push accepted by policy (on_unscannable = accept): 1 file(s) not judged: {name} ({reason})"
        in output
    )


def test_the_pre_commit_hook_and_every_scan_open_archives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "hello\n")
    repo.commit("base")
    assert main(["install", "pre-commit", "--repo", str(repo.path)]) == 0
    expected = []
    for name, content, where in ARCHIVES.values():
        repo.write(name, content)
        expected.append(where)
    repo.git("add", "-A")
    blocked = hooked_commit(repo)
    assert blocked.returncode == 1, blocked.stderr
    for where in expected:
        assert where in blocked.stderr
    assert hooked_commit(repo, "--no-verify").returncode == 0
    capsys.readouterr()
    for scan in (
        ["--repo", str(repo.path)],
        ["--repo", str(repo.path), "--tree", "HEAD"],
        ["--files", str(repo.path)],
    ):
        assert main(["scan", *scan, "--format", "json"]) == 1
        found = json.loads(capsys.readouterr().out)["findings"]
        paths = sorted(f"{f['path']}:{f['line']}".removeprefix(f"{repo.path}/") for f in found)
        assert paths == sorted(expected), scan


def test_reads_stop_at_their_bounds() -> None:
    """A bomb costs the bytes read up to a limit, whatever its headers claim."""
    with pytest.raises(Unopenable, match="over its limits"):
        members(gzip.compress(bytes(64 << 20)), "x.gz", max_size=10 << 20)
    assert opened("a.txt", b"plain text", max_size=100)[0].path == "a.txt"
    assert opened("x.zip", zipped({"a": b"1"}), max_size=100)[0].path == "x.zip!a"
