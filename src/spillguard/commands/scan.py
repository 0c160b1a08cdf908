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
    if options.files:
        from spillguard.sources.files import iter_files

        return iter_files(options.files, max_size=config.max_file_size)
    if options.tree is not None:
        from spillguard.sources.tree import iter_tree_at

        return iter_tree_at(options.repo, options.tree, max_size=config.max_file_size)
    raise UsageError("history scans need the git sources; use --tree REV or --files PATH")


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
        root=root, config_path=common.config, include_allowlisted=common.include_allowlisted
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
