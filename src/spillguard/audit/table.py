"""The status tree as a terminal table (rich): one row per branch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spillguard.audit.status import rows
from spillguard.report.sanitize import clean

if TYPE_CHECKING:
    from typing import TextIO

COLUMNS = ("project", "repository", "branch", "state", "findings", "blocking", "lastCommit",
           "scannedAt", "note")  # fmt: skip
HEADINGS = ("Project", "Repository", "Branch", "State", "Findings", "Blocking", "Last commit",
            "Scanned", "Rules / error")  # fmt: skip


def write_table(tree: dict[str, Any], stream: TextIO, *, color: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(*HEADINGS)
    for row in rows(tree):
        # Branch and repository names come from the repositories: text, never markup.
        table.add_row(*(Text(clean(str(row[column]))) for column in COLUMNS))
    console = Console(file=stream, no_color=not color, width=200 if not color else None)
    console.print(table)
    summary = tree["summary"]
    stream.write(
        f"{summary['repositories']} repositories ({summary['failed']} failed), "
        f"{summary['branches']} branches, {summary['commits']} commits judged in this run, "
        f"{summary['findings']} findings, {summary['blocking']} blocking\n"
    )
