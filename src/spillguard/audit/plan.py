"""Which repositories an audit judges, and the outcome of those it need not open.

A repository whose snapshot (``audit.snapshot``) is the one its last outcome was
recorded with is current: its outcome is what the state remembers, every branch
``current``, and no worker opens it. Any other (new, changed, failed last time, or
without a snapshot) is judged as a task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.audit.model import BranchOutcome, Outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from spillguard.audit.model import Remembered, Repository


def sort_out(
    repositories: Sequence[Repository],
    memory: dict[str, Remembered],
    read: Callable[[str], str | None],
) -> tuple[list[Outcome], list[tuple[Repository, str | None]]]:
    """The outcomes of the current repositories, and the others with their snapshot
    (taken before they are judged, so that a change meanwhile is judged next time)."""
    current: list[Outcome] = []
    judge: list[tuple[Repository, str | None]] = []
    for repository in repositories:
        taken = read(repository.path)
        known = memory.get(repository.identity)
        if taken is not None and known is not None and known.snapshot == taken:
            current.append(_current(repository, known))
        else:
            judge.append((repository, taken))
    return current, judge


def _current(repository: Repository, known: Remembered) -> Outcome:
    """The outcome the judging would give: each remembered branch, nothing to judge."""
    branches = tuple(
        BranchOutcome(name=name, tip=judged.last_commit, fingerprint=judged.fingerprint,
                      reason="current", commits=0)
        for name, judged in sorted(known.branches.items())
    )  # fmt: skip
    return Outcome(repository=repository, default_branch=known.default_branch, branches=branches)
