"""The values an audit passes between the orchestrator, its workers and the state."""

from __future__ import annotations

import dataclasses
from typing import Literal

#: Why a branch was (or would be) judged in this run.
#: new: never judged; behind: only its new commits; outdated: the rules or configuration
#: changed since, so all of it again; current: nothing to judge.
Reason = Literal["new", "behind", "outdated", "current"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Repository:
    """One repository of the estate, named as the server names it: project/name.

    ``identity`` is its full location (``audit.locations``): the state remembers it by
    that, never by its name, which two repositories may share."""

    project: str
    name: str
    path: str
    identity: str

    @property
    def key(self) -> str:
        """The name it is shown by."""
        return f"{self.project}/{self.name}"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """What the state remembers of a branch: the last commit judged and by what."""

    last_commit: str
    fingerprint: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Remembered:
    """What the state remembers of a repository: the snapshot its last outcome was
    judged at (None: judge it again), its default branch and its judged branches."""

    snapshot: str | None
    default_branch: str | None
    branches: dict[str, Judged]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One repository's work, sent to a worker (a local process or a cluster's)."""

    repository: Repository
    config_path: str | None
    branches: str | None  # an fnmatch pattern; None: the default branch only
    previous: dict[str, Judged]
    judge: bool = True  # False: only say what is outdated (``--no-scan``)
    max_commits: int | None = None
    #: Seconds the repository may take, from when its worker starts it (None: no limit).
    budget: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StoredFinding:
    """A finding as the state keeps it: masked, never the secret itself."""

    rule: str
    blocking: bool
    path: str
    line: int
    commit: str | None
    author: str
    date: str
    text: str
    match_text: str
    fingerprint: str
    allowlisted: bool
    reviewed: bool


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BranchOutcome:
    name: str
    tip: str
    fingerprint: str
    reason: Reason
    commits: int  # judged in this run
    findings: tuple[StoredFinding, ...] = ()
    errors: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """One repository's result; ``error`` says why it could not be audited."""

    repository: Repository
    default_branch: str | None = None
    branches: tuple[BranchOutcome, ...] = ()
    error: str | None = None
    seconds: float = 0.0
