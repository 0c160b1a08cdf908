"""Reporters: each writes a ScanResult to a stream; none of them scans or exits."""

from __future__ import annotations

import importlib

from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from typing import Protocol, TextIO

    from spillguard.core.models import Finding, Rule, ScanResult

    class Writer(Protocol):
        def __call__(self, result: ScanResult, stream: TextIO, options: ReportOptions) -> None: ...

    class FindingWriter(Protocol):
        def __call__(self, finding: Finding, stream: TextIO, options: ReportOptions) -> None: ...


FORMATS = ("text", "json", "jsonl", "sarif", "csv")


class ReportOptions(Frozen):
    """How a report is written (masked or not, colour, duplicates, a summary or not),
    and what it may say of the rules and of where the findings come from."""

    __slots__ = (
        "color",
        "command",
        "deduplicate",
        "plaintext",
        "project",
        "quiet",
        "repository",
        "rules",
    )

    plaintext: bool
    color: bool
    deduplicate: bool
    #: Findings and errors only: no summary.
    quiet: bool
    #: The rules in force, so a report can describe them (SARIF's reportingDescriptors).
    rules: tuple[Rule, ...]
    #: Where the findings come from, for exports ("where known": the sync settings).
    project: str | None
    repository: str | None
    #: How the reader runs spillguard, in the commands a report prints.
    command: str

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        plaintext: bool = False,
        color: bool = False,
        deduplicate: bool = True,
        quiet: bool = False,
        rules: tuple[Rule, ...] = (),
        project: str | None = None,
        repository: str | None = None,
        command: str = "spillguard",
    ) -> None:
        fill(self, locals())


def writer(name: str) -> Writer:
    """The writer for a format name, imported only when asked for (rich is slow to import)."""
    module = importlib.import_module(f"spillguard.report.{name}_report")
    write: Writer = module.write
    return write


def streaming_writer(name: str) -> FindingWriter | None:
    """For a format written a finding at a time as the scan finds them (jsonl), its writer."""
    module = importlib.import_module(f"spillguard.report.{name}_report")
    write_finding: FindingWriter | None = getattr(module, "write_finding", None)
    return write_finding
