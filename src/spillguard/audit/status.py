"""The status tree, project → repository → branch, as the server app's status endpoints.

Built from the state after a run, plus what this run found out (why each branch was
judged). A branch's findings count only what a scan reports by default: allowlisted
and reviewed findings are kept for exports, not counted here.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from spillguard.audit.state import branch_table, shown_counts

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

    from spillguard.audit.model import BranchOutcome, Outcome

#: Worst first: a repository or project shows the worst of its branches.
STATES = ("failed", "vulnerable", "outdated", "behind", "not-scanned", "clean", "empty")


def _worst(states: Sequence[str]) -> str:
    return min(states, key=STATES.index) if states else "empty"


@dataclasses.dataclass(frozen=True, slots=True)
class _Stored:
    """What the state holds of every branch, read at once (``state.branch_table``,
    ``state.shown_counts``): two queries, not two a branch."""

    rows: dict[tuple[str, str], tuple[str, int, str]]
    counts: dict[tuple[str, str], dict[str, list[int]]]


def _branch(stored: _Stored, key: str, branch: BranchOutcome, *, judged: bool) -> dict[str, Any]:
    row = stored.rows.get((key, branch.name))
    by_rule = stored.counts.get((key, branch.name), {})
    blocking = sum(counts[1] for counts in by_rule.values())
    if judged or branch.reason == "current":
        state = "vulnerable" if blocking else "clean"
    else:  # --no-scan: what a run would do
        state = {"new": "not-scanned", "outdated": "outdated", "behind": "behind"}[branch.reason]
    return {
        "name": branch.name,
        "state": state,
        "reason": branch.reason,
        "tip": branch.tip,
        "lastCommit": None if row is None else row[0],
        "scannedAt": None if row is None else row[2],
        "commits": 0 if row is None else row[1],
        "commitsJudged": branch.commits,
        "findings": sum(counts[0] for counts in by_rule.values()),
        "blocking": blocking,
        "byRule": {rule: by_rule[rule][0] for rule in sorted(by_rule)},
        "errors": list(branch.errors),
    }


def _repository(stored: _Stored, outcome: Outcome, *, judged: bool) -> dict[str, Any]:
    repo = outcome.repository
    branches = [
        _branch(stored, repo.identity, branch, judged=judged) for branch in outcome.branches
    ]
    return {
        "name": repo.name,
        "path": repo.path,
        "defaultBranch": outcome.default_branch,
        "state": "failed" if outcome.error else _worst([b["state"] for b in branches]),
        "error": outcome.error,
        "findings": sum(b["findings"] for b in branches),
        "blocking": sum(b["blocking"] for b in branches),
        "branches": branches,
    }


def status_tree(
    connection: sqlite3.Connection, outcomes: Sequence[Outcome], *, judged: bool, seconds: float
) -> dict[str, Any]:
    """The JSON document: ``projects`` and a ``summary`` as ``scan`` has."""
    stored = _Stored(branch_table(connection), shown_counts(connection))
    projects: dict[str, list[dict[str, Any]]] = {}
    for outcome in sorted(outcomes, key=lambda o: (o.repository.project, o.repository.name)):
        projects.setdefault(outcome.repository.project, []).append(
            _repository(stored, outcome, judged=judged)
        )
    tree = [
        {
            "name": name,
            "state": _worst([r["state"] for r in repositories]),
            "findings": sum(r["findings"] for r in repositories),
            "blocking": sum(r["blocking"] for r in repositories),
            "repositories": repositories,
        }
        for name, repositories in projects.items()
    ]
    branches = [b for _, r, b in _walk(tree)]
    return {
        "version": 1,
        "projects": tree,
        "summary": {
            "repositories": len(outcomes),
            "failed": sum(1 for outcome in outcomes if outcome.error),
            "branches": len(branches),
            "commits": sum(b["commitsJudged"] for b in branches),
            "findings": sum(b["findings"] for b in branches),
            "blocking": sum(b["blocking"] for b in branches),
            "seconds": round(seconds, 3),
        },
    }


def _walk(
    tree: list[dict[str, Any]],
) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    for project in tree:
        for repository in project["repositories"]:
            for branch in repository["branches"]:
                yield project, repository, branch


def rows(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One flat row per branch, and one per repository that has none (failed, empty)."""
    for project in tree["projects"]:
        for repository in project["repositories"]:
            base = {"project": project["name"], "repository": repository["name"]}
            if not repository["branches"]:
                yield {**base, "branch": "", "state": repository["state"], "findings": 0,
                       "blocking": 0, "lastCommit": "", "scannedAt": "",
                       "note": repository["error"] or ""}  # fmt: skip
            for branch in repository["branches"]:
                rules = ", ".join(f"{rule} {count}" for rule, count in branch["byRule"].items())
                yield {**base, "branch": branch["name"], "state": branch["state"],
                       "findings": branch["findings"], "blocking": branch["blocking"],
                       "lastCommit": (branch["lastCommit"] or "")[:12],
                       "scannedAt": branch["scannedAt"] or "", "note": rules}  # fmt: skip
