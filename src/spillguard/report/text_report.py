"""``--format text``: findings grouped by commit and file, then a summary.

Plain, colourless, fixed-width text unless colour is asked for; that path imports
rich lazily. Repository-controlled text is always cleaned of escape sequences.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import TYPE_CHECKING

from spillguard.report.findings import shown_match, shown_text, summary_dict
from spillguard.report.sanitize import clean

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.models import Finding, ScanResult
    from spillguard.report import ReportOptions

SHORT_ID = 10


def _group_key(finding: Finding) -> tuple[str, str]:
    return (finding.commit.id if finding.commit else "", finding.path)


def finding_lines(result: ScanResult, options: ReportOptions) -> list[str]:
    lines: list[str] = []
    for (commit_id, path), group in itertools.groupby(result.findings, key=_group_key):
        findings = list(group)
        header = clean(path)
        first = findings[0]
        if commit_id and first.commit is not None:
            ref = f" {clean(first.ref)}" if first.ref else ""
            header = (
                f"commit {commit_id[:SHORT_ID]}{ref} {clean(first.commit.author)} "
                f"{first.commit.date}: {header}"
            )
        lines.append(header)
        lines.extend(_finding_line(finding, options) for finding in findings)
    return lines


def _finding_line(finding: Finding, options: ReportOptions) -> str:
    kind = "blocking" if finding.blocking else "warn"
    if finding.allowlisted:
        kind = "allowlisted"
    match = clean(shown_match(finding, plaintext=options.plaintext))
    text = clean(shown_text(finding, plaintext=options.plaintext).strip())
    return f"  {clean(finding.path)}:{finding.line}  {finding.rule}  {kind}  {match}\n      {text}"


def summary_lines(result: ScanResult) -> list[str]:
    summary = summary_dict(result)
    lines = [
        (
            f"{summary['findings']} finding(s), {summary['blocking']} blocking; "
            f"scanned {summary['commits']} commit(s), {summary['files']} file(s), "
            f"{summary['bytes']} bytes in {summary['seconds']:.2f} s"
        )
    ]
    by_rule = Counter(finding.rule for finding in result.findings)
    if by_rule:
        lines.append("by rule: " + ", ".join(f"{rule} {n}" for rule, n in sorted(by_rule.items())))
    reasons = Counter(skip.reason for skip in result.skipped)
    if reasons:
        lines.append(
            "skipped: " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
        )
    lines.extend(f"failed: {clean(s.path)}: {s.reason}" for s in result.skipped if s.failed)
    lines.extend(f"rule error: {error.rule}: {error.message}" for error in result.errors)
    lines.extend(clean(notice) for notice in result.notices)
    return lines


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    lines = [*finding_lines(result, options), *summary_lines(result)]
    stream.writelines(line + "\n" for line in lines)
