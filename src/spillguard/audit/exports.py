"""Findings as CSV: per repository, per project, and all of it as one zip.

The server's export options: allowlisted and reviewed findings only when asked, a
commit-date window (start inclusive, end exclusive) and a set of rules. Cells are
masked (the state holds no secret) and neutralised for spreadsheets as ``scan``'s CSV.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
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
    for branch in sorted(branch_rows(connection, repository.identity)):
        for f in branch_findings(connection, repository.identity, branch):
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


#: What a name may not hold to be one file name: separators, NUL and control characters.
_NOT_IN_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")


def _component(name: str) -> str:
    """A repository's or project's name as one file name in an export: no separator,
    never empty, ``.`` or ``..`` (a name comes from the estate, so it may try). A name
    that had to change gets the digest of what it was, so two never become one."""
    safe = _NOT_IN_NAME.sub("_", name)
    if safe in ("", ".", "..") or safe != name:
        import hashlib

        # Two names made alike here stay two files: the digest of what was there.
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        return f"_{safe}-{digest}"
    return safe


def _inside(folder: Path, *parts: str) -> Path:
    """``folder/PARTS``, refused when a folder on the way is a symbolic link out of
    ``folder`` (a link in the file's own place is replaced, not followed)."""
    from spillguard.audit.locations import inside
    from spillguard.core.errors import UsageError

    path = folder.joinpath(*parts)
    if not inside(path.parent, folder):
        raise UsageError(f"{path}: leads out of {folder} (a symbolic link); not written")
    return path


def export_csv(
    connection: sqlite3.Connection,
    repositories: Sequence[Repository],
    folder: Path,
    keep: ExportFilter,
) -> None:
    """``FOLDER/PROJECT.csv`` and ``FOLDER/PROJECT/NAME.csv``, each written whole."""
    from spillguard.core.atomic import write_text_atomic

    for project, members in _by_project(repositories).items():
        shown = _component(project)
        write_text_atomic(_inside(folder, f"{shown}.csv"), _csv(connection, members, keep))
        for repository in members:
            text = _csv(connection, [repository], keep)
            write_text_atomic(_inside(folder, shown, f"{_component(repository.name)}.csv"), text)


def zip_entry(repository: Repository) -> str:
    """``PROJECT/NAME.csv``: never absolute, never a ``..``."""
    return f"{_component(repository.project)}/{_component(repository.name)}.csv"


def export_zip(
    connection: sqlite3.Connection,
    repositories: Sequence[Repository],
    path: Path,
    keep: ExportFilter,
) -> None:
    """Everything in one archive: one CSV per repository, ``PROJECT/NAME.csv``."""
    from spillguard.core.atomic import replacing

    with replacing(path) as stream, zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
        for members in _by_project(repositories).values():
            for repository in members:
                archive.writestr(zip_entry(repository), _csv(connection, [repository], keep))
