"""From a ScanResult to an exit code: the one place that decides."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.errors import ExitCode

if TYPE_CHECKING:
    from spillguard.models import Finding, ScanResult


def is_blocking(finding: Finding) -> bool:
    return finding.blocking and not finding.allowlisted


def exit_code(result: ScanResult, *, warn_only: bool = False) -> ExitCode:
    """1 for a blocking finding (unless warn-only), else 3 if the scan was incomplete, else 0."""
    if not warn_only and any(is_blocking(finding) for finding in result.findings):
        return ExitCode.FINDINGS
    if result.errors or result.out_of_time or any(skip.failed for skip in result.skipped):
        return ExitCode.RUNTIME
    return ExitCode.CLEAN
