"""Reporters: each writes a ScanResult to a stream; none of them scans or exits."""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.models import ScanResult

FORMATS = ("text", "json", "jsonl", "sarif", "csv")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReportOptions:
    plaintext: bool = False
    color: bool = False
    deduplicate: bool = True
    verbose: bool = False


class Writer(Protocol):
    def __call__(self, result: ScanResult, stream: TextIO, options: ReportOptions) -> None: ...


def writer(name: str) -> Writer:
    """The writer for a format name, imported only when asked for (rich is slow to import)."""
    module = importlib.import_module(f"spillguard.report.{name}_report")
    write: Writer = module.write
    return write
