"""``spillguard hook pre-receive``: run by git in a bare repository, before any ref moves.

The exit code is git's answer: non-zero rejects the whole push and leaves every
ref where it was. Configuration comes from the administrator (``--config`` or
``spillguard.toml`` in the repository) and, only when the administrator allows it,
from ``.spillguard.toml`` on the default branch as it was before this push.
"""

from __future__ import annotations

import io
import time
from functools import partial
from pathlib import Path

from spillguard.configuration.loading import default_branch_file_cli, load_server_config
from spillguard.core import gitcommand
from spillguard.core.errors import ConfigError, ExitCode, GitError, UsageError
from spillguard.core.values import Frozen, fill, replace
from spillguard.hooks.pre_receive import (
    SHORT_ID,
    Verdict,
    parse_push_options,
    parse_ref_updates,
    scan_push_cli,
    verdict,
)
from spillguard.report.push_text import Policy, push_lines
from spillguard.report.sanitize import clean
from spillguard.sources.gitdiff import usable

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

    from spillguard.commands.options import CommonOptions
    from spillguard.configuration.config import Config
    from spillguard.core.models import RefUpdate
    from spillguard.hooks.pre_receive import PushScan


#: Where a break-glass push is recorded, in the bare repository.
BYPASS_LOG = "spillguard-bypass.log"
#: Where servers put the authenticated pusher's name (web server, GitLab, Gitea).
PUSHER_VARIABLES = ("REMOTE_USER", "GL_USERNAME", "GITEA_PUSHER_NAME", "USER")


def run_pre_receive_command(
    common: CommonOptions, *, stdin: TextIO, stream: TextIO, environ: Mapping[str, str]
) -> int:
    started = time.monotonic()
    _refuse_unsupported(common)
    if isinstance(stdin, io.TextIOWrapper):
        # A ref name is bytes to git; one that is not UTF-8 must not crash the hook.
        stdin.reconfigure(errors="surrogateescape")
    push = _Push(
        common=common,
        updates=parse_ref_updates(stdin.read()),
        repo_dir=environ.get("GIT_DIR", "."),
        environ=environ,
        stream=stream,
        started=started,
    )
    if not usable():  # fail closed: nothing else reads what git stores as git does
        raise GitError("git is not installed (the pre-receive hook reads pushes with it)")
    try:
        return _judge_by_git(push)
    except ConfigError as error:
        # One line: the file and key for the administrator, what to do for the pusher.
        raise ConfigError(
            f"{error} (the server's spillguard configuration is broken, and every push is "
            "rejected until it is fixed: tell the administrator of this server)"
        ) from None


class _Push(Frozen):
    """The hook's whole context: its options, the pushed ref updates, the bare
    repository, git's environment, the pusher's stream, when the hook started."""

    __slots__ = ("common", "environ", "repo_dir", "started", "stream", "updates")

    common: CommonOptions
    updates: tuple[RefUpdate, ...]
    repo_dir: str
    environ: Mapping[str, str]
    stream: TextIO
    started: float

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        common: CommonOptions,
        updates: tuple[RefUpdate, ...],
        repo_dir: str,
        environ: Mapping[str, str],
        stream: TextIO,
        started: float,
    ) -> None:
        fill(self, locals())


def _judge_by_git(push: _Push) -> int:
    """git alone reads the repository (SHA-1 or SHA-256), and libgit2 is never imported."""
    config = load_server_config(
        repo_dir=push.repo_dir,
        config_path=push.common.config,
        read_file=partial(default_branch_file_cli, push.repo_dir),
    )
    if _break_glass(push, config, push.repo_dir):
        return int(ExitCode.CLEAN)
    deadline = push.started + config.time_budget
    # The budget is the whole hook's: git's listing and reading are stopped at it too.
    with gitcommand.deadline(deadline):
        scan = scan_push_cli(
            push.repo_dir, push.updates, config, deadline=deadline, environ=push.environ
        )
    return _report(push, scan, config)


def _report(push: _Push, scan: PushScan, config: Config) -> int:
    decision = verdict(scan, config)
    result = scan.result
    if push.common.quiet and not (result.findings or result.notices or scan.incomplete):
        return int(decision.code)
    advertised = config.bypass_tokens if config.advertise_bypass_token else ()
    # The time the pusher waited: the hook's, git's listing of the push included.
    seconds = time.monotonic() - push.started
    result = replace(result, stats=replace(result.stats, seconds=seconds))
    lines = push_lines(
        result,
        verdict=decision.message,
        bypass_tokens=advertised,
        policy=_policy(config, decision, push.repo_dir),
    )
    heading = f"spillguard: {scan.commits} new commit(s) on {scan.refs} ref(s)"
    push.stream.writelines(line + "\n" for line in (heading, *lines))
    return int(decision.code)


def _policy(config: Config, decision: Verdict, repo_dir: str) -> Policy:
    """What the administrator's settings change in the pusher's advice."""
    warn = config.hook_mode == "warn"
    return Policy(
        locked=config.locked_rules,
        allow_pragma=config.ruleset.allow_pragma,
        contact=str(config.settings.get("contact", "")),
        accepted=decision.code == ExitCode.CLEAN,
        why='hook.mode = "warn"' if warn else "its findings are of rules with blocking = false",
        repository=str(Path(repo_dir).resolve()),
    )


def _break_glass(push: _Push, config: Config, repo_dir: str) -> bool:
    """Accept the push unscanned when the pusher gave the administrator's push option.

    The bypass is recorded in ``spillguard-bypass.log`` in ``repo_dir`` first; a
    bypass that cannot be recorded is refused and the push is scanned as usual.
    """
    updates, environ, stream = push.updates, push.environ, push.stream
    option = config.bypass_push_option
    if not option or option not in parse_push_options(environ):
        return False
    log = Path(repo_dir, BYPASS_LOG)
    import datetime as dt  # here: only a bypass is dated

    pusher = next((environ[name] for name in PUSHER_VARIABLES if environ.get(name)), "unknown")
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    refs = " ".join(
        f"{update.ref}:{update.old[:SHORT_ID]}..{update.new[:SHORT_ID]}" for update in updates
    )
    try:
        with log.open("a", encoding="utf-8", errors="backslashreplace") as audit:
            audit.write(f"{when} pusher={clean(pusher)} option={clean(option)} {clean(refs)}\n")
    except OSError as error:
        stream.write(
            f"spillguard: push option {option!r} ignored: the bypass cannot be recorded "
            f"({error.strerror}); scanning the push\n"
        )
        return False
    stream.write(
        f"spillguard: push accepted UNCHECKED: push option {option!r} given (break-glass); "
        f"recorded in {BYPASS_LOG} on the server\n"
    )
    return True


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
