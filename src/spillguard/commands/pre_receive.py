"""``spillguard hook pre-receive``: run by git in a bare repository, before any ref moves.

The exit code is git's answer: non-zero rejects the whole push and leaves every
ref where it was. Configuration comes from the administrator (``--config`` or
``spillguard.toml`` in the repository) and, only when the administrator allows it,
from ``.spillguard.toml`` on the default branch as it was before this push.
"""

from __future__ import annotations

import io
import time
from typing import TYPE_CHECKING

from spillguard import git
from spillguard.config import REPOSITORY_FILE
from spillguard.errors import GitError, UsageError
from spillguard.hooks.pre_receive import parse_ref_updates, scan_push, unscanned, verdict
from spillguard.loading import default_branch_file, load_server_config
from spillguard.report.push_text import push_lines
from spillguard.reviewed import REVIEWED_FILE

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

    from spillguard.cli import CommonOptions
    from spillguard.loading import RepositoryText


def run_pre_receive_command(
    common: CommonOptions, *, stdin: TextIO, stream: TextIO, environ: Mapping[str, str]
) -> int:
    started = time.monotonic()
    _refuse_unsupported(common)
    config_path = common.config
    if isinstance(stdin, io.TextIOWrapper):
        # A ref name is bytes to git; one that is not UTF-8 must not crash the hook.
        stdin.reconfigure(errors="surrogateescape")
    updates = parse_ref_updates(stdin.read())
    try:
        # FROM_ENV: git's quarantine (GIT_OBJECT_DIRECTORY and the alternates) holds
        # the pushed objects; a plain open would not see them.
        repo = git.open_from_environment(environ.get("GIT_DIR", "."))
    except GitError as error:
        # The administrator's on_error policy decides, so its file is read first.
        config = load_server_config(
            repo_dir=environ.get("GIT_DIR", "."),
            config_path=config_path,
            read_repository_file=_none,
        )
        scan = unscanned(updates, config, f"spillguard failed: {error}")
    else:
        config = load_server_config(
            repo_dir=repo.path,
            config_path=config_path,
            read_repository_file=lambda: default_branch_file(repo, REPOSITORY_FILE),
            read_reviewed_file=lambda: default_branch_file(repo, REVIEWED_FILE),
        )
        scan = scan_push(repo, updates, config, deadline=started + config.time_budget)
    decision = verdict(scan, config)
    if common.quiet and not (scan.result.findings or scan.result.notices or scan.incomplete):
        return int(decision.code)
    lines = push_lines(scan.result, verdict=decision.message, bypass_token=config.bypass_token)
    heading = f"spillguard: {scan.commits} new commit(s) on {scan.refs} ref(s)"
    stream.writelines(line + "\n" for line in (heading, *lines))
    return int(decision.code)


def _refuse_unsupported(common: CommonOptions) -> None:
    """The pusher reads plain text, and never a full secret: say so rather than ignore."""
    unsupported = [
        ("--format", common.format != "text"),
        ("--output", common.output is not None),
        ("--include-plaintext", common.include_plaintext),
        ("--include-allowlisted", common.include_allowlisted),
    ]
    for option, given in unsupported:
        if given:
            raise UsageError(
                f"hook pre-receive: {option} is not supported (plain text to the pusher)"
            )


def _none() -> RepositoryText:
    return None
