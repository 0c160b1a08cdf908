"""What the terminal report shows of a finding: once, located, masked, pointed at."""

from __future__ import annotations

import io

from spillguard.core.models import Fragment, ScanResult, ScanStats, Skipped
from spillguard.report import ReportOptions, writer
from spillguard.scanning.run import run_scan
from testing.reports import sample_ruleset
from testing.tokens import expand

AWS_SECRET = expand("{rand:Aa0:40}", "text-finding")
PASSWORD = expand("{rand:Aa0:9}", "text-finding")


def text_of(*fragments: Fragment, **options: object) -> list[str]:
    ruleset = sample_ruleset()
    result = run_scan(list(fragments), ruleset, scope="files")
    stream = io.StringIO()
    writer("text")(result, stream, ReportOptions(rules=ruleset.rules, **options))  # type: ignore[arg-type]
    return stream.getvalue().splitlines()


def test_a_generic_secret_shows_no_character_and_no_length() -> None:
    short, long = PASSWORD, PASSWORD * 4
    lines = text_of(
        Fragment(path="a.py", text=f'password = "{short}"'),
        Fragment(path="b.py", text=f"aws_secret_access_key = '{AWS_SECRET}'"),
        Fragment(path="c.py", text=f'password = "{long}"'),
    )
    assert lines[1] == '    password = "********"'  # both quotes kept
    assert lines[2] == "                ^^^^^^^^"
    assert lines[9] == '    password = "********"'  # four times longer, shown the same
    aws = lines[5]
    assert aws.endswith("= '********'")
    assert AWS_SECRET[:1] + "*" not in aws


def test_a_long_line_is_a_window_around_the_secret_with_its_column() -> None:
    before, after = "x" * 300, "y" * 300
    key = expand("AKIA{rand:A2:16}", "text-finding-long")
    head, line, caret, _ = text_of(Fragment(path="min.js", text=f"{before} k={key} {after}"))[:4]
    assert head == "min.js:1:304  AWS_CLIENT_ID  blocking  AWS access key ID"
    assert line == "    ..." + ("x" * 37 + " k=")[-40:] + "AKIA******** " + "y" * 39 + "..."
    assert caret == "    " + " " * 43 + "^" * 12


def test_plaintext_shows_the_secret_and_no_mask() -> None:
    lines = text_of(Fragment(path="a.py", text=f'password = "{PASSWORD}"'), plaintext=True)
    assert lines[1] == f'    password = "{PASSWORD}"'
    assert lines[2] == "                " + "^" * len(PASSWORD)


def test_skipped_files_are_named_up_to_a_limit() -> None:
    skipped = tuple(Skipped(path=f"img/{n}.png", reason="binary") for n in range(7))
    result = ScanResult(
        skipped=(*skipped, Skipped(path="vendor/lib", reason="submodule")),
        stats=ScanStats(files=8, scope="files"),
    )
    stream = io.StringIO()
    writer("text")(result, stream, ReportOptions())
    assert stream.getvalue().splitlines()[1:] == [
        "skipped: 7 binary, 1 submodule",
        "  binary: img/0.png, img/1.png, img/2.png, img/3.png, img/4.png and 2 more",
        "  submodule: vendor/lib",
    ]
