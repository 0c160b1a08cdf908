"""``--format jsonl``: one finding object a line, flushed as found so a pipe sees it at once."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spillguard.report.findings import finding_dict
from spillguard.report.sanitize import json_safe

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.core.models import Finding, ScanResult
    from spillguard.report import ReportOptions


def write_finding(finding: Finding, stream: TextIO, options: ReportOptions) -> None:
    line = json.dumps(finding_dict(finding, plaintext=options.plaintext), ensure_ascii=False)
    stream.write(json_safe(line) + "\n")
    stream.flush()


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    for finding in result.findings:
        write_finding(finding, stream, options)
