"""Commit and annotated-tag messages are judged with the same rules as files.

Every clone shows them (``git log``, ``git show TAG``), so a key in a message is a
finding of its commit or tag, under the pseudo-path ``<commit message>`` or ``<tag
message>``: real pushes into a bare repository with the pre-receive hook (SHA-1 and
SHA-256), the pre-push hook, and history scans in every report format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.server import PATH, Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


@pytest.fixture(params=["sha1", "sha256"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    server = Server(tmp_path, object_format=request.param)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    server.push("main")
    install_hook(server.bare.path)
    return server


def test_a_key_in_a_commit_message_rejects_the_push(server: Server) -> None:
    server.work.write("notes.txt", "nothing secret\n")
    tip = server.work.commit(f"rotate the key\n\nold one was {aws_key('message')}\n")
    code, output = server.push("main")
    assert code != 0, output
    expected = f"{tip[:10]}  refs/heads/main  <commit message>:3  AWS_CLIENT_ID  AKIA****"
    assert expected in output
    assert aws_key("message") not in output
    assert "push rejected: it adds secrets" in output


def test_a_key_in_an_annotated_tag_message_rejects_the_push(server: Server) -> None:
    """The tag names a commit the server already has: only its message is new."""
    server.work.git("tag", "-a", "v1.0", "-m", f"release\n\ndeploy key {aws_key('tag')}")
    tag = server.work.git("rev-parse", "v1.0").strip()
    code, output = server.push("v1.0")
    assert code != 0, output
    assert f"{tag[:10]}  refs/tags/v1.0  <tag message>:3  AWS_CLIENT_ID  AKIA****" in output
    assert "refs/tags/v1.0" not in server.refs()


def test_clean_messages_pass(server: Server) -> None:
    server.work.write("notes.txt", "nothing secret\n")
    server.work.commit("an ordinary message")
    server.work.git("tag", "-a", "v2.0", "-m", "an ordinary release")
    code, output = server.push("main", "v2.0")
    assert code == 0, output
    assert "push accepted: no secrets found" in output


def push_hooked(server: Server, *refs: str) -> subprocess.CompletedProcess[str]:
    """``git push`` through the client's own pre-push hook (no server hook)."""
    subprocess.run(
        [sys.executable, "-m", "spillguard", "install", "pre-push"],
        cwd=server.work.path,
        check=True,
        capture_output=True,
    )
    return subprocess.run(
        ["git", "push", "-q", "origin", *refs],
        cwd=server.work.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": PATH},
    )


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_pre_push_judges_commit_and_tag_messages(tmp_path: Path, object_format: str) -> None:
    server = Server(tmp_path, object_format=object_format)
    server.work.write("README.md", "hello\n")
    server.work.commit("base")
    assert server.push("main")[0] == 0
    server.work.write("notes.txt", "nothing secret\n")
    server.work.commit(f"key {aws_key('pre-push')} in a message")
    pushed = push_hooked(server, "main")
    assert pushed.returncode != 0
    assert "<commit message>:1" in pushed.stderr
    assert "AWS_CLIENT_ID  blocking" in pushed.stderr
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.git("tag", "-a", "v3.0", "-m", f"key {aws_key('pre-push tag')}")
    pushed = push_hooked(server, "v3.0")
    assert pushed.returncode != 0
    assert "<tag message>:1" in pushed.stderr
    assert "AWS_CLIENT_ID  blocking" in pushed.stderr


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_history_scan_reports_messages_in_every_format(tmp_path: Path, object_format: str) -> None:
    server = Server(tmp_path, object_format=object_format)
    work = server.work
    work.write("README.md", "hello\n")
    commit = work.commit(f"first\n\n{aws_key('history')}\n")
    work.git("tag", "-a", "v1", "-m", f"tagged {aws_key('history tag')}")
    tag = work.git("rev-parse", "v1").strip()
    report = tmp_path / "report.json"
    assert (
        main(
            ["scan", "--repo", str(work.path), "--all", "--output", str(report), "--format", "json"]
        )
        == 1
    )
    found = [
        (f["path"], f["line"], f["commit"], f.get("ref"))
        for f in json.loads(report.read_text())["findings"]
    ]
    assert found == [
        ("<commit message>", 3, commit, None),
        ("<tag message>", 1, tag, "refs/tags/v1"),
    ]
    sarif = tmp_path / "report.sarif"
    assert (
        main(
            ["scan", "--repo", str(work.path), "--all", "--output", str(sarif), "--format", "sarif"]
        )
        == 1
    )
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    summary = json.loads(report.read_text())["summary"]
    assert (summary["commits"], summary["files"]) == (1, 1)  # the tag is no commit
    assert uris == ["%3Ccommit%20message%3E", "%3Ctag%20message%3E"]
    # Without --all only the commits are selected: no tag, so no tag message.
    assert (
        main(["scan", "--repo", str(work.path), "--output", str(report), "--format", "json"]) == 1
    )
    assert [f["path"] for f in json.loads(report.read_text())["findings"]] == ["<commit message>"]
