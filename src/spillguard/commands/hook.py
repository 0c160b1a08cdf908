"""``spillguard hook KIND``: what git runs from a hook script; prints and decides the exit code."""

from __future__ import annotations

import sys

from spillguard.commands.scan import report_options
from spillguard.core.errors import ExitCode
from spillguard.core.outcome import exit_code, is_blocking, local_unscannable
from spillguard.core.output import open_output
from spillguard.hooks.bypass import not_scanned
from spillguard.report import writer

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence

    from spillguard.commands.options import HookOptions
    from spillguard.configuration.config import Config
    from spillguard.core.models import ScanResult


def run_hook_command(options: HookOptions) -> int:
    common = options.common
    if options.kind == "pre-receive":
        import os

        from spillguard.commands.pre_receive import run_pre_receive_command

        return run_pre_receive_command(
            common, stdin=sys.stdin, stream=sys.stderr, environ=os.environ
        )
    if options.kind == "pre-commit":
        from spillguard.hooks.pre_commit import ADVICE, run_pre_commit

        result, config = run_pre_commit(
            config_path=common.config,
            include_allowlisted=common.include_allowlisted,
            offline=common.offline,
            config_from=common.config_from,
        )
    else:
        from spillguard.hooks.pre_push import ADVICE, run_pre_push

        result, config = run_pre_push(
            remote=options.remote,
            url=options.url,
            stdin=sys.stdin,
            config_path=common.config,
            include_allowlisted=common.include_allowlisted,
            offline=common.offline,
            config_from=common.config_from,
        )
    return report_hook(options, result, config, ADVICE)


def report_hook(
    options: HookOptions, result: ScanResult, config: Config, advice: Sequence[str]
) -> int:
    """Write the report, then say on stderr what happens to the commit or push."""
    common = options.common
    result = local_unscannable(result, config.on_unscannable)
    warn_only = config.hook_mode == "warn"
    # Hook output is for the person committing or pushing: stderr, which git shows
    # (a pre-push hook's stdout would mix with git's own), unless --output says otherwise.
    if common.output is None:
        writer(common.format)(result, sys.stderr, report_options(common, config, sys.stderr))
    else:
        with open_output(common.output) as stream:
            writer(common.format)(result, stream, report_options(common, config, stream))
    blocking = sum(1 for finding in result.findings if is_blocking(finding))
    if blocking and warn_only:
        print(
            f"spillguard: warn mode: {blocking} blocking finding(s) reported, not blocked",
            file=sys.stderr,
        )
    elif blocking:
        for line in advice:
            print(line.format(count=blocking), file=sys.stderr)
    code = exit_code(result, warn_only=warn_only)
    if result.bypassed and code == ExitCode.CLEAN:
        # Never a silent "clean" for commits that were not looked at.
        print(f"spillguard: push accepted: {not_scanned(len(result.bypassed))}", file=sys.stderr)
    return code
