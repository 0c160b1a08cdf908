"""What the pusher reads from a pre-receive hook (git shows it as ``remote:`` lines).

Plain text, no colour: git relays it to terminals that are not ours. Everything the
repository controls (refs, paths, author names, notices) goes through ``clean``, and
matches are always masked, with the fixed mask the local hooks show (no length).
"""

from __future__ import annotations

from spillguard.core.values import Frozen, fill
from spillguard.detection.redact import fixed_mask
from spillguard.report.sanitize import clean, clean_name
from spillguard.report.shown_line import shown_match
from spillguard.report.text_report import summary_lines
from spillguard.sources.rawobjects import PATH_NAME, REF_NAME

#: The pseudo-paths of findings in names, which other lines show in clear.
NAME_PATHS = frozenset({PATH_NAME, REF_NAME})

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence

    from spillguard.core.models import Finding, ScanResult

SHORT_ID = 10
PRAGMA = "pragma: allowlist-secret"


def finding_line(finding: Finding) -> str:
    """``blocking  <commit> <ref>  <path>:<line>  <rule>  <masked match>``."""
    kind = "blocking" if finding.blocking else "warning"
    commit = finding.commit.id[:SHORT_ID] if finding.commit else "-"
    ref = clean_name(finding.ref or "-")
    where = f"{clean_name(finding.path)}:{finding.line}"
    match = clean(shown_match(finding))  # the fixed mask, as the local hooks show it
    return f"  {kind:<8}  {commit}  {ref}  {where}  {finding.rule}  {match}"


class Policy(Frozen):
    """The administrator's settings that change what the pusher is told."""

    __slots__ = ("accepted", "allow_pragma", "contact", "locked", "repository", "why")

    locked: frozenset[str]
    allow_pragma: bool
    #: Who to ask (the administrator's ``contact``); "" names the administrator.
    contact: str
    #: The push went in with its findings (warn mode, or warnings only).
    accepted: bool
    #: Why it went in: "hook.mode = warn", or the rules' ``blocking = false``.
    why: str
    #: The bare repository, for the review command the administrator runs.
    repository: str

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        locked: frozenset[str] = frozenset(),
        allow_pragma: bool = True,
        contact: str = "",
        accepted: bool = False,
        why: str = "",
        repository: str = "BARE.git",
    ) -> None:
        fill(self, locals())

    @property
    def helper(self) -> str:
        return clean(self.contact) if self.contact else "the administrator of this server"


def advice_lines(
    result: ScanResult, *, bypass_tokens: Sequence[str], policy: Policy | None = None
) -> list[str]:
    """How to take a real secret out of history and how to have a false positive
    judged so; how to bypass the scan, when the administrator chose to advertise it."""
    if not result.findings:
        return []
    policy = policy or Policy()
    if policy.accepted:
        return _accepted_advice(result, policy)
    first = result.findings[0].commit
    oldest = first.id[:SHORT_ID] if first else "COMMIT"
    lines = [
        "What to do:",
        "  A real secret: treat it as exposed; revoke and rotate it. Then rewrite every",
        "    commit that adds it (deleting it in a later commit is not enough: each pushed",
        "    commit is judged on its own):",
        "      the last commit:    fix the file, git add it, git commit --amend",
        f"      an older commit:    git rebase -i {oldest}^   (--root for the first commit),",
        "                          mark it 'edit', fix the file, git commit --amend,",
        "                          git rebase --continue",
        "    and push again.",
        *_false_positive_advice(result, policy),
    ]
    if bypass_tokens:
        lines.append(
            f"  To push a commit unchecked, put '{clean(bypass_tokens[0])}' in its message; "
            "the skip is announced."
        )
    return lines


def _false_positive_advice(result: ScanResult, policy: Policy) -> list[str]:
    """A pragma where it would count; a review by the administrator where it would not
    (a locked rule, or pragmas turned off)."""
    blocking = [finding for finding in result.findings if finding.blocking]
    rules = dict.fromkeys(finding.rule for finding in blocking or result.findings)
    locked = [rule for rule in rules if rule in policy.locked]
    lines = []
    if locked:
        them = "this rule" if len(locked) == 1 else "these rules"
        lines += [
            f"  A false positive of {', '.join(locked)}: the administrator locked {them},",
            f"    so a pragma does not hide it. Ask {policy.helper} to review",
            "    the match on the server (the matched text on its standard input):",
            f"      spillguard review add - --repo {clean(policy.repository)} --rule {locked[0]}",
            "    then push again as it is.",
        ]
    if len(locked) == len(rules):
        return lines
    others = "Another false positive" if locked else "A false positive"
    if not policy.allow_pragma:
        return [
            *lines,
            f"  {others}: pragmas are turned off here (allow_pragma = false); ask",
            f"    {policy.helper} to review the match on the server, then push again.",
        ]
    return [
        *lines,
        f"  {others}: put '{PRAGMA}' in a comment on that line (for example",
        f"    '# {PRAGMA}') in the commit that adds it (amend or rebase as above),",
        f"    or ask {policy.helper} to mark the match as reviewed on the server.",
    ]


def _accepted_advice(result: ScanResult, policy: Policy) -> list[str]:
    """The push is in: nothing to push again; a real secret is on the server now."""
    pragma = policy.allow_pragma and not any(f.rule in policy.locked for f in result.findings)
    hide = f"put '{PRAGMA}' in a comment on its line, or ask" if pragma else "ask"
    return [
        "What to do:",
        f"  Nothing, to push: the push was accepted ({policy.why}) and these",
        "    commits are on the server now, findings and all.",
        "  A real secret: it is exposed now: revoke and rotate it, then remove it. To take",
        "    it out of the history too, rewrite the commits that add it (git rebase -i)",
        f"    and force-push, if {policy.helper} allows it.",
        f"  A false positive: {hide} {policy.helper} to review it on the",
        "    server, and it is not shown again.",
    ]


def push_lines(
    result: ScanResult,
    *,
    verdict: str,
    bypass_tokens: Sequence[str],
    policy: Policy | None = None,
) -> list[str]:
    """The whole message: findings, summary and notices, the verdict, then advice."""
    lines = []
    if result.findings:
        lines.append("spillguard found secrets in the pushed commits:")
        lines.extend(finding_line(finding) for finding in result.findings)
    lines.extend(f"spillguard: {line}" for line in summary_lines(result))
    lines.append(f"spillguard: {clean(verdict)}")
    lines.extend(advice_lines(result, bypass_tokens=bypass_tokens, policy=policy))
    named = _named_secrets(result.findings)
    return [_masked(line, named) for line in lines] if named else lines


def _named_secrets(findings: Sequence[Finding]) -> list[str]:
    """The secrets found in names (a path, a ref): every line that shows such a name,
    a finding's ref or path, a skipped file, must show them masked."""
    secrets = []
    for finding in findings:
        if finding.path in NAME_PATHS:
            end = finding.secret_end if finding.secret_end >= 0 else len(finding.match_text)
            secrets.append(clean(finding.match_text[finding.secret_start : end]))
    return [secret for secret in secrets if secret]


def _masked(line: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        line = line.replace(secret, fixed_mask(secret))
    return line
