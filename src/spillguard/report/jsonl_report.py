"""``--format jsonl``: one finding object a line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spillguard.report.findings import finding_dict

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.models import Finding, ScanResult
    from spillguard.report import ReportOptions


def write_finding(finding: Finding, stream: TextIO, options: ReportOptions) -> None:
    stream.write(json.dumps(finding_dict(finding, plaintext=options.plaintext), ensure_ascii=False))
    stream.write("\n")


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    for finding in result.findings:
        write_finding(finding, stream, options)
