"""Every report format against its golden file (colour off), plus what each format promises."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
import regex

from spillguard import __version__
from spillguard.core.models import Fragment
from spillguard.report import ReportOptions, writer
from spillguard.report.csv_report import cell, write_reviewed_csv
from spillguard.report.jsonl_report import write_finding
from spillguard.report.sarif_report import sarif_document
from spillguard.scanning.run import run_scan
from testing.golden import assert_golden
from testing.reports import (
    AWS_KEY,
    FORMULA_TOKEN,
    OTHER_KEY,
    sample_fragments,
    sample_result,
    sample_ruleset,
)

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SECRETS = (AWS_KEY, OTHER_KEY, FORMULA_TOKEN)


def render(name: str, *, as_is: bool = False, **options: object) -> str:
    """The sample result in format ``name``; without ``as_is``, with the version and
    the page spillguard was installed from (both vary) as placeholders."""
    result = sample_result()
    stream = io.StringIO(newline="")
    writer(name)(result, stream, ReportOptions(project="PROJ", repository="shop", **options))
    if as_is:
        return stream.getvalue()
    output = stream.getvalue().replace(f'"version": "{__version__}"', '"version": "VERSION"')
    return regex.sub(r'"informationUri": "[^"]*"', '"informationUri": "PAGE"', output)


@pytest.mark.parametrize(
    ("name", "golden"),
    [
        ("text", "report.txt"),
        ("json", "report.json"),
        ("jsonl", "report.jsonl"),
        ("sarif", "report.sarif"),
        ("csv", "report.csv"),
    ],
)
def test_format_matches_golden_and_shows_no_secret_or_escape(name: str, golden: str) -> None:
    output = render(name)
    assert_golden(golden, output)
    assert not any(secret in output for secret in SECRETS)
    assert "\x1b" not in output
    assert "\u202e" not in output


def test_csv_without_deduplication_has_a_row_per_finding() -> None:
    rows = list(csv.DictReader(io.StringIO(render("csv", deduplicate=False))))
    assert [(row["path"][:6], row["line"]) for row in rows] == [
        ("config", "11"),
        ("config", "12"),
        ("deploy", "1"),
        ("docs/[", "3"),
        ("docs/[", "4"),
    ]
    deduplicated = list(csv.DictReader(io.StringIO(render("csv"))))
    assert len(deduplicated) == 3  # same rule, string and path collapse to the first row


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t"])
def test_csv_cell_that_starts_like_a_formula_is_text(start: str) -> None:
    assert cell(f"{start}HYPERLINK(1)") == f"'{start}HYPERLINK(1)"
    assert cell("ok=1") == "ok=1"
    assert cell("\r=1") == "\\x0d=1"  # a carriage return is shown, not written


def test_csv_with_a_formula_like_secret_opens_as_text() -> None:
    rows = list(csv.reader(io.StringIO(render("csv", plaintext=True))))
    formula_row = next(row for row in rows if "FORMULA_TOKEN" in row)
    assert f"'{FORMULA_TOKEN}" in formula_row  # the plaintext, shown but inert
    for row in rows:
        assert not any(value.startswith(("=", "+", "-", "@")) for value in row), row


def test_reviewed_csv_lists_digests_never_plaintext() -> None:
    class Record:
        digest = "ab" * 32
        rule = "AWS_CLIENT_ID"
        reason = "=test fixture"
        added_by = "Ada Tester"
        date = "2024-01-01"

    stream = io.StringIO(newline="")
    write_reviewed_csv([Record()], stream)
    assert_golden("reviewed.csv", stream.getvalue())
    assert list(csv.reader(io.StringIO(stream.getvalue())))[1][2] == "'=test fixture"


def test_sarif_validates_against_the_official_schema() -> None:
    document = json.loads(render("sarif"))
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(document)


def test_sarif_passes_githubs_upload_checks(tmp_path: Path, capsys) -> None:
    """The golden report (allowlisted, warn-only, truncated, hostile text, a rule error)
    and a history scan of a real repository (commit messages, a non-UTF-8 file name,
    a reviewed finding) pass the multitool's GitHub and SARIF rules: every rule with a
    fullDescription, a name that is not its id, and an informationUri."""
    from spillguard.cli import main
    from testing.gitrepo import GitRepo
    from testing.sarif_multitool import github_problems

    golden = tmp_path / "golden.sarif"
    golden.write_text(render("sarif", as_is=True), encoding="utf-8")
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", f'aws_key = "{AWS_KEY}"\npassword = "{FORMULA_TOKEN[4:]}"\n')
    (repo.path / "caf\xe9.txt".encode("latin-1").decode("utf-8", "surrogateescape")).write_bytes(
        f"key = {OTHER_KEY}\n".encode()
    )
    repo.commit(f"settings\n\nthe old key was {OTHER_KEY}")
    main(["review", "add", "--repo", str(repo.path), FORMULA_TOKEN[4:]])
    scanned = tmp_path / "scan.sarif"
    argv = ["scan", "--repo", str(repo.path), "--all", "--include-reviewed", "--format", "sarif"]
    assert main([*argv, "--output", str(scanned)]) == 1
    capsys.readouterr()
    assert github_problems([golden, scanned], tmp_path / "validation.sarif") == []
    rules = json.loads(scanned.read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"]: rule["name"] for rule in rules} == {
        "AWS_CLIENT_ID": "AwsClientId",
        "GENERIC_PASSWORD": "GenericPassword",
    }


@pytest.mark.parametrize(
    ("origin", "page"),
    [
        ("https://example.com/org/spillguard.git", "https://example.com/org/spillguard"),
        ("https://ada:token@example.com:8443/spillguard", "https://example.com:8443/spillguard"),
        ("ssh://git@example.com/spillguard.git", None),
        (Path(__file__).resolve().parent.parent.as_uri(), "docs/configuration.md#rules"),
        ("file:///nonexistent/checkout", None),
        (None, None),
    ],
)
def test_sarif_names_the_page_spillguard_came_from(origin: str | None, page: str | None) -> None:
    from spillguard.report.sarif_report import information_uri

    found = information_uri(origin)
    assert found == page if page is None or "://" in page else found.endswith("/" + page)


def test_sarif_locations_rules_fingerprints_and_commit() -> None:
    result = sample_result()
    run = sarif_document(result, ReportOptions())["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == ["AWS_CLIENT_ID", "FORMULA_TOKEN", "SLOW_RULE"]
    first, allowlisted, formula, _, truncated = run["results"]
    region = first["locations"][0]["physicalLocation"]["region"]
    finding = result.findings[0]
    assert (region["startLine"], region["startColumn"]) == (11, finding.line_offset_start + 1)
    assert region["endColumn"] - region["startColumn"] == len(AWS_KEY)
    assert first["partialFingerprints"]["spillguardFingerprint/v2"] == finding.fingerprint
    assert first["properties"]["commit"] == finding.commit.id if finding.commit else False
    assert (first["level"], formula["level"]) == ("error", "warning")
    assert allowlisted["suppressions"][0]["kind"] == "inSource"
    assert "startColumn" not in truncated["locations"][0]["physicalLocation"]["region"]
    assert run["invocations"][0]["executionSuccessful"] is False  # SLOW_RULE failed


def test_jsonl_writes_and_flushes_each_finding_as_the_scan_finds_it() -> None:
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding="utf-8", write_through=False)
    seen_before_next: list[int] = []

    def fragments():
        for fragment in sample_fragments():
            yield fragment
            # the scan has not gone on yet, but what it found is already out
            seen_before_next.append(buffer.getvalue().count(b"\n"))

    run_scan(
        fragments(),
        sample_ruleset(),
        on_finding=lambda finding: write_finding(finding, stream, ReportOptions()),
        stream=True,
    )
    assert seen_before_next == [2, 3, 5]


def test_plaintext_is_shown_only_when_asked() -> None:
    assert AWS_KEY in render("json", plaintext=True)
    assert AWS_KEY not in render("json")
    stream = io.StringIO()
    writer("text")(
        run_scan([Fragment(path="a", text=AWS_KEY)], sample_ruleset()),
        stream,
        ReportOptions(plaintext=True),
    )
    assert AWS_KEY in stream.getvalue()


def test_caret_stays_under_the_match_after_wide_characters() -> None:
    stream = io.StringIO()
    result = run_scan([Fragment(path="a", text=f"鍵 = '{AWS_KEY}'")], sample_ruleset())
    writer("text")(result, stream, ReportOptions())
    text_line, caret_line = stream.getvalue().splitlines()[1:3]
    assert text_line == "    鍵 = 'AKIA********'"
    assert caret_line == "    " + " " * 6 + "^" * 12


def test_colour_changes_only_styles_never_the_text() -> None:
    coloured = render("text", color=True)
    assert "\x1b[" in coloured
    carets = regex.compile(r" *\^+")
    plain_lines = [line for line in render("text").splitlines() if not carets.fullmatch(line)]
    stripped = regex.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert [line.rstrip() for line in stripped.splitlines()] == plain_lines
    assert "\x1b]" not in coloured  # nothing but colour codes: no title, no clear-screen
    assert "\x1b[2J" not in coloured


def test_csv_marks_an_allowlisted_finding_as_not_blocking() -> None:
    """The allowlisted line of the sample (config/settings.py:12, reported with
    ``include_allowlisted``) blocks nothing, whatever its rule."""
    rows = list(csv.DictReader(io.StringIO(render("csv", deduplicate=False))))
    config = [(row["line"], row["blocking"]) for row in rows if row["path"].startswith("config")]
    assert config == [("11", "true"), ("12", "false")]


def test_sarif_says_the_run_failed_when_a_file_could_not_be_read() -> None:
    from spillguard.core.models import ScanResult, Skipped

    failed = ScanResult(skipped=(Skipped(path="gone.txt", reason="does not exist", failed=True),))
    skipped = ScanResult(skipped=(Skipped(path="logo.png", reason="binary"),))
    for result, successful in ((failed, False), (skipped, True)):
        run = sarif_document(result, ReportOptions())["runs"][0]
        assert run["invocations"][0]["executionSuccessful"] is successful
