"""The benchmark's one table: a row per measurement."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

HEADERS = ("measurement", "repository", "result", "compared", "target", "met")


@dataclasses.dataclass(frozen=True, slots=True)
class Row:
    measurement: str
    repository: str = ""
    result: str = ""
    compared: str = ""
    target: str = ""
    #: None when there is no target (or nothing to judge it by).
    met: bool | None = None

    def cells(self) -> tuple[str, ...]:
        met = "" if self.met is None else ("yes" if self.met else "NO")
        return (self.measurement, self.repository, self.result, self.compared, self.target, met)


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def megabytes(value: float) -> str:
    return f"{value / 1e6:.1f} MB" if value < 100e6 else f"{value / 1e6:.0f} MB"


def render(rows: Sequence[Row]) -> str:
    table = [HEADERS, *(row.cells() for row in rows)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(HEADERS))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
        for cells in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
