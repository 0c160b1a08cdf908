"""The command line: what each command is handed, and exit codes. Its parser is in
``arguments``, built only for a command line a hook script does not give."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import types

from spillguard.commands.options import CommonOptions, HookOptions, ScanOptions
from spillguard.core.errors import ExitCode, SpillguardError, missing_object

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Iterator, Sequence

    #: The parsed command line: argparse's, or a bare hook's read without it.
    Arguments = Namespace | types.SimpleNamespace

    from spillguard.commands.setup_options import SyncOptions


def _audit(args: Arguments) -> int:
    import dataclasses  # here: the hooks define no dataclass

    from spillguard.audit.command import AuditOptions, run_audit_command

    values = vars(args)
    fields = {field.name for field in dataclasses.fields(AuditOptions)}
    given = {name: values[name] for name in fields if name in values}
    given["paths"] = tuple(args.paths)
    given["rules"] = tuple(args.rules)
    return run_audit_command(AuditOptions(**given))


def _common(args: Arguments) -> CommonOptions:
    return CommonOptions(**{name: getattr(args, name) for name in CommonOptions.FIELDS})


def _sync(args: Arguments) -> SyncOptions:
    """The sync options, each field from the parsed argument of its name."""
    import dataclasses  # here: the hooks define no dataclass

    from spillguard.commands.setup_options import SyncOptions

    names = (field.name for field in dataclasses.fields(SyncOptions))
    return SyncOptions(**{name: getattr(args, name) for name in names})


def _review(args: Arguments) -> int:
    from spillguard.commands.review import run_review_command
    from spillguard.commands.setup_options import ReviewOptions

    return run_review_command(
        ReviewOptions(
            action=args.action,
            repo=args.repo,
            text=getattr(args, "text", None),
            at=getattr(args, "at", None),
            fingerprint=getattr(args, "fingerprint", None),
            rule=getattr(args, "rule", None),
            reason=getattr(args, "reason", ""),
            digest=getattr(args, "digest", None),
            format=getattr(args, "format", "text"),
            output=getattr(args, "output", None),
            config=args.config,
            remote=getattr(args, "remote", False),
        )
    )


def _config(args: Arguments) -> int:
    from spillguard.commands.config import run_config_check
    from spillguard.commands.setup_options import ConfigCheckOptions

    return run_config_check(
        ConfigCheckOptions(
            repo=args.repo,
            config=args.config,
            format=args.format,
            output=args.output,
            offline=args.offline,
            include_allowlisted=args.include_allowlisted,
            all_rules=args.all_rules,
        )
    )


def _install(args: Arguments) -> int:
    from spillguard.commands.install import run_install_command
    from spillguard.commands.setup_options import InstallOptions

    return run_install_command(InstallOptions(hook=args.hook, repo=args.repo, force=args.force))


def _uninstall(args: Arguments) -> int:
    from spillguard.commands.install import run_uninstall_command
    from spillguard.commands.setup_options import UninstallOptions

    return run_uninstall_command(UninstallOptions(hook=args.hook, repo=args.repo))


#: Commands whose options are built by a function of their own.
_HANDLERS = {
    "review": _review,
    "config": _config,
    "install": _install,
    "uninstall": _uninstall,
    "audit": _audit,
}


def _dispatch(args: Arguments) -> int:
    handler = _HANDLERS.get(args.command)
    if handler is not None:
        return handler(args)
    if args.command == "scan":
        from spillguard.commands.scan import run_scan_command

        return run_scan_command(
            ScanOptions(
                common=_common(args),
                repo=args.repo,
                revs=tuple(args.revs),
                tree=args.tree,
                files=tuple(args.files or ()),
                all_refs=args.all_refs,
                branches=tuple(args.branch),
                since=args.since,
                until=args.until,
                jobs=args.jobs,
                merge_diffs=args.merge_diffs,
                rules=tuple(args.rules),
                include_reviewed=args.include_reviewed,
            )
        )
    if args.command == "hook":
        from spillguard.commands.hook import run_hook_command

        return run_hook_command(
            HookOptions(
                common=_common(args),
                kind=args.hook,
                remote=getattr(args, "remote", None),
                url=getattr(args, "url", None),
            )
        )
    if args.command == "sync":
        from spillguard.commands.sync import run_sync_command

        return run_sync_command(_sync(args))
    from spillguard.commands.rules import run_rules_command
    from spillguard.commands.setup_options import RulesOptions

    common = CommonOptions(
        format=args.format,
        output=args.output,
        config=args.config,
        offline=args.offline,
        config_from=args.config_from,
    )
    return run_rules_command(RulesOptions(common=common, repo=args.repo, explain=args.explain))


@contextlib.contextmanager
def error_handler() -> Iterator[list[int]]:
    """Turn every SpillguardError into one line on stderr and its exit code."""
    code: list[int] = []
    try:
        yield code
    except SpillguardError as error:
        print(f"spillguard: error: {error}", file=sys.stderr)
        code.append(int(error.exit_code))
    except KeyboardInterrupt:
        print("spillguard: interrupted", file=sys.stderr)
        code.append(int(ExitCode.INTERRUPTED))
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, like git; the scan is incomplete.
        from spillguard.core.output import discard_stdout

        discard_stdout()
        code.append(int(ExitCode.RUNTIME))
    except OSError as error:
        if os.environ.get("SPILLGUARD_DEBUG"):
            raise
        # A full disk, a failing device: the system's reason is the whole story.
        where = f"{error.filename}: " if error.filename else ""
        print(f"spillguard: error: {where}{error.strerror or error}", file=sys.stderr)
        code.append(int(ExitCode.RUNTIME))
    except Exception as error:
        if os.environ.get("SPILLGUARD_DEBUG"):
            raise
        unreadable = _missing_object(error) or _unreadable_object(error)
        if unreadable is not None:
            print(f"spillguard: error: {unreadable}", file=sys.stderr)
        else:
            print(f"spillguard: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        code.append(int(ExitCode.RUNTIME))


def _missing_object(error: Exception) -> str | None:
    """What to tell the user when git's object store lacks an object a scan needs."""
    pygit2 = sys.modules.get("pygit2")  # not loaded: the error cannot be one of its own
    if pygit2 is None or not isinstance(error, pygit2.NotFoundError):
        return None
    # A KeyError's text is the repr of its argument: take the argument itself.
    told = str(error.args[0] if error.args else error)
    if re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", told):
        return missing_object(told)
    # Not an object id: a reference whose target is missing, say.
    return f"{told} (is the repository corrupt, or a partial clone?)"


def _unreadable_object(error: Exception) -> str | None:
    """What to tell the user when libgit2 cannot parse an object a scan needs (a commit
    with a malformed author line, say, which git itself reads as empty fields)."""
    pygit2 = sys.modules.get("pygit2")
    if pygit2 is None or not isinstance(error, pygit2.GitError):
        return None
    return f"libgit2 cannot read the repository: {error} (git fsck names what is wrong)"


#: The hooks git runs with no arguments (pre-push is given the remote's name and URL).
_BARE_HOOKS = ("pre-commit", "pre-receive")


def _bare_hook(given: Sequence[str]) -> types.SimpleNamespace | None:
    """``hook pre-commit`` or ``hook pre-receive`` and nothing more, as the hook scripts
    run them on every commit and push: what argparse would parse, every option at its
    default, without building a parser (a twentieth of a commit hook's start-up).
    Anything else is argparse's to parse."""
    if len(given) != 2 or given[0] != "hook" or given[1] not in _BARE_HOOKS:
        return None
    defaults = CommonOptions.__init__.__kwdefaults__ or {}
    return types.SimpleNamespace(version=None, command="hook", hook=given[1], **defaults)


def main(argv: Sequence[str] | None = None) -> int:
    # Every git spillguard runs reads objects as stored, as libgit2 and a clone do:
    # a pushed refs/replace/<id> would otherwise swap a clean object in wherever a
    # judged commit, tree, blob or configuration file is named.
    os.environ["GIT_NO_REPLACE_OBJECTS"] = "1"
    given = sys.argv[1:] if argv is None else argv
    if argv is None:  # as git's hook script runs it (``python -m spillguard`` answers sooner)
        from spillguard.hooks.deletions import answer_bare_hook

        answered = answer_bare_hook(given)
        if answered is not None:
            return answered
    args: Arguments | None = _bare_hook(given)
    if args is None:
        from spillguard.arguments import parse

        args = parse(given)
    with error_handler() as code:
        code.append(_dispatch(args))
    return code[-1]
