"""The audit's memory: an SQLite database, per repository and branch.

Each judged repository's outcome is written in one transaction as soon as it arrives,
so an audit that is interrupted resumes where it stopped: the repositories already
done are current and judged no further. What a run compares with is read in one query
a table (``remembered``), and the repositories found current are written in one
transaction. The schema carries its version; a database made by a newer spillguard is
refused rather than misread.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from spillguard.audit.model import Judged, Remembered, StoredFinding
from spillguard.core.errors import SpillguardError, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from spillguard.audit.model import Outcome

#: 2: a repository is remembered by its location (``Repository.identity``), not its name.
#: 3: and by the snapshot of its refs and configuration (``audit.snapshot``).
SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS repositories (
    key TEXT PRIMARY KEY, project TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL,
    default_branch TEXT, error TEXT, audited_at TEXT NOT NULL, snapshot TEXT);
CREATE TABLE IF NOT EXISTS branches (
    repository TEXT NOT NULL, name TEXT NOT NULL, last_commit TEXT NOT NULL,
    fingerprint TEXT NOT NULL, commits INTEGER NOT NULL, scanned_at TEXT NOT NULL,
    PRIMARY KEY (repository, name));
CREATE TABLE IF NOT EXISTS findings (
    repository TEXT NOT NULL, branch TEXT NOT NULL, rule TEXT NOT NULL,
    blocking INTEGER NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL, commit_id TEXT,
    author TEXT NOT NULL, date TEXT NOT NULL, text TEXT NOT NULL, match_text TEXT NOT NULL,
    fingerprint TEXT NOT NULL, allowlisted INTEGER NOT NULL, reviewed INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS findings_branch ON findings (repository, branch);
"""
#: Seconds a write waits for another process's transaction on the state.
_BUSY_SECONDS = 30.0


class StateBusyError(SpillguardError):
    """Another audit is using the state."""


@contextlib.contextmanager
def held(path: str) -> Iterator[None]:
    """The state's lock (``STATE.lock``) for a whole audit: a second audit of the same
    state stops at once, saying so, rather than judge and fetch the same repositories."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: SQLite's own locks only
        yield
        return
    with Path(f"{path}.lock").open("a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StateBusyError(
                f"--state {path}: another audit is using it ({path}.lock is locked); "
                "run this one when it is done"
            ) from None
        yield


def _version(connection: sqlite3.Connection) -> int | None:
    """The schema version, None for a new (empty) database."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    if "meta" not in tables:
        return None
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def _create(connection: sqlite3.Connection) -> int:
    """Create the schema under a write lock, or find it made by someone else meanwhile.

    Idempotent: two audits opening one new state both end with one schema. A state of
    version 1 (repositories remembered by name) is emptied: its memory cannot be told
    apart by location, so every repository is judged anew once. A state of version 2
    gains the snapshot column, empty: each repository is opened once more.
    """
    connection.execute("BEGIN IMMEDIATE")  # the write lock, before looking again
    try:
        version = _version(connection)
        if version in (1, 2):
            if version == 1:
                for table in ("findings", "branches", "repositories"):
                    connection.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
            connection.execute("ALTER TABLE repositories ADD COLUMN snapshot TEXT")
            connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                               (SCHEMA_VERSION,))  # fmt: skip
        elif version is None:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                connection.execute(statement)
            connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                               (SCHEMA_VERSION,))  # fmt: skip
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return version or SCHEMA_VERSION


def open_state(path: str) -> tuple[sqlite3.Connection, str | None]:
    """The state at ``path``, created with the current schema when new, and a note
    when an older state was emptied to be filled anew."""
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_SECONDS, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        # Each outcome is committed without waiting for the disk: a crash of the audit
        # loses nothing, a power cut at most the last outcomes (judged again next time).
        connection.execute("PRAGMA synchronous=NORMAL")
        version = _version(connection)
        if version in (None, 1, 2):
            version = _create(connection)
    except sqlite3.OperationalError as error:
        if "locked" not in str(error):
            raise UsageError(f"--state {path}: not an audit database ({error})") from None
        raise StateBusyError(f"--state {path}: busy: another process holds it") from None
    except sqlite3.DatabaseError as error:
        raise UsageError(f"--state {path}: not an audit database ({error})") from None
    note = (
        f"note: --state {path} remembered repositories by name; it now remembers them by "
        "location, so every repository is judged anew this once"
        if version == 1
        else None
    )
    if version not in (1, 2, SCHEMA_VERSION):
        connection.close()
        raise UsageError(
            f"--state {path}: schema version {version}, this spillguard reads {SCHEMA_VERSION}"
        )
    connection.isolation_level = "DEFERRED"  # back to Python's transactions: `with connection`
    return connection, note


def remembered(connection: sqlite3.Connection) -> dict[str, Remembered]:
    """Every repository the state knows, by identity, with its judged branches."""
    branches: dict[str, dict[str, Judged]] = {}
    rows = connection.execute("SELECT repository, name, last_commit, fingerprint FROM branches")
    for key, name, last, digest in rows:
        branches.setdefault(key, {})[name] = Judged(last_commit=last, fingerprint=digest)
    return {
        key: Remembered(snapshot=snapshot, default_branch=default, branches=branches.get(key, {}))
        for key, snapshot, default in connection.execute(
            "SELECT key, snapshot, default_branch FROM repositories"
        )
    }


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def record_current(connection: sqlite3.Connection, outcomes: Sequence[Outcome]) -> None:
    """Remember that these repositories were audited now, found current (one transaction)."""
    now = _now()
    with connection:
        connection.executemany(
            "UPDATE repositories SET project = ?, name = ?, path = ?, audited_at = ? "
            "WHERE key = ?",
            [(o.repository.project, o.repository.name, o.repository.path, now,
              o.repository.identity) for o in outcomes],
        )  # fmt: skip


def record(connection: sqlite3.Connection, outcome: Outcome, snapshot: str | None = None) -> None:
    """Remember one repository's outcome, all of it or nothing, and the snapshot its
    repository had throughout (None: judge it again next time, however it looks)."""
    repo = outcome.repository
    now = _now()
    with connection:
        connection.execute(
            "INSERT OR REPLACE INTO repositories VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (repo.identity, repo.project, repo.name, repo.path, outcome.default_branch,
             outcome.error, now, None if outcome.error else snapshot),
        )  # fmt: skip
        if outcome.error is not None:
            return  # what was judged before stays: the next audit picks it up again
        kept = [branch.name for branch in outcome.branches]
        marks = ",".join("?" * len(kept))
        for table, column in (("branches", "name"), ("findings", "branch")):
            connection.execute(
                f"DELETE FROM {table} WHERE repository = ? AND {column} NOT IN ({marks})",  # noqa: S608 - fixed names
                (repo.identity, *kept),
            )
        for branch in outcome.branches:
            if branch.reason == "current":
                continue
            if branch.reason != "behind":  # judged from the start again
                connection.execute(
                    "DELETE FROM findings WHERE repository = ? AND branch = ?",
                    (repo.identity, branch.name),
                )
            _insert_findings(connection, repo.identity, branch.name, branch.findings)
            previous = connection.execute(
                "SELECT commits FROM branches WHERE repository = ? AND name = ?",
                (repo.identity, branch.name),
            ).fetchone()
            total = branch.commits + (previous[0] if previous and branch.reason == "behind" else 0)
            connection.execute(
                "INSERT OR REPLACE INTO branches VALUES (?, ?, ?, ?, ?, ?)",
                (repo.identity, branch.name, branch.tip, branch.fingerprint, total, now),
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


def branch_table(connection: sqlite3.Connection) -> dict[tuple[str, str], tuple[str, int, str]]:
    """``branch_rows`` of every repository at once, by (repository, branch)."""
    rows = connection.execute(
        "SELECT repository, name, last_commit, commits, scanned_at FROM branches"
    )
    return {(key, name): (last, commits, when) for key, name, last, commits, when in rows}


def shown_counts(connection: sqlite3.Connection) -> dict[tuple[str, str], dict[str, list[int]]]:
    """(repository, branch) -> rule -> [findings, blocking ones], of the findings a scan
    reports by default (neither allowlisted nor reviewed), for every branch at once."""
    counts: dict[tuple[str, str], dict[str, list[int]]] = {}
    rows = connection.execute(
        "SELECT repository, branch, rule, count(*), sum(blocking) FROM findings "
        "WHERE allowlisted = 0 AND reviewed = 0 GROUP BY repository, branch, rule"
    )
    for key, branch, rule, found, blocking in rows:
        counts.setdefault((key, branch), {})[rule] = [found, blocking]
    return counts
