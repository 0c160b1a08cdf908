"""Report formats through the real command line and a real repository."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.tokens import expand

KEY = expand("AKIA{rand:A2:16}", "cli-reports")


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """The same key added to one file in two commits, and to a second file."""
    repo = GitRepo(tmp_path_factory.mktemp("cli-reports") / "shop")
    repo.write("app.py", f"key = '{KEY}'\n")
    repo.commit("add key")
    repo.write("app.py", f"key = '{KEY}'\nagain = '{KEY}'\n")
    repo.commit("again")
    repo.write("other.py", f"k = '{KEY}'\n")
    repo.commit("other")
    return repo


def csv_rows(capsys, *argv: str) -> list[dict[str, str]]:
    assert main(["scan", "--format", "csv", *argv]) == 1
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_csv_is_deduplicated_per_rule_string_and_path_unless_asked(shop: GitRepo, capsys) -> None:
    rows = csv_rows(capsys, "--repo", str(shop.path))
    assert sorted(row["path"] for row in rows) == ["app.py", "other.py"]
    assert {row["repository"] for row in rows} == {"shop"}
    assert all(row["matchText"] == KEY[:4] + "*" * 16 for row in rows)
    rows = csv_rows(capsys, "--repo", str(shop.path), "--no-deduplicate")
    assert sorted(row["path"] for row in rows) == ["app.py", "app.py", "other.py"]


def test_csv_follows_the_export_settings_and_sync_names(
    shop: GitRepo, tmp_path: Path, capsys
) -> None:
    settings = tmp_path / "admin.toml"
    settings.write_text(
        "include_plaintext_in_exports = true\ndeduplicate_exports = false\n"
        '[sync]\nproject = "SHOP"\nrepo = "shop-web"\n'
    )
    rows = csv_rows(capsys, "--repo", str(shop.path), "--config", str(settings), "--offline")
    assert len(rows) == 3
    assert {(row["project"], row["repository"]) for row in rows} == {("SHOP", "shop-web")}
    assert {row["matchText"] for row in rows} == {KEY}
    # the export settings govern exports only: JSON stays masked
    assert (
        main(["scan", "--repo", str(shop.path), "--config", str(settings), "--format", "json"]) == 1
    )
    assert KEY not in capsys.readouterr().out


def test_machine_formats_keep_the_summary_on_stderr(shop: GitRepo, capsys) -> None:
    argv = ["scan", "--repo", str(shop.path)]
    for fmt in ("json", "jsonl", "sarif", "csv"):
        assert main([*argv, "--format", fmt]) == 1
        out, err = capsys.readouterr()
        assert "finding(s)" not in out
        assert "3 finding(s), 3 blocking" in err
    assert main([*argv, "--format", "jsonl", "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    assert [json.loads(line)["path"] for line in out.splitlines()] == [
        "other.py",
        "app.py",
        "app.py",
    ]


def test_sarif_from_a_history_scan_names_each_commit(shop: GitRepo, capsys) -> None:
    assert main(["scan", "--repo", str(shop.path), "--format", "sarif"]) == 1
    document = json.loads(capsys.readouterr().out)
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(document)
    results = document["runs"][0]["results"]
    log = shop.git("log", "--format=%H").split()
    assert [r["properties"]["commit"] for r in results] == [log[0], log[1], log[2]]


def test_a_reader_that_stops_early_ends_the_scan_quietly(tmp_path: Path) -> None:
    for n in range(40):
        (tmp_path / f"f{n}.py").write_text(f"k = '{KEY}'\n" * 500)
    argv = [sys.executable, "-m", "spillguard", "scan", "--files", str(tmp_path)]
    with subprocess.Popen(
        [*argv, "--format", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["rule"] == "AWS_CLIENT_ID"
        process.stdout.close()  # as `| head -1` does
        stderr = process.stderr.read() if process.stderr else b""
        code = process.wait()
    assert (code, stderr) == (3, b"")


def test_review_list_as_csv_has_digests_and_inert_cells(repo: GitRepo, capsys) -> None:
    repo.write("a.txt", "x\n")
    repo.commit()
    where = ["--repo", str(repo.path)]
    assert main(["review", "add", KEY, "--rule", "AWS_CLIENT_ID", "--reason", "=1+1", *where]) == 0
    assert main(["review", "list", "--format", "csv", *where]) == 0
    out = capsys.readouterr().out
    (row,) = csv.DictReader(io.StringIO(out))
    assert (row["ruleName"], row["reason"]) == ("AWS_CLIENT_ID", "'=1+1")
    assert len(row["digest"]) == 64
    assert KEY not in out


def test_quiet_text_report_has_findings_and_errors_but_no_summary(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text(f"k = '{KEY}'\n")
    assert main(["scan", "--files", str(tmp_path), str(tmp_path / "gone"), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "a.py:1:6  AWS_CLIENT_ID  blocking" in out
    assert f"failed: {tmp_path / 'gone'}: does not exist" in out
    assert "finding(s)" not in out


@pytest.fixture(scope="module")
def latin1_name(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A file whose name is not UTF-8 (written on a Latin-1 system), holding a key."""
    repo = GitRepo(tmp_path_factory.mktemp("latin1-name") / "repo")
    name = b"caf\xe9.txt"
    (Path(repo.path).joinpath(name.decode("utf-8", "surrogateescape"))).write_text(f"k={KEY}\n")
    repo.commit("latin-1 name")
    return repo


@pytest.mark.parametrize(
    ("fmt", "shown"),
    [
        ("text", "caf\\xe9.txt:1:3  AWS_CLIENT_ID"),
        ("json", '"path": "caf\\\\xe9.txt",\n      "pathBytes": "Y2Fm6S50eHQ="'),
        ("jsonl", '"path": "caf\\\\xe9.txt", "pathBytes": "Y2Fm6S50eHQ="'),
        ("sarif", '"uri": "caf%E9.txt"'),
        ("csv", ",caf\\xe9.txt,1,AWS_CLIENT_ID,"),
    ],
)
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(
    latin1_name: GitRepo, tmp_path: Path, fmt: str, shown: str
) -> None:
    # A UTF-8 terminal's stdout refuses undecodable bytes: the report must escape them.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    argv = [sys.executable, "-m", "spillguard", "scan", "--repo", str(latin1_name.path)]
    completed = subprocess.run([*argv, "--format", fmt], capture_output=True, env=env, check=False)
    assert (completed.returncode, completed.stderr.count(b"error")) == (1, 0)
    out = completed.stdout.decode("utf-8")  # strict: the report is valid UTF-8
    assert shown in out
    if fmt in {"json", "sarif"}:
        json.loads(out)
    if fmt == "json":
        (finding,) = json.loads(out)["findings"]
        assert finding["path"] == "caf\\xe9.txt"  # no lone surrogate for a reader to drop
        assert base64.b64decode(finding["pathBytes"]) == b"caf\xe9.txt"
    written = tmp_path / f"report.{fmt}"
    assert (
        main(["scan", "--repo", str(latin1_name.path), "--format", fmt, "--output", str(written)])
        == 1
    )
    assert shown in written.read_text(encoding="utf-8")


def test_a_full_disk_is_one_clear_error(shop: GitRepo, capsys) -> None:
    # /dev/full fails every write with ENOSPC, as a full disk does.
    argv = ["scan", "--repo", str(shop.path), "--format", "json", "--output", "/dev/full"]
    assert main(argv) == 3
    assert capsys.readouterr().err == "spillguard: error: No space left on device\n"


def test_offsets_and_sarif_columns_count_utf16_code_units_as_the_server(
    tmp_path: Path, capsys
) -> None:
    # Two emoji (beyond U+FFFF: two UTF-16 units each) and an accented letter before the key.
    line = f"\U0001f511\U0001f511 clé = '{KEY}'"
    source = tmp_path / "keys.txt"
    source.write_text(line + "\n", encoding="utf-8")
    java_start = line.index(KEY) + 2  # what String.indexOf gives on the server
    assert main(["scan", "--files", str(source), "--format", "json"]) == 1
    finding = json.loads(capsys.readouterr().out)["findings"][0]
    assert (finding["lineOffsetStart"], finding["lineOffsetEnd"]) == (java_start, java_start + 20)
    assert main(["scan", "--files", str(source), "--format", "jsonl"]) == 1
    assert json.loads(capsys.readouterr().out)["lineOffsetStart"] == java_start
    assert main(["scan", "--files", str(source), "--format", "sarif"]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert run["columnKind"] == "utf16CodeUnits"
    assert (region["startColumn"], region["endColumn"]) == (java_start + 1, java_start + 21)
    assert main(["scan", "--files", str(source), "--no-color"]) == 1
    shown = capsys.readouterr().out.splitlines()
    text_line = next(i for i, row in enumerate(shown) if "clé" in row)
    caret = shown[text_line + 1]
    # On a terminal an emoji is two columns wide: the caret sits under the masked key.
    assert caret.index("^") - shown[text_line].index("🔑") == line.index(KEY) + 2
