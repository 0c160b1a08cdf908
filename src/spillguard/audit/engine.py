"""Where the repositories' audits run: local processes, or an existing Dask cluster.

Dask distributed rather than Ray: it is pure-Python wheels on every platform (Ray ships
a large native runtime), a user's scheduler is named by one address, and its
``LocalCluster`` runs in the test process. spillguard schedules nothing itself: each
repository is one task, and results are taken as they complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.audit.judge import audit_repository
from spillguard.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from spillguard.audit.model import Outcome, Task


def run_tasks(tasks: Sequence[Task], *, jobs: int, scheduler: str | None) -> Iterator[Outcome]:
    """Each task's outcome, in the order they complete."""
    if scheduler is not None:
        yield from _on_cluster(tasks, scheduler)
    elif jobs < 2 or len(tasks) < 2 or not _can_fork():
        yield from map(audit_repository, tasks)
    else:
        yield from _on_processes(tasks, jobs)


def _can_fork() -> bool:
    # As spillguard.scanning.parallel: fork() in a process with other threads can deadlock the
    # child, so such a process audits in itself. Forked workers share the loaded rules.
    import os
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1


def _on_processes(tasks: Sequence[Task], jobs: int) -> Iterator[Outcome]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # The native prefilter is not made here: each worker loads it (or, for a large
    # branch, builds it) where a branch's commits make it pay off (``audit.judge``).
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
        futures = [pool.submit(audit_repository, task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()


def _on_cluster(tasks: Sequence[Task], address: str) -> Iterator[Outcome]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError(
            "--scheduler needs Dask distributed: pip install 'spillguard[cluster]'"
        ) from None
    try:
        client = Client(address, timeout=10)  # type: ignore[no-untyped-call]
    except OSError as error:
        raise UsageError(f"--scheduler {address}: cannot connect ({error})") from None
    with client:
        # pure=False: the same task given twice (a rerun) is judged again, not cached.
        futures = client.map(audit_repository, list(tasks), pure=False)
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            yield future.result()
