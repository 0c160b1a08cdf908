"""The status tree as a terminal table: one row per branch.

Drawn by rich where it has something to decide: styles (colour, a terminal), a cell
that is not plain ASCII (wide or combining characters), a table wider than the page.
Otherwise it is drawn here, the same characters rich draws (tests/test_audit_table.py
compares them): rich measures and lays out every cell, which took 41 s for the twenty
thousand branches of ten thousand repositories on a loaded 2-CPU machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spillguard.audit.status import rows
from spillguard.report.sanitize import clean

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import TextIO

COLUMNS = ("project", "repository", "branch", "state", "findings", "blocking", "lastCommit",
           "scannedAt", "note")  # fmt: skip
HEADINGS = ("Project", "Repository", "Branch", "State", "Findings", "Blocking", "Last commit",
            "Scanned", "Rules / error")  # fmt: skip
#: Columns of a page that is not a terminal.
WIDTH = 200


def write_table(tree: dict[str, Any], stream: TextIO, *, color: bool) -> None:
    # Branch and repository names come from the repositories: text, never markup.
    cells = [[clean(str(row[column])) for column in COLUMNS] for row in rows(tree)]
    widths = [max(map(len, column)) for column in zip(HEADINGS, *cells, strict=True)]
    plain = all(text.isascii() and text.isprintable() for row in cells for text in row)
    if _styled(stream, color=color) or not plain or sum(widths) + 3 * len(widths) + 1 > WIDTH:
        _with_rich(cells, stream, color=color)
    else:
        stream.writelines(f"{line}\n" for line in _boxed(cells, widths))
    summary = tree["summary"]
    stream.write(
        f"{summary['repositories']} repositories ({summary['failed']} failed), "
        f"{summary['branches']} branches, {summary['commits']} commits judged in this run, "
        f"{summary['findings']} findings, {summary['blocking']} blocking\n"
    )


def _styled(stream: TextIO, *, color: bool) -> bool:
    """Whether rich would style the table (bold headings even without colour): on a
    terminal, or one it is told it writes to (``FORCE_COLOR``, ``TTY_COMPATIBLE``)."""
    import os

    forced = any(name in os.environ for name in ("FORCE_COLOR", "TTY_COMPATIBLE"))
    return color or forced or stream.isatty()


def _with_rich(cells: list[list[str]], stream: TextIO, *, color: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(*HEADINGS)
    for row in cells:
        table.add_row(*map(Text, row))
    console = Console(file=stream, no_color=not color, width=WIDTH if not color else None)
    console.print(table)


def _boxed(cells: list[list[str]], widths: Sequence[int]) -> Iterator[str]:
    """rich's table (its heavy-headed box), each cell padded by a space either side."""

    def rule(left: str, line: str, cross: str, right: str) -> str:
        return left + cross.join(line * (width + 2) for width in widths) + right

    def row(texts: Sequence[str], bar: str) -> str:
        return (
            bar
            + bar.join(f" {text:<{width}} " for text, width in zip(texts, widths, strict=True))
            + bar
        )

    yield rule("┏", "━", "┳", "┓")
    yield row(HEADINGS, "┃")
    yield rule("┡", "━", "╇", "┩")
    for texts in cells:
        yield row(texts, "│")
    yield rule("└", "─", "┴", "┘")
