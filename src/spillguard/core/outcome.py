"""From a ScanResult to an exit code: the one place that decides."""

from __future__ import annotations

from spillguard.core.errors import ExitCode
from spillguard.core.values import replace

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from spillguard.core.models import Finding, ScanResult, Skipped


def is_blocking(finding: Finding) -> bool:
    return finding.blocking and not finding.allowlisted


def exit_code(result: ScanResult, *, warn_only: bool = False) -> ExitCode:
    """1 for a blocking finding (unless warn-only), else 3 if the scan was incomplete, else 0."""
    if not warn_only and any(is_blocking(finding) for finding in result.findings):
        return ExitCode.FINDINGS
    if result.errors or result.out_of_time or any(skip.failed for skip in result.skipped):
        return ExitCode.RUNTIME
    return ExitCode.CLEAN


#: Paths named in one unscannable notice; the rest are counted.
_NAMED = 5


def unjudged(result: ScanResult) -> list[Skipped]:
    """The content the scan left unread by design (``Skipped.unjudged``)."""
    return [skip for skip in result.skipped if skip.unjudged]


def name_unjudged(unread: list[Skipped]) -> str:
    """``N file(s) not judged: path (reason), ...``, the first few named."""
    named = ", ".join(f"{skip.path} ({skip.reason})" for skip in unread[:_NAMED])
    more = f" and {len(unread) - _NAMED} more" if len(unread) > _NAMED else ""
    return f"{len(unread)} file(s) not judged: {named}{more}"


def local_unscannable(result: ScanResult, policy: str | None) -> ScanResult:
    """A local hook's or scan's result under ``on_unscannable``: content left unread is
    named in a notice, and with "reject" it makes the scan incomplete (exit 3)."""
    unread = unjudged(result)
    if not unread:
        return result
    rejecting = policy == "reject"
    notice = f"{name_unjudged(unread)} (on_unscannable = {policy or 'unset: a notice'})"
    skipped = tuple(
        replace(skip, failed=True) if rejecting and skip.unjudged else skip
        for skip in result.skipped
    )
    return replace(result, skipped=skipped, notices=(*result.notices, notice))
