"""Exit codes and the one exception hierarchy; library code raises, cli.py reports."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The process exit codes documented in the README (Exit codes) and DESIGN.md."""

    CLEAN = 0
    FINDINGS = 1
    USAGE = 2
    RUNTIME = 3
    INTERRUPTED = 130


class SpillguardError(Exception):
    """Base of every error spillguard reports as one line and an exit code."""

    exit_code: ExitCode = ExitCode.RUNTIME


class ConfigError(SpillguardError):
    """A configuration file, key, rule or reviewed-entry file is wrong."""

    exit_code = ExitCode.USAGE


class UsageError(SpillguardError):
    """The command line asks for something that cannot be done."""

    exit_code = ExitCode.USAGE


class GitError(SpillguardError):
    """A repository, ref or object cannot be read."""

    exit_code = ExitCode.RUNTIME


class GitTimeoutError(GitError):
    """The deadline passed while git was reading (a push's time budget): git was stopped."""

    def __init__(self) -> None:
        super().__init__("the time budget ran out while git was reading the repository")


def missing_object(object_id: str) -> str:
    """What to tell the user when git's object store lacks an object a scan needs."""
    return f"object {object_id} is missing from the repository (is it corrupt, or a partial clone?)"


class SyncError(SpillguardError):
    """The scanning app's REST API could not be reached or answered with an error."""

    exit_code = ExitCode.RUNTIME
