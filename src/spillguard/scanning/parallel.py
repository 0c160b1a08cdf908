"""History and file scans on every core: chunks judged by forked workers, in order.

The parent lists the work (the selected commits, in the walk's order, or the files
under the given paths) and cuts it into chunks. Each worker process turns a chunk
into items (``sources.gitdiff`` opens the repository once per worker;
``sources.files`` reads the files) and judges them with a Scanner of its own. The
parent takes the chunks' results in chunk order, so the report is the same, finding
for finding, as a scan in one process.

A rule that exceeds its time budget is skipped for the rest of a scan. A worker
cannot know that a rule broke in an earlier chunk, so after the first chunk that
reports a rule error the parent judges the remaining chunks itself, in order, with
that rule skipped: the result is still the one a single process gives.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import math
import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from spillguard import git
from spillguard.core.models import CommitWalked, Fragment, Skipped
from spillguard.detection.engine import Scanner
from spillguard.scanning.progress import REDRAW_INTERVAL, NullProgress
from spillguard.scanning.run import Tally, native_matcher
from spillguard.sources.files import read_files
from spillguard.sources.gitdiff import iter_commit_chunk
from spillguard.sources.tree import read_tree_files

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from multiprocessing.sharedctypes import Synchronized

    import pygit2

    from spillguard.core.models import Finding, RuleSet, ScanResult
    from spillguard.detection.native import NativeMatcher
    from spillguard.scanning.progress import Progress
    from spillguard.sources import Source, SourceItem
    from spillguard.sources.files import FileEntry
    from spillguard.sources.tree import TreeFile

#: A unit of work: a commit id, or a listed file.
_Unit = TypeVar("_Unit")

#: Commits (or files) per chunk. Each chunk of commits costs a git process (~10 ms of
#: CPU), so chunks are as large as load balance allows: each is the workers' share of
#: what is left (guided scheduling), so the first are large and the last few small,
#: and no worker waits long for another at the end. Bounded both ways: one git
#: process per few commits costs more than it balances (this repository's 197
#: commits: 0.39 s in two processes, 0.51 s in one), and a chunk's results are held
#: until the chunks before it are done.
MIN_CHUNK = 64
MAX_CHUNK = 4000
#: The smallest chunk of a large scan, as a share of its commits, at most LAST_CHUNK.
LAST_SHARE = 32
LAST_CHUNK = 512
#: Workers per CPU at most, whatever ``--jobs`` asks: more only wait for a core, and
#: each one is a forked process.
MAX_JOBS_PER_CPU = 4


@dataclasses.dataclass(frozen=True, slots=True)
class _Job:
    ruleset: RuleSet
    #: A chunk of the work (commit ids, listed files) to the items to judge.
    items: Callable[[Sequence[Any]], Source]
    #: The items that each stand for one unit of the work done (a commit, a file).
    done_items: tuple[type, ...] = (CommitWalked,)
    #: The native prefilter, made before the workers fork (they inherit it).
    native: NativeMatcher | None = None
    #: Whether the work is commits, which the parent counts itself: a worker's results
    #: then leave out the ids of those judged (git/git's 85,361, each held again in
    #: the parent once shipped back).
    counts_commits: bool = False


#: The job of this scan, set in the parent before forking, so workers inherit it
#: (compiled rules included) instead of receiving it pickled.
_job: _Job | None = None


def default_jobs() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1  # pragma: no cover - platforms without affinity


def worker_count(requested: int, parts: int) -> int:
    """The worker processes a scan starts: ``requested``, but never more than the
    chunks to judge nor ``MAX_JOBS_PER_CPU`` per CPU."""
    return max(1, min(requested, parts, MAX_JOBS_PER_CPU * default_jobs()))


def chunks(work: Sequence[_Unit], jobs: int) -> list[Sequence[_Unit]]:
    """The work (commits, files), in order, cut in chunks of the workers' share of
    what is left."""
    smallest = max(MIN_CHUNK, min(LAST_CHUNK, math.ceil(len(work) / LAST_SHARE)))
    parts = []
    start = 0
    while start < len(work):
        size = min(MAX_CHUNK, max(smallest, math.ceil((len(work) - start) / jobs)))
        parts.append(work[start : start + size])
        start += size
    return parts


@functools.cache
def _repository(path: str) -> pygit2.Repository:
    """One repository object per process: opening one per chunk left each chunk's
    caches to the garbage collector, and memory grew with the history."""
    return git.open_repository(path)


def _commit_items(
    repo_path: str, max_size: int, merge_diffs: bool, commits: Sequence[str]
) -> Source:
    return iter_commit_chunk(
        repo_path, commits, max_size=max_size, opened=_repository, merge_diffs=merge_diffs
    )


def _judge_chunk(job: _Job, part: Sequence[Any], scanner: Scanner) -> Tally:
    tally = Tally()
    items = job.items(part)
    tally.judge(items if _done is None else _counted(items, job.done_items, _done), scanner)
    return tally


#: Units of work done, shared with the forked workers, while a progress bar shows it.
_done: Synchronized[int] | None = None
#: Units counted before the shared count is updated: one lock per few commits.
_COUNT_BATCH = 16


def _counted(items: Source, done_items: tuple[type, ...], done: Synchronized[int]) -> Source:
    """``items``, adding each finished unit of work to the shared count as it passes."""
    pending = 0
    for item in items:
        if isinstance(item, done_items):
            pending += 1
            if pending == _COUNT_BATCH:
                with done.get_lock():
                    done.value += pending
                pending = 0
        yield item
    with done.get_lock():
        done.value += pending


@contextmanager
def _shown(progress: Progress, total: int, noun: str) -> Iterator[Callable[[], None]]:
    """Show the progress of the work, counted in ``_done`` by whoever judges it; yields
    what starts the thread that reads the count (started once the workers are forked:
    a fork beside a thread can deadlock)."""
    global _done  # noqa: PLW0603 - shared with the forked workers, see _done
    if isinstance(progress, NullProgress):
        yield lambda: None
        return
    import multiprocessing

    _done = multiprocessing.get_context("fork").Value("q", 0)
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(REDRAW_INTERVAL):
            progress.update(_done.value if _done is not None else 0)

    reader = threading.Thread(target=poll, daemon=True)

    def start() -> None:
        progress.start(total, noun)
        reader.start()

    try:
        yield start
    finally:
        stop.set()
        if reader.is_alive():
            reader.join()
            progress.finish()
        _done = None


def _worker(part: Sequence[Any]) -> Tally:
    """In a worker: one chunk, with the rule errors met in it."""
    if _job is None:  # pragma: no cover - only forked workers call this
        raise RuntimeError("worker started without a job")
    scanner = _worker_scanner(_job)
    known = len(scanner.errors)
    tally = _judge_chunk(_job, part, scanner)
    tally.errors = scanner.errors[known:]
    if _job.counts_commits:
        tally.commits = set()
    return tally


@functools.cache
def _worker_scanner(job: _Job) -> Scanner:
    """One Scanner per worker, so the lines it has judged clean serve its later chunks.

    A rule that broke stays skipped in the worker's later chunks, as in one process;
    those chunks come after the one that broke it, which the parent judges itself.
    """
    return Scanner(job.ruleset, native=job.native)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group; the parent alone reports it. SIGTERM
    # (the pool's own way to stop a worker) kills at once, whatever the parent set.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def _pool(job: _Job, parts: Sequence[Sequence[Any]], jobs: int) -> Iterator[Iterator[Tally]]:
    """The chunks' results, in chunk order, from ``jobs`` forked workers."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _job  # noqa: PLW0603 - handed to the forked workers, see _job
    _job = job
    # Out of the collector's sight, the parent's objects are not written to by a
    # worker's collections, so their pages stay shared instead of being copied.
    gc.freeze()
    executor = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_ignore_interrupts,
    )
    try:
        yield executor.map(_worker, parts)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
        _job = None


def _can_fork(jobs: int, parts: int) -> bool:
    # fork() in a process with other threads can deadlock the child: stay in one process.
    return jobs > 1 and parts > 1 and hasattr(os, "fork") and threading.active_count() == 1


def scan_commits(  # noqa: PLR0913 - keyword-only knobs of one scan
    repo_path: str,
    commits: Sequence[str],
    ruleset: RuleSet,
    *,
    max_size: int,
    jobs: int,
    on_finding: Callable[[Finding], None] | None = None,
    notices: Iterable[str] = (),
    progress: Progress | None = None,
    extra: Iterable[SourceItem] = (),
    merge_diffs: bool = True,
) -> ScanResult:
    """Judge the lines each commit adds, on ``jobs`` processes; same result as one.
    ``extra`` (tag messages) is judged after the commits, in this process; without
    ``merge_diffs``, merges' own lines are not (their messages are)."""
    started = time.monotonic()
    items = functools.partial(_commit_items, repo_path, max_size, merge_diffs)
    native = native_matcher(commits=len(commits), workers=_plan(commits, jobs)[1])
    job = _Job(ruleset=ruleset, items=items, native=native, counts_commits=True)
    shown = progress or NullProgress()
    total = _judge_parts(job, commits, jobs, on_finding=on_finding, shown=shown, noun="commits")
    total.commits.update(commits)  # every commit walked, whoever judged it
    scanner = Scanner(ruleset, native=job.native)
    scanner.note_errors(total.errors)
    last = Tally()
    last.judge(extra, scanner)
    total.add(last, on_finding)
    total.errors = scanner.errors
    return total.result(started=started, notices=notices)


def scan_listed(  # noqa: PLR0913 - keyword-only knobs of one scan
    work: Sequence[_Unit],
    items: Callable[[Sequence[_Unit]], Source],
    ruleset: RuleSet,
    *,
    jobs: int,
    on_finding: Callable[[Finding], None] | None = None,
    notices: Iterable[str] = (),
    progress: Progress | None = None,
) -> ScanResult:
    """Judge listed files (``file_items`` or ``tree_items`` reads a chunk of them) on
    ``jobs`` processes; same result as one."""
    started = time.monotonic()
    native = native_matcher(files=len(work), workers=_plan(work, jobs)[1])
    job = _Job(ruleset=ruleset, items=items, done_items=(Fragment, Skipped), native=native)
    shown = progress or NullProgress()
    total = _judge_parts(job, work, jobs, on_finding=on_finding, shown=shown, noun="files")
    return total.result(started=started, notices=notices, scope="files")


def file_items(max_size: int) -> Callable[[Sequence[FileEntry]], Source]:
    """How a worker reads its chunk of ``sources.files.list_files``."""
    return functools.partial(read_files, max_size=max_size)


def tree_items(git_dir: str, max_size: int) -> Callable[[Sequence[TreeFile]], Source]:
    """How a worker reads its chunk of ``sources.tree.list_tree``, by its own git."""
    return functools.partial(read_tree_files, git_dir, max_size=max_size)


def _plan(work: Sequence[_Unit], jobs: int) -> tuple[list[Sequence[_Unit]], int]:
    """The work's chunks, and how many workers judge them."""
    parts = chunks(work, worker_count(jobs, len(work)))
    return parts, worker_count(jobs, len(parts))


def _judge_parts(  # noqa: PLR0913 - the parts of one scan, each from its own place
    job: _Job,
    work: Sequence[_Unit],
    jobs: int,
    *,
    on_finding: Callable[[Finding], None] | None,
    shown: Progress,
    noun: str,
) -> Tally:
    """The work's Tally, chunk by chunk in order, each judged by a worker while no
    rule has broken (and by this process after one has)."""
    parts, jobs = _plan(work, jobs)
    scanner = Scanner(job.ruleset, native=job.native)
    total = Tally()
    with _shown(shown, len(work), noun) as start_reading, _results(job, parts, jobs) as results:
        start_reading()
        for part_work in parts:
            part = None if scanner.errors else next(results, None)
            if part is None:  # one process, or a rule broke in an earlier chunk
                part = _judge_chunk(job, part_work, scanner)
            else:
                scanner.note_errors(part.errors)
                part.errors = []
            total.add(part, on_finding)
    total.errors = scanner.errors
    return total


@contextmanager
def _results(job: _Job, parts: Sequence[Sequence[Any]], jobs: int) -> Iterator[Iterator[Tally]]:
    if not _can_fork(jobs, len(parts)):
        yield iter(())
        return
    with _pool(job, parts, jobs) as results:
        yield results
