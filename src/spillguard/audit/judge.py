"""One repository's audit, run by a worker: its configuration, branches and new commits.

It runs wherever the engine puts it (a local process, a cluster's worker), so it takes
and returns plain values and reads the repository itself. Every commit is judged on
its own, as ``spillguard scan`` judges history, with the configuration the server's
pre-receive hook would apply to the repository.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import time
from functools import partial
from typing import TYPE_CHECKING

from spillguard.audit.fingerprint import config_fingerprint
from spillguard.audit.model import BranchOutcome, Outcome, StoredFinding
from spillguard.core.errors import GitError, SpillguardError, missing_object
from spillguard.core.values import replace

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import pygit2

    from spillguard.audit.model import Judged, Reason, Task
    from spillguard.configuration.config import Config
    from spillguard.core.models import Finding, ScanResult
    from spillguard.sources import SourceItem


def audit_repository(task: Task) -> Outcome:
    """The repository's outcome; a repository that cannot be audited says why in ``error``."""
    started = time.monotonic()
    deadline = None if task.budget is None else started + task.budget
    try:
        outcome = _audit(task, deadline)
    except GitError as error:
        outcome = Outcome(repository=task.repository, error=f"unreadable: {error}")
    except SpillguardError as error:  # too large, or a configuration that does not load
        outcome = Outcome(repository=task.repository, error=str(error))
    except Exception as error:  # noqa: BLE001 - one broken repository must not stop the estate
        outcome = Outcome(repository=task.repository, error=_unreadable(error))
    return dataclasses.replace(outcome, seconds=time.monotonic() - started)


def _unreadable(error: Exception) -> str:
    return f"unreadable: {type(error).__name__}: {error}"


def _audit(task: Task, deadline: float | None) -> Outcome:
    from spillguard import git
    from spillguard.configuration.loading import default_branch_file, load_server_config

    repo = git.open_repository(task.repository.path)
    if repo.head_is_unborn:
        return Outcome(repository=task.repository, default_branch=None)
    default = repo.head.shorthand
    config = load_server_config(
        repo_dir=repo.path,
        config_path=task.config_path,
        read_file=partial(default_branch_file, repo),
    )
    # Allowlisted and reviewed findings are kept, flagged, so that exports can include them.
    ruleset = replace(config.ruleset, include_allowlisted=True, include_reviewed=True)
    config = replace(config, ruleset=ruleset)
    fingerprint = config_fingerprint(config)
    names = sorted(repo.branches.local) if task.branches else [default]
    chosen = [
        name for name in names if task.branches is None or fnmatch.fnmatch(name, task.branches)
    ]
    judging = _Judging(task=task, config=config, fingerprint=fingerprint, deadline=deadline)
    branches = tuple(_branch(repo, judging, name, task.previous.get(name)) for name in chosen)
    return Outcome(repository=task.repository, default_branch=default, branches=branches)


def _reason(repo: pygit2.Repository, tip: str, fingerprint: str, judged: Judged | None) -> Reason:
    if judged is None or repo.get(judged.last_commit) is None:
        return "new"
    if judged.fingerprint != fingerprint:
        return "outdated"
    return "current" if judged.last_commit == tip else "behind"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Judging:
    """What judges every branch of one task, and by when."""

    task: Task
    config: Config
    fingerprint: str
    deadline: float | None


def _over_budget(task: Task, name: str, result: ScanResult, commits: int) -> SpillguardError:
    """Said, never a silent "clean": nothing of the repository is recorded, so the next
    audit judges it again."""
    blocking = sum(f.blocking and not (f.allowlisted or f.reviewed) for f in result.findings)
    return SpillguardError(
        f"over its time budget of {task.budget:g} s (--repository-budget): judging stopped on "
        f"{name} after {result.stats.commits} of {commits} commits, {blocking} blocking "
        "finding(s) among them; nothing was recorded"
    )


def _until(
    items: Iterable[SourceItem], deadline: float, stopped: list[bool]
) -> Iterator[SourceItem]:
    """``items`` until the deadline; ``stopped`` says when it ended them (reading git
    takes time too, where no rule runs to see the deadline)."""
    for item in items:
        if time.monotonic() > deadline:
            stopped.append(True)
            return
        yield item


def _branch(
    repo: pygit2.Repository, judging: _Judging, name: str, judged: Judged | None
) -> BranchOutcome:
    task, config, fingerprint = judging.task, judging.config, judging.fingerprint
    tip = str(repo.branches.local[name].target)
    if repo.get(tip) is None:  # a corrupt repository: its branch names a missing commit
        raise GitError(f"branch {name}: {missing_object(tip)}")
    reason = _reason(repo, tip, fingerprint, judged)
    outcome = BranchOutcome(name=name, tip=tip, fingerprint=fingerprint, reason=reason, commits=0)
    if not task.judge or reason == "current":
        return outcome
    from spillguard.core.models import Selection
    from spillguard.scanning.run import native_matcher, run_scan
    from spillguard.sources.gitdiff import iter_commit_chunk
    from spillguard.sources.history import select_commits

    revs = (tip, f"^{judged.last_commit}") if reason == "behind" and judged else (tip,)
    commits = [str(commit.id) for commit in select_commits(repo, Selection(revs=revs))]
    if task.max_commits is not None and len(commits) > task.max_commits:
        raise SpillguardError(
            f"too large: {len(commits)} commits to judge on {name}, over --max-commits "
            f"{task.max_commits}"
        )
    items = iter_commit_chunk(repo.path, commits, max_size=config.max_file_size)
    stopped: list[bool] = []
    if judging.deadline is not None:
        items = _until(items, judging.deadline, stopped)
    native = native_matcher(commits=len(commits))
    result = run_scan(items, config.ruleset, native=native, deadline=judging.deadline)
    if result.out_of_time or stopped:
        raise _over_budget(task, name, result, len(commits))
    errors = tuple(f"{error.rule}: {error.message}" for error in result.errors)
    failed = tuple(f"{skip.path}: {skip.reason}" for skip in result.skipped if skip.failed)
    return dataclasses.replace(
        outcome,
        commits=len(commits),
        findings=tuple(_stored(finding) for finding in result.findings),
        errors=errors + failed,
    )


def _stored(finding: Finding) -> StoredFinding:
    """Masked as every report masks by default: the state never holds a secret."""
    from spillguard.report.findings import shown_match, shown_text

    commit = finding.commit
    return StoredFinding(
        rule=finding.rule,
        blocking=finding.blocking,
        path=finding.path,
        line=finding.line,
        commit=None if commit is None else commit.id,
        author="" if commit is None else commit.author,
        date="" if commit is None else commit.date,
        text=shown_text(finding, plaintext=False),
        match_text=shown_match(finding, plaintext=False),
        fingerprint=finding.fingerprint,
        allowlisted=finding.allowlisted,
        reviewed=finding.reviewed,
    )
