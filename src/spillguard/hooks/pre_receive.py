"""Server side: judge every commit a push brings, before any ref moves.

git runs the bare repository's ``hooks/pre-receive`` with one ``<old> <new> <ref>``
line per updated ref on stdin and the pushed objects still in quarantine. Every
new commit is judged on its own (a secret removed by a later commit of the same
push is still a finding), within the administrator's time budget and commit cap.
"""

from __future__ import annotations

import os
import re
import time

from spillguard.core.errors import ExitCode, SpillguardError, UsageError
from spillguard.core.models import RefUpdate, ScanResult, is_zero_id
from spillguard.core.outcome import is_blocking, name_unjudged, unjudged
from spillguard.core.values import Frozen, Record, fill, replace
from spillguard.hooks.bypass import bypass_token_in, not_scanned

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from spillguard.configuration.config import Config
    from spillguard.core.models import Finding
    from spillguard.sources import SourceItem

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SHORT_ID = 10


def parse_push_options(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The ``git push -o`` options git hands the hook (``GIT_PUSH_OPTION_<n>``)."""
    try:
        count = int(environ.get("GIT_PUSH_OPTION_COUNT", "0"))
    except ValueError:
        return ()
    return tuple(
        environ[f"GIT_PUSH_OPTION_{index}"]
        for index in range(count)
        if f"GIT_PUSH_OPTION_{index}" in environ
    )


def parse_ref_updates(text: str) -> tuple[RefUpdate, ...]:
    """git's pre-receive input: one ``<old> <new> <ref>`` line per ref (SHA-1 or SHA-256)."""
    updates = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3 or not all(_OBJECT_ID.fullmatch(field) for field in fields[:2]):
            raise UsageError(f"pre-receive input line {number}: expected '<old-id> <new-id> <ref>'")
        updates.append(RefUpdate(*fields))
    return tuple(updates)


class PushScan(Frozen):
    """What was judged, and why part of the push was not (None when all of it was)."""

    __slots__ = ("commits", "incomplete", "refs", "result", "unreached")

    result: ScanResult
    #: Updated refs (deletions excluded) and the new commits they bring.
    refs: int
    commits: int
    incomplete: str | None
    #: Objects the push carries that no pushed ref reaches (``sources.carried``).
    unreached: int

    def __init__(
        self,
        *,
        result: ScanResult,
        refs: int,
        commits: int = 0,
        incomplete: str | None = None,
        unreached: int = 0,
    ) -> None:
        fill(self, locals())


class _Progress(Record):
    """Findings as they stream, so a budget or a failure never loses them."""

    __slots__ = ("bypassed", "clock", "deadline", "findings", "notices", "out_of_time")

    deadline: float
    clock: Callable[[], float]
    findings: list[Finding]
    notices: list[str]
    #: Commits not scanned because their message holds a bypass token.
    bypassed: list[str]
    out_of_time: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        deadline: float,
        clock: Callable[[], float],
        findings: list[Finding] | None = None,
        notices: list[str] | None = None,
        bypassed: list[str] | None = None,
        out_of_time: bool = False,
    ) -> None:
        if findings is None:
            findings = []
        if notices is None:
            notices = []
        if bypassed is None:
            bypassed = []
        self.deadline = deadline
        self.clock = clock
        self.findings = findings
        self.notices = notices
        self.bypassed = bypassed
        self.out_of_time = out_of_time

    def expired(self) -> bool:
        self.out_of_time = self.out_of_time or self.clock() > self.deadline
        return self.out_of_time


def _updated_refs(updates: tuple[RefUpdate, ...]) -> int:
    return sum(1 for update in updates if not is_zero_id(update.new))


def _bypassed(
    commit: str, message: str, ref: str | None, *, config: Config, progress: _Progress
) -> bool:
    """True, with a notice, when the commit's message holds a bypass token."""
    token = bypass_token_in(message, config.bypass_tokens)
    if token is None:
        return False
    progress.bypassed.append(commit)
    progress.notices.append(
        f"commit {commit[:SHORT_ID]} ({ref}) not scanned: "
        f"its message contains the bypass token {token!r}"
    )
    return True


def scan_push_cli(  # noqa: PLR0913 - the push, its judge, and where git keeps it
    git_dir: str,
    updates: tuple[RefUpdate, ...],
    config: Config,
    *,
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    environ: Mapping[str, str] = os.environ,
) -> PushScan:
    """Judge everything the push brings (``sources.pushed``), oldest commit first, until
    the budget runs out: git alone reads it (SHA-1 and SHA-256), as it stores it, from
    the quarantine git keeps it in (``environ``'s ``GIT_QUARANTINE_PATH``)."""
    from spillguard.scanning.run import run_scan
    from spillguard.sources.carried import Carried
    from spillguard.sources.pushed import PushPlan, push_items
    from spillguard.sources.received_cli import received_commits

    progress = _Progress(deadline=deadline, clock=clock)
    refs = _updated_refs(updates)
    try:
        received = received_commits(git_dir, updates)
        tips = [update.new for update in updates if not is_zero_id(update.new)]
        carried = Carried(git_dir, tips, environ)
        over_cap = max(0, len(received) - config.max_commits)
        kept = [
            each
            for each in received[: config.max_commits]
            if not _bypassed(
                each.info.id, each.info.message, each.ref, config=config, progress=progress
            )
        ]
        judge = config.on_unreachable == "judge"
        plan = PushPlan(
            git_dir=git_dir,
            updates=updates,
            commits=kept,
            listed=[each.info.id for each in received],
            carried=carried,
            max_size=config.max_file_size,
            unreached=judge,
        )
        result = run_scan(
            _until_deadline(push_items(plan), progress),
            config.ruleset,
            on_finding=progress.findings.append,
            deadline=deadline,
        )
        unreached = len(carried.unreached)  # judged by now, where they are to be
    except Exception as error:  # noqa: BLE001 - the administrator's on_error policy decides
        return _failed(error, progress, refs, config)
    if unreached and judge:
        progress.notices.append(f"{_carries(unreached)}: judged whole (on_unreachable = judge)")
    return PushScan(
        result=_with_notices(result, progress, config),
        refs=refs,
        commits=len(received),
        incomplete=_incomplete(over_cap, config, progress, result),
        unreached=unreached,
    )


def _carries(count: int) -> str:
    objects = "object" if count == 1 else "objects"
    return f"the push carries {count} {objects} that no pushed ref reaches"


def _until_deadline(items: Iterable[SourceItem], progress: _Progress) -> Iterator[SourceItem]:
    for item in items:
        if progress.expired():
            return
        yield item


def _failed(error: Exception, progress: _Progress, refs: int, config: Config) -> PushScan:
    """What was found before spillguard failed; the on_error policy decides the rest.
    Past the deadline the failure is the budget's: a git it stopped (``gitcommand``)."""
    result = ScanResult(findings=tuple(progress.findings))
    why = _out_of_time(config) if progress.expired() else f"spillguard failed: {_describe(error)}"
    return PushScan(result=_with_notices(result, progress, config), refs=refs, incomplete=why)


def _out_of_time(config: Config) -> str:
    return f"the time budget of {config.time_budget:g} s ran out before the whole push was judged"


def _describe(error: Exception) -> str:
    if isinstance(error, SpillguardError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def _incomplete(
    over_cap: int, config: Config, progress: _Progress, result: ScanResult
) -> str | None:
    if over_cap:
        return (
            f"the push brings more than {config.max_commits} new commits (the cap); "
            f"{over_cap} were not scanned"
        )
    # Checked once more at the end: a git stopped at the deadline ends its output early.
    if progress.out_of_time or result.out_of_time or progress.expired():
        return _out_of_time(config)
    if result.errors or any(skip.failed for skip in result.skipped):
        return "part of the push could not be judged"
    return None


def _with_notices(result: ScanResult, progress: _Progress | None, config: Config) -> ScanResult:
    """The result with the configuration's and the walk's notices, and the commits the
    bypass token kept from being scanned."""
    notices = progress.notices if progress is not None else []
    return replace(
        result,
        notices=(*config.notices, *notices, *result.notices),
        bypassed=tuple(progress.bypassed) if progress is not None else (),
    )


class Verdict(Frozen):
    __slots__ = ("code", "message")

    code: ExitCode
    #: One sentence for the pusher: accepted or rejected, and why.
    message: str

    def __init__(self, *, code: ExitCode, message: str) -> None:
        fill(self, locals())


def verdict(scan: PushScan, config: Config) -> Verdict:
    """Blocking findings reject in block mode; objects no pushed ref reaches follow
    ``on_unreachable``, content left unread ``on_unscannable`` (unset: reject), an
    incomplete scan ``on_error``.

    An accepted push never says "no secrets found" of commits it did not scan: the
    ones the bypass token skipped are named in the verdict.
    """
    findings = scan.result.findings
    unreached = _carries(scan.unreached) if scan.unreached else None
    if config.on_unreachable != "reject":
        unreached = None  # judged whole: their findings speak for them
    if config.hook_mode == "block" and any(is_blocking(finding) for finding in findings):
        reasons = [why for why in (unreached, scan.incomplete) if why is not None]
        also = f" (and {'; '.join(reasons)})" if reasons else ""
        return Verdict(code=ExitCode.FINDINGS, message=f"push rejected: it adds secrets{also}")
    if unreached is not None:
        return _by_policy("on_unreachable", "reject", unreached, "")
    bypassed = len(scan.result.bypassed)
    skipped = f"; {not_scanned(bypassed)}" if bypassed else ""
    unread = unjudged(scan.result)
    accept_unread = config.on_unscannable == "accept"
    if unread and (not accept_unread or scan.incomplete is None):
        choice = "accept" if accept_unread else "reject"
        return _by_policy("on_unscannable", choice, name_unjudged(unread), skipped)
    if scan.incomplete is not None:
        return _by_policy("on_error", config.on_error, scan.incomplete, skipped)
    return _accepted(scan, config, bypassed, skipped)


def _accepted(scan: PushScan, config: Config, bypassed: int, skipped: str) -> Verdict:
    """The verdict of a push judged whole without a blocking finding."""
    if scan.result.findings:
        why = "warn-only mode" if config.hook_mode == "warn" else "warnings only"
        return Verdict(code=ExitCode.CLEAN, message=f"push accepted ({why}){skipped}")
    if not bypassed:
        return Verdict(code=ExitCode.CLEAN, message="push accepted: no secrets found")
    others = scan.commits - bypassed
    rest = f"; no secrets found in the other {others}" if others > 0 else ""
    return Verdict(code=ExitCode.CLEAN, message=f"push accepted: {not_scanned(bypassed)}{rest}")


def _by_policy(setting: str, choice: str, why: str, skipped: str) -> Verdict:
    """The verdict an administrator's setting decides, saying which way it went (and,
    when it accepts, which commits the bypass token skipped)."""
    if choice == "accept":
        # on_error accepts what was never looked at; on_unscannable, what was named.
        unchecked = "UNCHECKED " if setting == "on_error" else ""
        return Verdict(
            code=ExitCode.CLEAN,
            message=f"push accepted {unchecked}by policy ({setting} = accept): {why}{skipped}",
        )
    return Verdict(
        code=ExitCode.RUNTIME, message=f"push rejected by policy ({setting} = reject): {why}"
    )
