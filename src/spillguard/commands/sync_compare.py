"""``spillguard sync --compare``: does the laptop find what the server found?

The server's own scan result of a branch (every page of it) is set beside a local
scan of the same branch's history, with the synced rules: the same findings, or each
difference named. Exit 0 when they agree, 1 when they differ.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from spillguard.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from spillguard.commands.setup_options import SyncOptions
    from spillguard.core.models import Finding
    from spillguard.sync.compare import Comparison


def local_rev(branch: str | None, rev: str | None) -> str:
    """The local commit the server's branch stands for: the remote-tracking branch
    as fetched (``origin/BRANCH``, ``origin/HEAD``), else the local one."""
    if rev:
        return rev
    from spillguard.sources.gitcli import run_git

    remote = f"refs/remotes/origin/{branch or 'HEAD'}"
    if run_git("rev-parse", "--verify", "-q", f"{remote}^{{commit}}") is not None:
        return remote
    return branch or "HEAD"


def _shown(text: str, match: str, *, plaintext: bool) -> str:
    from spillguard.detection.redact import mask, mask_span
    from spillguard.report.sanitize import clean

    if not plaintext:
        at = text.find(match)
        text = mask_span(text, at, at + len(match)) if at >= 0 and match else mask(text)
    return clean(text)


def _where(finding: Finding) -> str:
    from spillguard.report.sanitize import clean_name

    commit = f" (commit {finding.commit.id[:10]})" if finding.commit else ""
    return f"{clean_name(finding.path)}:{finding.line}  {finding.rule}{commit}"


def report_lines(comparison: Comparison, branch: str, rev: str, *, plaintext: bool) -> list[str]:
    lines = [
        f"server: branch {branch}, {comparison.server_count} distinct findings",
        f"here: the history of {rev}, {comparison.local_count} distinct findings",
    ]
    if comparison.only_server:
        lines.append(f"only on the server ({len(comparison.only_server)}):")
        lines += [
            f"  {_shown(text, match, plaintext=plaintext)}"
            for text, match in sorted(comparison.only_server)
        ]
    if comparison.only_local:
        lines.append(f"only here ({len(comparison.only_local)}):")
        for finding in comparison.only_local:
            shown = _shown(finding.text, finding.match_text, plaintext=plaintext)
            lines += [f"  {_where(finding)}", f"    {shown}"]
    lines.append("the results agree" if comparison.agree else "the results differ")
    return lines


def run_compare(options: SyncOptions) -> int:
    from spillguard.commands.options import CommonOptions, ScanOptions
    from spillguard.commands.scan import scan_for
    from spillguard.configuration.loading import load_config
    from spillguard.git import config_root
    from spillguard.sync.compare import compare, fetch_scan
    from spillguard.sync.settings import merged_settings, target
    from spillguard.sync.variants import expand

    root = config_root(".")
    config = load_config(root=root, config_path=options.config)
    chosen = target(merged_settings(config.sync, options.overrides()), os.environ)
    if chosen.variant.scan_result is None:
        raise UsageError(
            f"sync --compare: the {chosen.variant.name} variant offers no scan result of a branch"
        )
    rev = local_rev(options.branch, options.rev)
    server = fetch_scan(
        chosen.client, expand(chosen.variant.scan_result, chosen.scope), options.branch
    )
    scan = ScanOptions(common=CommonOptions(quiet=True), repo=".", revs=(rev,))
    result = scan_for(scan, config, root)
    comparison = compare(server.keys, result.findings)
    for notice in config.notices:
        print(f"spillguard: {notice}", file=sys.stderr)
    if server.actual is False:
        print(
            "spillguard: note: the server's result is not for the branch's latest commit "
            "(it changed since the server scanned it)",
            file=sys.stderr,
        )
    branch = options.branch or "(the default branch)"
    for line in report_lines(comparison, branch, rev, plaintext=options.include_plaintext):
        print(line)
    return ExitCode.CLEAN if comparison.agree else ExitCode.FINDINGS
