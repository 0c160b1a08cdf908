"""Reviewed lines from the app's reviewed-findings export, a CSV file or a zip of them.

Parsed in memory: nothing is extracted, so an entry name such as ``../../x`` is only
ever a string in a message. Columns are found by name (``matchText``, ``ruleName``,
case-insensitive); other columns are tolerated.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from spillguard.core.errors import SyncError
from spillguard.sync.http import encoding_of
from spillguard.sync.limits import MAX_REVIEWED, check_count
from spillguard.sync.messages import scrub_cut

if TYPE_CHECKING:
    import zipfile
    from collections.abc import Mapping

#: Uncompressed bytes read from one export, so a zip bomb is refused, not inflated.
MAX_EXPORT = 64 * 1024 * 1024
CANCELLED = "Export cancelled"
Reviewed = tuple[str, "str | None"]


#: Columns that say where a reviewed line of a wider export (a project's, every
#: repository's) was reviewed, by scope key (the documents do not show the columns).
SCOPE_COLUMNS = {
    "project": ("project", "projectkey"),
    "repo": ("repository", "repo", "reposlug", "repositoryslug"),
    "space": ("space", "spacekey"),
}


class UnplacedExportError(SyncError):
    """A wider export whose rows do not say which project, repository or space they are of."""


def _key(column: str) -> str:
    return column.strip().lower().replace(" ", "").replace("_", "")


def _scope_columns(header: list[str], scope: Mapping[str, str], where: str) -> dict[int, str]:
    """Column index -> the value a row must have there (or none: reviewed everywhere)."""
    found: dict[int, str] = {}
    for key, value in scope.items():
        at = next((header.index(name) for name in SCOPE_COLUMNS[key] if name in header), None)
        if at is None:
            raise UnplacedExportError(
                f"{where}: its rows do not name the {key} they were reviewed in; not applied"
            )
        found[at] = value.lower()
    return found


def _in_scope(row: list[str], columns: Mapping[int, str]) -> bool:
    return all(row[at].strip().lower() in ("", value) for at, value in columns.items())


def parse_reviewed_csv(
    text: str, where: str, scope: Mapping[str, str] | None = None
) -> tuple[list[Reviewed], bool | None]:
    """(matchText, ruleName or None) per row, and whether the export has a ruleName column.

    An empty export (not even a header) cannot tell: None. With ``scope`` (a wider
    export), only the rows reviewed in that scope, or everywhere (an empty scope
    column), are kept; an export without the scope's columns is an UnplacedExportError.
    """
    import csv

    # A line of its own: a last field reading "Export cancelled" is data.
    if text.rstrip().rpartition("\n")[2].strip().strip('"') == CANCELLED:
        raise SyncError(f"{where}: the server cancelled the export ({CANCELLED!r})")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[list[str]] = []
    try:
        for row in filter(None, reader):
            rows.append(row)
            # The header and one row more than taken: refused before the rest is read.
            check_count(len(rows) - 1, MAX_REVIEWED, "reviewed lines", where)
    except csv.Error as error:
        raise SyncError(f"{where}: malformed CSV at line {reader.line_num}: {error}") from None
    if not rows:
        return [], None
    header = [_key(column) for column in rows[0]]
    if "matchtext" not in header:
        shown = scrub_cut(", ".join(rows[0]), 200)
        raise SyncError(f"{where}: no matchText column (columns: {shown})")
    text_at = header.index("matchtext")
    rule_at = header.index("rulename") if "rulename" in header else None
    columns = {} if scope is None else _scope_columns(header, scope, where)
    found: list[Reviewed] = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise SyncError(
                f"{where}: malformed CSV: row {number} has {len(row)} fields, "
                f"the header {len(header)}"
            )
        if row[text_at] and _in_scope(row, columns):
            rule = row[rule_at].strip() if rule_at is not None else ""
            found.append((row[text_at], rule or None))
    return found, rule_at is not None


def _decode(data: bytes, where: str, charset: str | None = None) -> str:
    encoding = encoding_of(data, charset)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        shown = "UTF-8" if encoding == "utf-8-sig" else encoding
        raise SyncError(f"{where}: the export is not {shown} text") from None


def _zip_entries(archive: zipfile.ZipFile, where: str) -> list[tuple[str, bytes]]:
    entries = [info for info in archive.infolist() if not info.is_dir()]
    csvs = [info for info in entries if info.filename.lower().endswith(".csv")]
    budget = MAX_EXPORT
    found: list[tuple[str, bytes]] = []
    for info in csvs or entries:
        name = scrub_cut(info.filename, 120)
        with archive.open(info) as member:
            data = member.read(budget + 1)
        budget -= len(data)
        if budget < 0:
            raise SyncError(f"{where}: the zip holds more than {MAX_EXPORT} bytes")
        found.append((f"{where}, entry {name!r}", data))
    return found


def reviewed_lines(
    body: bytes, where: str, charset: str | None = None, scope: Mapping[str, str] | None = None
) -> tuple[list[Reviewed], bool | None]:
    """All reviewed lines of an export (CSV, or a zip of CSV files) and the ruleName flag.

    ``charset`` is the answer's declared one; it applies to a CSV answer, not to a zip's
    entries (which carry no media type). ``scope``: see ``parse_reviewed_csv``.
    """
    import zipfile

    if not body.startswith(b"PK"):
        return parse_reviewed_csv(_decode(body, where, charset), where, scope)
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            entries = _zip_entries(archive, where)
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError) as error:
        raise SyncError(f"{where}: not a readable zip: {error}") from None
    found: list[Reviewed] = []
    has_rule: bool | None = None
    for name, data in entries:
        lines, with_rule = parse_reviewed_csv(_decode(data, name), name, scope)
        found.extend(lines)
        check_count(len(found), MAX_REVIEWED, "reviewed lines", where)
        has_rule = with_rule if has_rule is None else (has_rule or bool(with_rule))
    return found, has_rule
