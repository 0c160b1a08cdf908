"""The audit's memory: an SQLite database, per repository and branch.

Each repository's outcome is written in one transaction as soon as it arrives, so an
audit that is interrupted resumes where it stopped: the repositories already done are
current and judged no further. The schema carries its version; a database made by a
newer spillguard is refused rather than misread.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import TYPE_CHECKING

from spillguard.audit.model import Judged, StoredFinding
from spillguard.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from spillguard.audit.model import Outcome

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE repositories (
    key TEXT PRIMARY KEY, project TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL,
    default_branch TEXT, error TEXT, audited_at TEXT NOT NULL);
CREATE TABLE branches (
    repository TEXT NOT NULL, name TEXT NOT NULL, last_commit TEXT NOT NULL,
    fingerprint TEXT NOT NULL, commits INTEGER NOT NULL, scanned_at TEXT NOT NULL,
    PRIMARY KEY (repository, name));
CREATE TABLE findings (
    repository TEXT NOT NULL, branch TEXT NOT NULL, rule TEXT NOT NULL,
    blocking INTEGER NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL, commit_id TEXT,
    author TEXT NOT NULL, date TEXT NOT NULL, text TEXT NOT NULL, match_text TEXT NOT NULL,
    fingerprint TEXT NOT NULL, allowlisted INTEGER NOT NULL, reviewed INTEGER NOT NULL);
CREATE INDEX findings_branch ON findings (repository, branch);
"""


def open_state(path: str) -> sqlite3.Connection:
    """The state at ``path``, created with the current schema when new."""
    try:
        connection = sqlite3.connect(path)
        connection.execute("PRAGMA journal_mode=WAL")
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as error:
        raise UsageError(f"--state {path}: not an audit database ({error})") from None
    if "meta" not in tables:
        with connection:
            connection.executescript(_SCHEMA)
            connection.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        return connection
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = int(row[0]) if row else 0
    if version != SCHEMA_VERSION:
        connection.close()
        raise UsageError(
            f"--state {path}: schema version {version}, this spillguard reads {SCHEMA_VERSION}"
        )
    return connection


def judged_branches(connection: sqlite3.Connection, key: str) -> dict[str, Judged]:
    rows = connection.execute(
        "SELECT name, last_commit, fingerprint FROM branches WHERE repository = ?", (key,)
    )
    return {name: Judged(last_commit=last, fingerprint=digest) for name, last, digest in rows}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def record(connection: sqlite3.Connection, outcome: Outcome) -> None:
    """Remember one repository's outcome, all of it or nothing."""
    repo = outcome.repository
    now = _now()
    with connection:
        connection.execute(
            "INSERT OR REPLACE INTO repositories VALUES (?, ?, ?, ?, ?, ?, ?)",
            (repo.key, repo.project, repo.name, repo.path, outcome.default_branch,
             outcome.error, now),
        )  # fmt: skip
        if outcome.error is not None:
            return  # what was judged before stays: the next audit picks it up again
        kept = [branch.name for branch in outcome.branches]
        marks = ",".join("?" * len(kept))
        for table, column in (("branches", "name"), ("findings", "branch")):
            connection.execute(
                f"DELETE FROM {table} WHERE repository = ? AND {column} NOT IN ({marks})",  # noqa: S608 - fixed names
                (repo.key, *kept),
            )
        for branch in outcome.branches:
            if branch.reason == "current":
                continue
            if branch.reason != "behind":  # judged from the start again
                connection.execute(
                    "DELETE FROM findings WHERE repository = ? AND branch = ?",
                    (repo.key, branch.name),
                )
            _insert_findings(connection, repo.key, branch.name, branch.findings)
            previous = connection.execute(
                "SELECT commits FROM branches WHERE repository = ? AND name = ?",
                (repo.key, branch.name),
            ).fetchone()
            total = branch.commits + (previous[0] if previous and branch.reason == "behind" else 0)
            connection.execute(
                "INSERT OR REPLACE INTO branches VALUES (?, ?, ?, ?, ?, ?)",
                (repo.key, branch.name, branch.tip, branch.fingerprint, total, now),
            )


def _insert_findings(
    connection: sqlite3.Connection, key: str, branch: str, findings: Iterable[StoredFinding]
) -> None:
    connection.executemany(
        "INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (key, branch, f.rule, f.blocking, f.path, f.line, f.commit, f.author, f.date,
             f.text, f.match_text, f.fingerprint, f.allowlisted, f.reviewed)
            for f in findings
        ],
    )  # fmt: skip


def branch_findings(connection: sqlite3.Connection, key: str, branch: str) -> list[StoredFinding]:
    rows = connection.execute(
        "SELECT rule, blocking, path, line, commit_id, author, date, text, match_text, "
        "fingerprint, allowlisted, reviewed FROM findings WHERE repository = ? AND branch = ? "
        "ORDER BY rowid",
        (key, branch),
    )
    return [
        StoredFinding(
            rule=rule, blocking=bool(blocking), path=path, line=line, commit=commit,
            author=author, date=date, text=text, match_text=match_text,
            fingerprint=digest, allowlisted=bool(allowlisted), reviewed=bool(reviewed),
        )
        for (rule, blocking, path, line, commit, author, date, text, match_text, digest,
             allowlisted, reviewed) in rows
    ]  # fmt: skip


def branch_rows(connection: sqlite3.Connection, key: str) -> dict[str, tuple[str, int, str]]:
    """Each judged branch's last commit, commits judged in all and when."""
    rows = connection.execute(
        "SELECT name, last_commit, commits, scanned_at FROM branches WHERE repository = ?",
        (key,),
    )
    return {name: (last, commits, when) for name, last, commits, when in rows}
