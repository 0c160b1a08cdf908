"""Drive a source through the engine and collect one ScanResult."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from spillguard.engine import Scanner
from spillguard.models import Finding, RuleSet, ScanResult, ScanStats, Skipped

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from spillguard.sources import SourceItem


def run_scan(
    items: Iterable[SourceItem],
    ruleset: RuleSet,
    *,
    on_finding: Callable[[Finding], None] | None = None,
    notices: Iterable[str] = (),
) -> ScanResult:
    """Judge every fragment; ``on_finding`` sees each finding as it is found (streaming)."""
    started = time.monotonic()
    scanner = Scanner(ruleset)
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    files: set[str] = set()
    commits: set[str] = set()
    size = 0
    for item in items:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        files.add(item.path)
        size += len(item.text)
        if item.commit is not None:
            commits.add(item.commit.id)
        for finding in scanner.scan(item):
            findings.append(finding)
            if on_finding is not None:
                on_finding(finding)
    return ScanResult(
        findings=tuple(findings),
        errors=tuple(scanner.errors),
        skipped=tuple(skipped),
        stats=ScanStats(
            commits=len(commits),
            files=len(files),
            bytes=size,
            seconds=time.monotonic() - started,
        ),
        notices=tuple(notices),
    )
