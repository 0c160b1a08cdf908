"""``--format text``: findings grouped by commit and file, then a summary.

The layout is built once as lines of (text, style) segments. Without colour they
are joined as plain fixed-width text and a caret line marks each match; with
colour rich renders them, imported only then. Every piece of repository-controlled
text (path, line, author, message, ref) is cleaned of escape sequences and handed
to rich as plain ``Text``, never as markup, so a file name cannot restyle or
rewrite the reader's terminal.
"""

from __future__ import annotations

from collections import Counter
from unicodedata import east_asian_width

from spillguard.configuration.reviewed import REVIEWED_FILE
from spillguard.core.outcome import is_blocking
from spillguard.report.findings import shown_text, summary_dict
from spillguard.report.sanitize import clean, clean_name
from spillguard.report.shown_line import shown_line, windowed

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.core.models import CommitInfo, Finding, ScanResult
    from spillguard.report import ReportOptions

SHORT_ID = 10
#: Skipped files named in the summary for each reason; the rest are counted.
SKIPPED_NAMES = 5
SUBJECT_WIDTH = 72
TAB = "    "

Segment = tuple[str, str]  # (text, style name; "" for none)
Line = list[Segment]

#: Style names to rich styles; the plain renderer ignores them.
STYLES = {
    "commit": "yellow",
    "dim": "dim",
    "path": "bold",
    "location": "cyan",
    "rule": "magenta",
    "blocking": "bold red",
    "warn": "yellow",
    "allowlisted": "dim",
    "reviewed": "dim",
    "match": "bold red reverse",
    "bad": "bold red",
    "good": "green",
}


def _shown(text: str) -> str:
    """Repository text as it may appear on a terminal: no controls, tabs as spaces."""
    return clean(text).replace("\t", TAB)


def _width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two, so the caret stays under the match."""
    return sum(2 if east_asian_width(char) in "WF" else 1 for char in text)


def _group(findings: tuple[Finding, ...]) -> dict[str, list[Finding]]:
    """Findings by commit id ("" for none), each commit's by path, in the order first seen."""
    groups: dict[str, dict[str, list[Finding]]] = {}
    for finding in findings:
        commit_id = finding.commit.id if finding.commit else ""
        groups.setdefault(commit_id, {}).setdefault(finding.path, []).append(finding)
    return {
        commit_id: [finding for by_path in paths.values() for finding in by_path]
        for commit_id, paths in groups.items()
    }


def finding_lines(result: ScanResult, options: ReportOptions) -> list[Line]:
    """Each finding once, under its commit's header in history scans."""
    lines: list[Line] = []
    descriptions = {rule.name: rule.description for rule in options.rules}
    staged = result.stats.scope == "staged"
    for findings in _group(result.findings).values():
        first = findings[0]
        indent = ""
        if first.commit is not None:
            if lines:
                lines.append([])
            lines.extend(_commit_header(first.commit, first.ref, options))
            indent = "  "
        for finding in findings:
            shown = _finding(finding, indent, options, descriptions.get(finding.rule, ""))
            lines.extend(shown)
            if is_blocking(finding):
                hint = review_command(finding, staged=staged, command=options.command)
                lines.append([(indent + TAB, ""), (hint, "dim")])
    return lines


def review_command(finding: Finding, *, staged: bool, command: str = "spillguard") -> str:
    """The command that reviews this finding as a false positive, without its secret:
    by location when the path can be typed as shown, else by fingerprint. The commit
    hook reads the staged reviewed file, so from a hook it stages it too. ``command``
    runs spillguard where the reader is (the pre-commit framework's own interpreter)."""
    import shlex

    location = f"{finding.path}:{finding.line}"
    if finding.commit is not None:
        location = f"{finding.commit.id[:SHORT_ID]}:{location}"
    plain = clean_name(finding.path) == finding.path and finding.path.isprintable()
    target = f"--at {shlex.quote(location)}" if plain else f"--fingerprint {finding.fingerprint}"
    hint = f"not a secret? {command} review add {target}"
    return hint + f" && git add :/{REVIEWED_FILE}" if staged else hint


def _commit_header(commit: CommitInfo, ref: str | None, options: ReportOptions) -> list[Line]:
    header: Line = [
        (f"commit {commit.id[:SHORT_ID]}", "commit"),
        (f"  {_shown(commit.author)} <{_shown(commit.email)}>  {_shown(commit.date)}", ""),
    ]
    if ref:
        header.append((f"  {clean_name(ref)}", "dim"))
    subject = commit.message.strip().partition("\n")[0]
    subject = _shown(_masked(subject, options))[:SUBJECT_WIDTH]
    return [header, [(TAB + subject, "dim")]] if subject else [header]


def _masked(subject: str, options: ReportOptions) -> str:
    """The subject with any secret in it masked: messages are not scanned, but shown."""
    if options.plaintext or not options.rules:
        return subject
    from spillguard.core.models import MAX_LINE_LENGTH, Fragment, RuleSet
    from spillguard.detection.engine import Scanner

    line = subject[:MAX_LINE_LENGTH]  # a longer subject would be shown as its match only
    found = Scanner(RuleSet(rules=options.rules)).scan(Fragment(path="", text=line))
    return shown_text(found[0], plaintext=False) if found else line


def _finding(finding: Finding, indent: str, options: ReportOptions, description: str) -> list[Line]:
    kind = "blocking" if is_blocking(finding) else "warn"
    if finding.allowlisted:
        kind = "allowlisted"
    elif finding.reviewed:
        kind = "reviewed"
    shown = shown_line(finding, plaintext=options.plaintext)
    secret = _shown(shown.secret)
    before, after = windowed(_shown(shown.before).lstrip(), secret, _shown(shown.after).rstrip())
    where = f"{clean_name(finding.path)}:{finding.line}"
    if shown.column is not None:
        where += f":{shown.column}"
    # One greppable line per finding (editors and CI logs read path:line:column).
    head: Line = [
        (indent, ""),
        (where, "location"),
        ("  ", ""),
        (clean(finding.rule), "rule"),
        ("  ", ""),
        (kind, kind),
    ]
    if description:
        head.append((f"  {clean(description)}", ""))
    if finding.truncated:
        head.append(("  (line over 1,000 characters: the match only)", "dim"))
    text_indent = indent + TAB
    lines = [head, [(text_indent + before, ""), (secret, "match"), (after, "")]]
    if not options.color:
        caret = " " * _width(before) + "^" * max(_width(secret), 1)
        lines.append([(text_indent + caret, "")])
    return lines


#: How the summary names what hid findings that a scan does not report.
_SILENCED = {
    "pragma": "by a pragma",
    "allowlist_paths": "by allowlist_paths",
    "reviewed": "reviewed",
}


def summary_lines(result: ScanResult) -> list[str]:
    summary = summary_dict(result)
    scope = {
        "commits": f"{summary['commits']} commit(s), ",
        "staged": "the staged changes, ",
        "files": "",
    }[result.stats.scope]
    lines = [
        (
            f"{summary['findings']} finding(s), {summary['blocking']} blocking; "
            f"scanned {scope}{summary['files']} file(s), "
            f"{summary['bytes']} bytes in {summary['seconds']:.2f} s"
        )
    ]
    by_rule = Counter(finding.rule for finding in result.findings)
    if by_rule:
        lines.append(
            "by rule: " + ", ".join(f"{clean(rule)} {n}" for rule, n in sorted(by_rule.items()))
        )
    counts = summary["silenced"]
    silenced = [f"{counts[key]} {how}" for key, how in _SILENCED.items() if counts[key]]
    if silenced:
        lines.append("silenced: " + ", ".join(silenced))
    lines.extend(skipped_lines(result))
    lines.extend(error_lines(result))
    lines.extend(clean(notice) for notice in result.notices)
    return lines


def skipped_lines(result: ScanResult) -> list[str]:
    """How many files were skipped and why, then the names, up to ``SKIPPED_NAMES`` a reason."""
    names: dict[str, list[str]] = {}
    for skip in result.skipped:
        if not skip.failed:  # a failure is an error line of its own
            names.setdefault(clean(skip.reason), []).append(clean_name(skip.path))
    if not names:
        return []
    lines = ["skipped: " + ", ".join(f"{len(paths)} {why}" for why, paths in sorted(names.items()))]
    for why, paths in sorted(names.items()):
        unique = list(dict.fromkeys(paths))  # a file skipped in many commits is named once
        more = len(unique) - SKIPPED_NAMES
        listed = ", ".join(unique[:SKIPPED_NAMES]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"  {why}: {listed}")
    return lines


def error_lines(result: ScanResult) -> list[str]:
    """What kept the scan from being complete: inputs that failed, rules that failed."""
    failed = [
        f"failed: {clean_name(s.path)}: {clean(s.reason)}" for s in result.skipped if s.failed
    ]
    return failed + [f"rule error: {clean(e.rule)}: {clean(e.message)}" for e in result.errors]


def _summary(result: ScanResult) -> list[Line]:
    first, *rest = summary_lines(result)
    blocking = any(is_blocking(finding) for finding in result.findings)
    style = "bad" if blocking else "good" if not result.findings else "warn"
    return [[(first, style)], *([(line, "")] for line in rest)]


def write(result: ScanResult, stream: TextIO, options: ReportOptions) -> None:
    lines = finding_lines(result, options)
    if options.quiet:  # findings and errors only
        lines.extend([(line, "bad")] for line in error_lines(result))
    else:
        lines.extend([[], *_summary(result)] if lines else _summary(result))
    if options.color:
        _write_color(lines, stream)
    else:
        stream.writelines("".join(text for text, _ in line).rstrip() + "\n" for line in lines)


def _write_color(lines: list[Line], stream: TextIO) -> None:
    # Style.render turns plain text into SGR codes: no markup parsing, no terminal
    # detection (the caller decided), and twenty times faster than Console.print.
    from rich.color import ColorSystem
    from rich.style import Style

    styles = {name: Style.parse(spec) for name, spec in STYLES.items()}
    for line in lines:
        rendered = (
            styles[style].render(text, color_system=ColorSystem.STANDARD) if style else text
            for text, style in line
        )
        stream.write("".join(rendered) + "\n")
