"""Findings as CSV: per repository, per project, and all of it as one zip.

The server's export options: allowlisted and reviewed findings only when asked, a
commit-date window (start inclusive, end exclusive) and a set of rules. Cells are
masked (the state holds no secret) and neutralised for spreadsheets as ``scan``'s CSV.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import zipfile
from typing import TYPE_CHECKING

from spillguard.audit.state import branch_findings, branch_rows
from spillguard.report.csv_report import COLUMNS, cell

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from spillguard.audit.model import Repository, StoredFinding


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ExportFilter:
    include_allowlisted: bool = False
    include_reviewed: bool = False
    since: str | None = None  # ISO 8601 UTC, as the commit dates are stored
    until: str | None = None
    rules: frozenset[str] | None = None

    def keeps(self, finding: StoredFinding) -> bool:
        return (
            (self.include_allowlisted or not finding.allowlisted)
            and (self.include_reviewed or not finding.reviewed)
            and (self.since is None or finding.date >= self.since)
            and (self.until is None or finding.date < self.until)
            and (self.rules is None or finding.rule in self.rules)
        )


def _rows(
    connection: sqlite3.Connection, repository: Repository, keep: ExportFilter
) -> Iterator[list[str | int]]:
    for branch in sorted(branch_rows(connection, repository.key)):
        for f in branch_findings(connection, repository.key, branch):
            if keep.keeps(f):
                yield [cell(repository.project), cell(repository.name), cell(branch),
                       f.commit or "", cell(f.author), f.date, cell(f.path), f.line,
                       cell(f.rule), str(f.blocking and not f.allowlisted).lower(),
                       cell(f.match_text), cell(f.text)]  # fmt: skip


def _csv(
    connection: sqlite3.Connection, repositories: Sequence[Repository], keep: ExportFilter
) -> str:
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(COLUMNS)
    for repository in repositories:
        out.writerows(_rows(connection, repository, keep))
    return buffer.getvalue()


def _by_project(repositories: Sequence[Repository]) -> dict[str, list[Repository]]:
    projects: dict[str, list[Repository]] = {}
    for repository in sorted(repositories, key=lambda r: (r.project, r.name)):
        projects.setdefault(repository.project, []).append(repository)
    return projects


def export_csv(
    connection: sqlite3.Connection,
    repositories: Sequence[Repository],
    folder: Path,
    keep: ExportFilter,
) -> None:
    """``FOLDER/PROJECT.csv`` and ``FOLDER/PROJECT/NAME.csv``."""
    for project, members in _by_project(repositories).items():
        (folder / project).mkdir(parents=True, exist_ok=True)
        (folder / f"{project}.csv").write_text(_csv(connection, members, keep), encoding="utf-8")
        for repository in members:
            text = _csv(connection, [repository], keep)
            (folder / project / f"{repository.name}.csv").write_text(text, encoding="utf-8")


def export_zip(
    connection: sqlite3.Connection,
    repositories: Sequence[Repository],
    path: Path,
    keep: ExportFilter,
) -> None:
    """Everything in one archive: one CSV per repository, ``PROJECT/NAME.csv``."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for project, members in _by_project(repositories).items():
            for repository in members:
                archive.writestr(
                    f"{project}/{repository.name}.csv", _csv(connection, [repository], keep)
                )
