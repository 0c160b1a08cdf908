"""``--format csv``: the export the server apps offer, one row a finding, safe in a spreadsheet.

Rows are deduplicated to one per rule, matched string and path (the first seen
is kept) unless deduplication is off. Every cell that a spreadsheet would take as
a formula is neutralised, and escape sequences are shown, not written.
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, Protocol

from spillguard.core.outcome import is_blocking
from spillguard.report.findings import shown_match, shown_text
from spillguard.report.sanitize import clean

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import TextIO

    from spillguard.core.models import Finding, ScanResult
    from spillguard.report import ReportOptions

COLUMNS = (
    "project",
    "repository",
    "ref",
    "commit",
    "author",
    "date",
    "path",
    "line",
    "ruleName",
    "blocking",
    "matchText",
    "text",
)
REVIEWED_COLUMNS = ("digest", "ruleName", "reason", "addedBy", "date")

#: A leading character that makes Excel, LibreOffice or Sheets evaluate a cell
#: (OWASP's CSV injection list): such a cell gets a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: str | None) -> str:
    """A text cell that shows as text: no formula, no escape sequence."""
    text = clean(value or "")
    return "'" + text if text.startswith(_FORMULA_START) else text


def deduplicated(findings: Iterable[Finding]) -> Iterator[Finding]:
    """The first finding of each (rule, matched string, path)."""
    seen: set[tuple[str, str, str]] = set()
    for finding in findings:
        key = (finding.rule, finding.match_text, finding.path)
        if key not in seen:
            seen.add(key)
            yield finding


def _row(finding: Finding, options: ReportOptions) -> list[str | int]:
    commit = finding.commit
    return [
        cell(options.project),
        cell(options.repository),
        cell(finding.ref),
        cell(commit.id if commit else None),
        cell(commit.author if commit else None),
        cell(commit.date if commit else None),
        cell(finding.path),
        finding.line,
        cell(finding.rule),
        "true" if is_blocking(finding) else "false",
        cell(shown_match(finding, plaintext=options.plaintext)),
        cell(shown_text(finding, plaintext=options.plaintext)),
    ]


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    findings = deduplicated(result.findings) if options.deduplicate else result.findings
    out = csv.writer(stream, lineterminator="\r\n")
    out.writerow(COLUMNS)
    out.writerows(_row(finding, options) for finding in findings)


class ReviewedRecord(Protocol):
    """What a reviewed entry offers an export: its digest, never its plaintext."""

    @property
    def digest(self) -> str: ...
    @property
    def rule(self) -> str | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def added_by(self) -> str: ...
    @property
    def date(self) -> str: ...


def write_reviewed_csv(records: Iterable[ReviewedRecord], stream: TextIO) -> None:
    """The reviewed entries as CSV, with the same formula and escape protection."""
    out = csv.writer(stream, lineterminator="\r\n")
    out.writerow(REVIEWED_COLUMNS)
    out.writerows(
        [cell(r.digest), cell(r.rule), cell(r.reason), cell(r.added_by), cell(r.date)]
        for r in records
    )
