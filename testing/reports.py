"""One fixed, realistic ScanResult for report tests: real rules, real engine, fixed commits.

Everything is reproducible (seeded tokens, fixed ids, dates and timings) so that
reports of it can be compared with golden files. It covers what a report must
handle: two commits with a ref, several files, a warn-only custom rule whose match
looks like a spreadsheet formula, an allowlisted line, a line too long to show,
hostile repository text (escape sequences, rich markup, a bidi override), skipped
files and a rule error.
"""

from __future__ import annotations

from spillguard.configuration.loading import load_config
from spillguard.core.models import (
    MAX_LINE_LENGTH,
    CommitInfo,
    Fragment,
    RuleError,
    RuleSet,
    ScanResult,
    ScanStats,
    Skipped,
)
from spillguard.detection.engine import Scanner
from testing.tokens import expand

AWS_KEY = expand("AKIA{rand:A2:16}", "reports-1")
OTHER_KEY = expand("AKIA{rand:A2:16}", "reports-2")
FORMULA_TOKEN = expand("=sg_{rand:Aa0:20}", "reports-3")

CONFIG = """
[custom_rules]
FORMULA_TOKEN = { regexp = '=sg_[A-Za-z0-9]{20}', blocking = false }
"""

FIRST = CommitInfo(
    id="3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a",
    author="Ada Tester",
    email="ada@example.com",
    date="2024-01-01T00:00:00Z",
    message="Add deployment settings\n\nWith the staging keys for now.\n",
)
HOSTILE = CommitInfo(
    id="9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b",
    author="Mallory \x1b[31mRed\x1b[0m [bold]Markup[/bold]",
    email="mallory@example.com",
    date="2024-02-02T12:30:00Z",
    message="\x1b]0;owned\x07Fix typo \u202eevil\n",
)


def sample_fragments() -> list[Fragment]:
    """Added-line runs; none ends in a newline, which the engine's line text never shows."""
    ref = "refs/heads/main"
    long_line = "x=" + "a" * MAX_LINE_LENGTH + f";k={OTHER_KEY}"
    return [
        Fragment(
            path="config/settings.py",
            text=f"DEBUG = True\naws_key = '{AWS_KEY}'\n"
            f"\tlegacy_key = '{AWS_KEY}'  # pragma: allowlist-secret",
            start_line=10,
            commit=FIRST,
            ref=ref,
        ),
        Fragment(path="deploy/.env", text=f"TOKEN={FORMULA_TOKEN}", commit=FIRST, ref=ref),
        Fragment(
            path="docs/[red]notes\x1b[2J\u202e.md",
            text=f"see {OTHER_KEY}\x1b[8m hidden\n{long_line}",
            start_line=3,
            commit=HOSTILE,
            ref=ref,
        ),
    ]


def sample_ruleset() -> RuleSet:
    """The built-in rules plus FORMULA_TOKEN, allowlisted findings included."""
    config = load_config(
        root=None,
        read_file={".spillguard.toml": (CONFIG, "sample.toml")}.get,
        include_allowlisted=True,
        environ={},
        offline=True,
    )
    return config.ruleset


def sample_result() -> ScanResult:
    scanner = Scanner(sample_ruleset())
    findings = tuple(f for fragment in sample_fragments() for f in scanner.scan(fragment))
    return ScanResult(
        findings=findings,
        errors=(RuleError(rule="SLOW_RULE", message="exceeded its 20 s budget on one line"),),
        skipped=(
            Skipped(path="assets/logo.png", reason="binary", commit=FIRST.id),
            Skipped(path="dump.sql", reason="too large", commit=HOSTILE.id),
        ),
        stats=ScanStats(commits=2, files=3, bytes=1234, seconds=0.25),
    )
