"""``spillguard scan``: history, one tree, or plain files."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from spillguard.errors import UsageError
from spillguard.loading import load_config
from spillguard.outcome import exit_code
from spillguard.output import open_output
from spillguard.report import ReportOptions, writer
from spillguard.scanning import run_scan

if TYPE_CHECKING:
    from spillguard.cli import CommonOptions, ScanOptions
    from spillguard.config import Config
    from spillguard.sources import Source


def _source(options: ScanOptions, config: Config) -> Source:
    history = options.revs or options.all_refs or options.branches or options.since or options.until
    if history and (options.files or options.tree is not None):
        raise UsageError(
            "REV, --all, --branch, --since and --until select history, not --tree/--files"
        )
    if options.files:
        from spillguard.sources.files import iter_files

        return iter_files(options.files, max_size=config.max_file_size)
    if options.tree is not None:
        from spillguard.sources.tree import iter_tree_at

        return iter_tree_at(options.repo, options.tree, max_size=config.max_file_size)
    return _history(options, config)


def _history(options: ScanOptions, config: Config) -> Source:
    from spillguard import git
    from spillguard.dates import parse_instant
    from spillguard.sources.history import Selection, iter_history

    selection = Selection(
        revs=options.revs,
        all_refs=options.all_refs,
        branches=options.branches,
        since=None if options.since is None else parse_instant(options.since, "--since"),
        until=None if options.until is None else parse_instant(options.until, "--until"),
    )
    repo = git.open_repository(options.repo)
    return iter_history(repo, selection, max_size=config.max_file_size)


def report_options(common: CommonOptions, config: Config) -> ReportOptions:
    return ReportOptions(
        plaintext=common.include_plaintext,
        color=common.color == "always",
        deduplicate=config.deduplicate_exports,
    )


def run_scan_command(options: ScanOptions) -> int:
    common = options.common
    root = None if options.files else options.repo
    config = load_config(
        root=root,
        config_path=common.config,
        include_allowlisted=common.include_allowlisted,
        offline=common.offline,
    )
    result = run_scan(_source(options, config), config.ruleset, notices=config.notices)
    report = report_options(common, config)
    with open_output(common.output) as stream:
        writer(common.format)(result, stream, report)
    if common.format != "text" and not common.quiet:
        from spillguard.report.text_report import summary_lines

        for line in summary_lines(result):
            print(line, file=sys.stderr)
    return exit_code(result)
