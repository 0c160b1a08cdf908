"""``--format json``: the documented, versioned report schema."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spillguard.report.findings import finding_dict, path_fields, summary_dict
from spillguard.report.sanitize import json_safe

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.core.models import ScanResult
    from spillguard.report import ReportOptions

SCHEMA_VERSION = 1


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    document = {
        "version": SCHEMA_VERSION,
        "findings": [finding_dict(f, plaintext=options.plaintext) for f in result.findings],
        "errors": [{"rule": e.rule, "message": e.message} for e in result.errors],
        "skipped": [
            {**path_fields(s.path), "reason": s.reason, "commit": s.commit} for s in result.skipped
        ],
        "summary": summary_dict(result),
    }
    stream.write(json_safe(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
