"""What the pusher reads from a pre-receive hook (git shows it as ``remote:`` lines).

Plain text, no colour: git relays it to terminals that are not ours. Everything the
repository controls (refs, paths, author names, notices) goes through ``clean``, and
matches are always masked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.detection.redact import mask
from spillguard.report.findings import shown_match
from spillguard.report.sanitize import clean, clean_name
from spillguard.report.text_report import summary_lines
from spillguard.sources.rawobjects import PATH_NAME, REF_NAME

#: The pseudo-paths of findings in names, which other lines show in clear.
NAME_PATHS = frozenset({PATH_NAME, REF_NAME})

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
    match = clean(shown_match(finding, plaintext=False))
    return f"  {kind:<8}  {commit}  {ref}  {where}  {finding.rule}  {match}"


def advice_lines(result: ScanResult, *, bypass_tokens: Sequence[str]) -> list[str]:
    """How to allowlist a false positive and how to take a real secret out of history;
    and how to bypass the scan, when the administrator chose to advertise it."""
    if not result.findings:
        return []
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
        f"  A false positive: put '{PRAGMA}' in a comment on that line (for example",
        f"    '# {PRAGMA}') in the commit that adds it (amend or rebase as above),",
        "    or ask the administrator to mark the match as reviewed (spillguard review add).",
    ]
    if bypass_tokens:
        lines.append(
            f"  To push a commit unchecked, put '{clean(bypass_tokens[0])}' in its message; "
            "the skip is announced."
        )
    return lines


def push_lines(result: ScanResult, *, verdict: str, bypass_tokens: Sequence[str]) -> list[str]:
    """The whole message: findings, summary and notices, the verdict, then advice."""
    lines = []
    if result.findings:
        lines.append("spillguard found secrets in the pushed commits:")
        lines.extend(finding_line(finding) for finding in result.findings)
    lines.extend(f"spillguard: {line}" for line in summary_lines(result))
    lines.append(f"spillguard: {clean(verdict)}")
    lines.extend(advice_lines(result, bypass_tokens=bypass_tokens))
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
        line = line.replace(secret, mask(secret))
    return line
