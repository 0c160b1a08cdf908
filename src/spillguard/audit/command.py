"""``spillguard audit PATH...``: discover, judge what changed, remember, report.

A repository whose refs and configuration are as they were when last judged is not
opened (``audit.plan``); the others are judged by workers, each outcome recorded as
it arrives.

Exit codes: 1 when any audited repository holds a blocking finding; else 3 when a
repository could not be audited (unreadable, corrupt, too large); else 0. 2 for usage.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spillguard.core.errors import ExitCode

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence

    from spillguard.audit.exports import ExportFilter
    from spillguard.audit.model import Outcome, Remembered, Repository, Task


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AuditOptions:
    paths: tuple[str, ...]
    state: str = "spillguard-audit.sqlite"
    clone_dir: str | None = None
    config: str | None = None
    branches: str | None = None
    jobs: int | None = None
    scheduler: str | None = None
    judge: bool = True
    max_commits: int | None = None
    #: Seconds one repository may take (0: no limit).
    repository_budget: float = 3600.0
    format: str = "text"
    output: str | None = None
    color: str = "auto"
    quiet: bool = False
    export_dir: str | None = None
    export_zip: str | None = None
    html: str | None = None
    include_allowlisted: bool = False
    include_reviewed: bool = False
    since: str | None = None
    until: str | None = None
    rules: tuple[str, ...] = ()


def _config_path(options: AuditOptions) -> str | None:
    return None if options.config is None else str(Path(options.config).absolute())


def _tasks(
    memory: dict[str, Remembered], repositories: Sequence[Repository], options: AuditOptions
) -> list[Task]:
    from spillguard.audit.model import Task

    return [
        Task(
            repository=repository,
            config_path=_config_path(options),
            branches=options.branches,
            previous=known.branches if (known := memory.get(repository.identity)) else {},
            judge=options.judge,
            max_commits=options.max_commits,
            budget=options.repository_budget or None,
        )
        for repository in repositories
    ]


def _say_failure(outcome: Outcome) -> None:
    """One line on stderr for a repository that could not be audited. Its name, URL and
    git's message come from the estate: escape sequences are shown, never sent."""
    from spillguard.report.sanitize import clean

    if outcome.error is not None:
        line = f"spillguard: audit: {outcome.repository.key}: {outcome.error}"
        print(clean(line), file=sys.stderr)


def _run(
    connection: sqlite3.Connection,
    tasks: Sequence[Task],
    options: AuditOptions,
    before: dict[str, str | None],
    read: Callable[[str], str | None],
) -> list[Outcome]:
    """Each task's outcome, recorded with the snapshot its repository had before it
    was judged (``before``, by identity) if it still has it."""
    if not tasks:
        return []  # nothing changed: no worker, nothing of the scanner imported
    from spillguard.audit.engine import run_tasks
    from spillguard.audit.state import record
    from spillguard.scanning.parallel import default_jobs
    from spillguard.scanning.progress import progress_for

    progress = progress_for(sys.stderr, quiet=options.quiet)
    progress.start(len(tasks), "repositories")
    outcomes = []
    try:
        jobs = options.jobs or default_jobs()
        for outcome in run_tasks(tasks, jobs=jobs, scheduler=options.scheduler):
            _say_failure(outcome)
            if options.judge:
                repository = outcome.repository
                taken = before[repository.identity]
                kept = taken if taken is not None and read(repository.path) == taken else None
                record(connection, outcome, kept)  # at once: an interrupted audit resumes here
            outcomes.append(outcome)
            progress.update(len(outcomes))
    finally:
        progress.finish()
    return outcomes


def _export_filter(options: AuditOptions) -> ExportFilter:
    from spillguard.audit.exports import ExportFilter
    from spillguard.core.dates import parse_instant

    def iso(text: str | None, flag: str) -> str | None:
        if text is None:
            return None
        import datetime as dt

        instant = dt.datetime.fromtimestamp(parse_instant(text, flag), dt.timezone.utc)
        return instant.strftime("%Y-%m-%dT%H:%M:%SZ")

    names = {name.strip() for given in options.rules for name in given.split(",") if name.strip()}
    return ExportFilter(
        include_allowlisted=options.include_allowlisted,
        include_reviewed=options.include_reviewed,
        since=iso(options.since, "--since"),
        until=iso(options.until, "--until"),
        rules=frozenset(names) or None,
    )


def _write(
    connection: sqlite3.Connection,
    outcomes: Sequence[Outcome],
    options: AuditOptions,
    seconds: float,
) -> dict[str, Any]:
    from spillguard.audit.exports import export_csv, export_zip
    from spillguard.audit.status import status_tree
    from spillguard.core.output import open_output

    tree = status_tree(connection, outcomes, judged=options.judge, seconds=seconds)
    repositories = [outcome.repository for outcome in outcomes]
    keep = _export_filter(options)
    if options.export_dir is not None:
        export_csv(connection, repositories, Path(options.export_dir), keep)
    if options.export_zip is not None:
        export_zip(connection, repositories, Path(options.export_zip), keep)
    if options.html is not None:
        import io

        from spillguard.audit.html import write_html
        from spillguard.core.atomic import write_text_atomic

        page = io.StringIO()
        write_html(tree, page)
        write_text_atomic(Path(options.html), page.getvalue())
    with open_output(options.output) as stream:
        if options.format == "json":
            import json

            # One string, one write: json.dump writes each of a large tree's million
            # pieces on its own.
            stream.write(json.dumps(tree, indent=2) + "\n")
        else:
            from spillguard.audit.table import write_table
            from spillguard.report.color import use_color

            write_table(tree, stream, color=use_color(options.color, stream))
    return tree


def run_audit_command(options: AuditOptions) -> int:
    from spillguard.audit.state import held

    started = time.monotonic()
    with held(options.state):  # before fetching: one audit at a time fetches the mirrors
        tree = _audit(options, started)
    summary = tree["summary"]
    if summary["blocking"]:
        return int(ExitCode.FINDINGS)
    return int(ExitCode.RUNTIME if summary["failed"] else ExitCode.CLEAN)


def _audit(options: AuditOptions, started: float) -> dict[str, Any]:
    import os

    from spillguard.audit.discovery import discover
    from spillguard.audit.plan import sort_out
    from spillguard.audit.snapshot import reader
    from spillguard.audit.state import open_state, record, record_current, remembered

    connection, note = open_state(options.state)
    try:
        if note is not None:
            print(f"spillguard: audit: {note}", file=sys.stderr)
        clone_dir = Path(options.clone_dir or f"{options.state}.clones")
        budget = options.repository_budget or None
        repositories, refused = discover(options.paths, clone_dir, budget)
        for outcome in refused:
            _say_failure(outcome)
            if options.judge:
                record(connection, outcome)
        memory = remembered(connection)
        read = reader(config_path=_config_path(options), branches=options.branches,
                      environ=os.environ)  # fmt: skip
        current, judge = sort_out(repositories, memory, read)
        if options.judge:
            record_current(connection, current)
        tasks = _tasks(memory, [repository for repository, _ in judge], options)
        before = {repository.identity: taken for repository, taken in judge}
        outcomes = [*refused, *current, *_run(connection, tasks, options, before, read)]
        return _write(connection, outcomes, options, time.monotonic() - started)
    finally:
        connection.close()
