"""--output: regular files replaced atomically, devices, FIFOs and links written in place."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from spillguard.cli import main
from spillguard.core.output import open_output
from testing.tokens import expand

AWS_KEY = expand("AKIA{rand:A2:16}", "output")


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.env").write_text(f"AWS_ID={AWS_KEY}\n")
    return source


def test_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path, secret_dir) -> None:
    report = tmp_path / "report.json"
    report.write_text("old")
    report.chmod(0o640)
    assert (
        main(["scan", "--files", str(secret_dir), "--format", "json", "--output", str(report)]) == 1
    )
    assert json.loads(report.read_text())["summary"]["findings"] == 1
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "src"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text("old report\n")

    def crash_midway() -> None:
        with open_output(str(report)) as stream:
            stream.write("half a rep")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        crash_midway()
    assert report.read_text() == "old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_dev_null_is_written_in_place_never_replaced(secret_dir) -> None:
    before = Path("/dev/null").stat()
    assert main(["scan", "--files", str(secret_dir), "--output", "/dev/null"]) == 1
    after = Path("/dev/null").stat()
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_fifo_is_written_in_place(tmp_path: Path, secret_dir) -> None:
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code = main(["scan", "--files", str(secret_dir), "--format", "jsonl", "--output", str(fifo)])
    reader.join(timeout=30)
    assert code == 1
    assert json.loads(received[0])["rule"] == "AWS_CLIENT_ID"
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("redirect", ["pipe", "file"])
def test_dev_stdout_reaches_the_callers_stdout(tmp_path: Path, secret_dir, redirect: str) -> None:
    argv = [sys.executable, "-m", "spillguard", "scan", "--files", str(secret_dir)]
    argv += ["--format", "json", "--output", "/dev/stdout"]
    if redirect == "pipe":
        completed = subprocess.run(argv, capture_output=True, text=True, check=False)
        out = completed.stdout
    else:
        target = tmp_path / "redirected.json"
        with target.open("w") as handle:
            completed = subprocess.run(
                argv, stdout=handle, stderr=subprocess.PIPE, text=True, check=False
            )
        out = target.read_text()
    assert completed.returncode == 1, completed.stderr
    assert json.loads(out)["summary"]["findings"] == 1
    assert Path("/dev/stdout").is_symlink()
    assert "1 finding(s)" in completed.stderr  # the summary stays off the report's stream


def test_directory_and_unwritable_targets_are_one_line_errors(
    tmp_path: Path, secret_dir, capsys
) -> None:
    assert main(["scan", "--files", str(secret_dir), "--output", str(tmp_path)]) == 2
    missing = tmp_path / "no" / "such" / "dir" / "r.json"
    assert main(["scan", "--files", str(secret_dir), "--output", str(missing)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors[0] == f"spillguard: error: --output {tmp_path}: is a directory"
    assert errors[1].startswith(f"spillguard: error: --output {missing}: cannot write")
    assert not missing.parent.exists()


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_killed_scan_leaves_no_temporary_report(tmp_path: Path, signal_number: int) -> None:
    """A real scan, held by a slow rule while its report is being written, is killed:
    the temporary file, readable by its owner only until then, is gone."""
    config = tmp_path / "admin.toml"
    config.write_text("[custom_rules]\nSLOW = '((?:\\p{Lu}\\p{Ll})+)+$'\n")  # 20 s a line
    source = tmp_path / "src"
    source.mkdir()
    (source / "slow.txt").write_text("Ab" * 2000 + "!\n")
    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-m", "spillguard", "scan", "--files", str(source)]
    argv += ["--config", str(config), "--format", "jsonl", "--output", str(out / "r.jsonl")]
    scan = subprocess.Popen(
        argv,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,  # noqa: PLW1509 - the test starts no thread before this
    )
    try:
        temporary = wait_for_one_file(out, scan)
        assert temporary.name.startswith(".r.jsonl.")
        assert stat.S_IMODE(temporary.stat().st_mode) == 0o600
        scan.send_signal(signal_number)
        _, err = scan.communicate(timeout=60)
    finally:
        scan.kill()
    assert scan.returncode != 0
    assert list(out.iterdir()) == []
    assert "Traceback" not in err


def _interruptible() -> None:
    """In the scan's process: Ctrl-C as a terminal delivers it. A job a non-interactive
    shell runs in the background (``nohup ... &``, some CI runners) ignores SIGINT, and
    its children inherit that, so the scan under test would never see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_one_file(folder: Path, process: subprocess.Popen[str]) -> Path:
    """The first file to appear in ``folder`` while ``process`` runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        found = list(folder.iterdir())
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("the scan wrote no temporary file")
