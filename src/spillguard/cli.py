"""The command line: argparse lives here and only here, as do exit codes."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from spillguard.commands.options import CommonOptions, HookOptions, ScanOptions
from spillguard.core.errors import ExitCode, SpillguardError, missing_object
from spillguard.report import FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from spillguard.commands.setup_options import SyncOptions


def _add_common_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output and configuration")
    group.add_argument("--format", choices=FORMATS, default="text", help="report format")
    group.add_argument("--output", metavar="FILE", help="write the report to FILE ('-': stdout)")
    group.add_argument("--config", metavar="FILE", help="the global (user or administrator) file")
    group.add_argument(
        "--include-plaintext", action="store_true", help="show full matched secrets in reports"
    )
    group.add_argument(
        "--include-allowlisted", action="store_true", help="also report allowlisted findings"
    )
    group.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    group.add_argument("--no-color", dest="color", action="store_const", const="never")
    group.add_argument("--quiet", "-q", action="store_true", help="print only findings and errors")
    group.add_argument(
        "--offline", action="store_true", help="ignore the rules and reviewed lines synced"
    )
    group.add_argument(
        "--config-from",
        choices=("auto", "default-branch", "work-tree"),
        help=(
            "read .spillguard.toml and the reviewed file from the remote's default branch, "
            "as the server does, or from the work tree (staged files in pre-commit); auto "
            "(the default): the default branch for pre-push, and for all once synced"
        ),
    )
    group.add_argument(
        "--deduplicate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="CSV: one row per rule, matched string and path (default: deduplicate_exports)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, got {text!r}")
    return value


def _scan_arguments(scan: argparse.ArgumentParser) -> None:
    scan.add_argument("revs", nargs="*", metavar="REV", help="revisions or ranges (default HEAD)")
    scan.add_argument(
        "--repo",
        default=".",
        metavar="DIR",
        help="the repository (default .); with --files, whose .spillguard.toml applies",
    )
    source = scan.add_mutually_exclusive_group()
    source.add_argument("--tree", metavar="REV", help="the files of one tree")
    source.add_argument("--files", nargs="+", metavar="PATH", help="plain files and directories")
    history = scan.add_argument_group("history")
    history.add_argument("--all", dest="all_refs", action="store_true", help="every ref and HEAD")
    history.add_argument(
        "--branch", action="append", default=[], metavar="NAME", help="a local branch (repeatable)"
    )
    history.add_argument("--since", metavar="DATE", help="commits from DATE on (ISO 8601, UTC)")
    history.add_argument("--until", metavar="DATE", help="commits before DATE (ISO 8601, UTC)")
    history.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help=(
            "worker processes for a history, --files or --tree scan (default: one per CPU;"
            " at most 4 per CPU and one per chunk of 64 commits or files, whatever N says)"
        ),
    )
    history.add_argument(
        "--no-merge-diffs",
        dest="merge_diffs",
        action="store_false",
        help=(
            "leave out the lines merges add themselves (conflict resolutions), as git log -p"
            " shows no merge's diff and other scanners judge none: faster where merges are"
            " many; merges' messages are still judged"
        ),
    )
    filters = scan.add_argument_group("report filters (as the server's exports)")
    filters.add_argument(
        "--rule",
        dest="rules",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="only these rules' findings (repeatable; the server's rule names work too)",
    )
    filters.add_argument(
        "--include-reviewed",
        action="store_true",
        help="also report reviewed findings, flagged and never blocking",
    )
    _add_common_options(scan)


def _hook_arguments(hook: argparse.ArgumentParser) -> None:
    kinds = hook.add_subparsers(dest="hook", required=True, metavar="HOOK")
    pre_commit = kinds.add_parser("pre-commit", help="the staged changes (index against HEAD)")
    _add_common_options(pre_commit)
    pre_push = kinds.add_parser("pre-push", help="the commits a push sends (git's pre-push stdin)")
    pre_push.add_argument("remote", nargs="?", help="the remote's name (git passes it)")
    pre_push.add_argument("url", nargs="?", help="the remote's URL (git passes it)")
    _add_common_options(pre_push)
    pre_receive = kinds.add_parser(
        "pre-receive", help="server side: every pushed commit, before any ref moves"
    )
    _add_common_options(pre_receive)


#: What ``install`` and ``uninstall`` take (spillguard.hooks.scripts.HOOK_KINDS, not
#: imported here: the hooks' own start-up reads this module).
HOOK_CHOICES = ("pre-commit", "pre-push", "pre-receive")


def _install_arguments(install: argparse.ArgumentParser) -> None:
    install.add_argument(
        "hook", nargs="?", default="pre-commit", choices=HOOK_CHOICES, help="(default pre-commit)"
    )
    install.add_argument("--repo", default=".", metavar="DIR", help="the repository (default .)")
    install.add_argument(
        "--force",
        action="store_true",
        help="replace another hook, keeping it as HOOK.bak and running it first",
    )


def _uninstall_arguments(uninstall: argparse.ArgumentParser) -> None:
    uninstall.add_argument(
        "hook",
        nargs="?",
        choices=HOOK_CHOICES,
        help="the hook to remove (default: every spillguard hook)",
    )
    uninstall.add_argument("--repo", default=".", metavar="DIR", help="the repository (default .)")


def _rules_arguments(rules: argparse.ArgumentParser) -> None:
    rules.add_argument("--repo", default=".", metavar="DIR", help="the repository (default .)")
    # Only what the rule list honours: it is no report, so no CSV, no plaintext, no colour.
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rules.add_argument("--output", metavar="FILE", help="write the list to FILE ('-': stdout)")
    rules.add_argument("--config", metavar="FILE", help="the global (user or administrator) file")
    rules.add_argument("--offline", action="store_true", help="leave the synced rules out")
    rules.add_argument(
        "--explain",
        metavar="TEXT",
        help="say which rules match TEXT (a line or a token) and why each match is or is "
        "not reported ('-': read it from stdin)",
    )
    rules.add_argument(
        "--config-from",
        choices=("auto", "default-branch", "work-tree"),
        help="read .spillguard.toml from the remote's default branch or the work tree",
    )


def _sync_arguments(sync: argparse.ArgumentParser) -> None:
    sync.description = (
        "Credentials come from SPILLGUARD_USERNAME and SPILLGUARD_PASSWORD "
        "(SPILLGUARD_API_KEY for the hosted variant), ~/.netrc or the system keyring."
    )
    sync.add_argument("--server", metavar="URL", help="the app's server ([sync] server)")
    sync.add_argument(
        "--variant", choices=("code-hosting", "wiki", "issue-tracker", "hosted"), default=None
    )
    sync.add_argument("--project", metavar="KEY", help="project key (code-hosting, issue-tracker)")
    sync.add_argument("--repo", metavar="SLUG", help="repository slug (code-hosting)")
    sync.add_argument("--space", metavar="KEY", help="space key (wiki)")
    sync.add_argument("--ca-bundle", metavar="PEM", help="trust these CA certificates")
    sync.add_argument("--xsrf-header", metavar="NAME", help="XSRF bypass header (X-Host-Token)")
    sync.add_argument("--timeout", type=float, metavar="SECONDS", help="per request (10)")
    sync.add_argument("--config", metavar="FILE", help="the global (user or administrator) file")
    sync.add_argument("--quiet", "-q", action="store_true", help="print only warnings and errors")
    sync.add_argument(
        "--compare",
        action="store_true",
        help="compare the server's scan result of a branch with a local scan (exit 1: differ)",
    )
    sync.add_argument("--branch", metavar="NAME", help="--compare: the server's branch (default)")
    sync.add_argument(
        "--rev", metavar="REV", help="--compare: the local commit (origin/BRANCH, else BRANCH)"
    )
    sync.add_argument(
        "--include-plaintext", action="store_true", help="--compare: show the full matches"
    )


def _review_arguments(review: argparse.ArgumentParser) -> None:
    actions = review.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add",
        help="stop reporting a string: TEXT, or a finding's secret",
        description="Review one string that is not a secret: TEXT as given ('-': read it "
        "from stdin), or the secret of the finding at a location or with a fingerprint, "
        "found again by rescanning (bound to the finding's rule).",
    )
    add.add_argument(
        "text", nargs="?", metavar="TEXT", help="the string that is not a secret ('-': stdin)"
    )
    add.add_argument(
        "--at",
        metavar="LOCATION",
        help="the finding at PATH:LINE (staged changes, else the file) or COMMIT:PATH:LINE",
    )
    add.add_argument("--fingerprint", metavar="FP", help="the finding with this fingerprint")
    add.add_argument("--reason", default="", metavar="WHY", help="why it is not a secret")
    remove = actions.add_parser("remove", help="report TEXT again ('-': read it from stdin)")
    remove.add_argument("text", nargs="?", metavar="TEXT", help="the string ('-': stdin)")
    remove.add_argument("--digest", metavar="HEX", help="the entry with this digest (8+ digits)")
    listing = actions.add_parser("list", help="the reviewed entries (digests, never text)")
    listing.add_argument("--format", choices=("text", "json", "csv"), default="text")
    listing.add_argument("--output", metavar="FILE")
    for action in (add, remove, listing):
        action.add_argument(
            "--repo", default=".", metavar="DIR", help="the repository (default: the current one)"
        )
        action.add_argument("--config", metavar="FILE", help="the global (user) file")
    for action in (add, remove):
        action.add_argument("--rule", metavar="NAME", help="only for this rule")
        action.add_argument(
            "--remote",
            action="store_true",
            help="on the scanning app's server ([sync] server, else the last sync's)",
        )


def _config_arguments(config: argparse.ArgumentParser) -> None:
    actions = config.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser("check", help="validate every layer and print the result")
    check.add_argument(
        "--repo", default=".", metavar="DIR", help="a work tree, or a bare repository on a server"
    )
    check.add_argument("--config", metavar="FILE", help="the global (user or administrator) file")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    check.add_argument("--offline", action="store_true", help="leave the synced rules out")
    check.add_argument(
        "--include-allowlisted", action="store_true", help="the command-line flag's layer"
    )
    check.add_argument(
        "--rules",
        dest="all_rules",
        action="store_true",
        help="list every rule (default: a count, and the rules changed from the defaults)",
    )


def _audit_arguments(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a tree of PROJECT/NAME.git, a repository, or a file of paths and clone URLs",
    )
    audit.add_argument(
        "--state",
        default="spillguard-audit.sqlite",
        metavar="FILE",
        help="the audit's SQLite state (default spillguard-audit.sqlite)",
    )
    audit.add_argument("--clone-dir", metavar="DIR", help="where clone URLs are mirrored")
    audit.add_argument("--config", metavar="FILE", help="the administrator's file for all")
    audit.add_argument(
        "--branches",
        metavar="PATTERN",
        help="branches matching PATTERN ('*': all; default: the default branch)",
    )
    audit.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help="local worker processes (default: one per CPU)",
    )
    audit.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on an existing Dask distributed cluster (tcp://HOST:PORT)",
    )
    audit.add_argument(
        "--no-scan",
        dest="judge",
        action="store_false",
        help="judge nothing: show what is outdated, behind or not scanned",
    )
    audit.add_argument(
        "--max-commits",
        type=_positive_int,
        metavar="N",
        help="a branch with more commits to judge fails as too large",
    )
    audit.add_argument(
        "--repository-budget",
        type=_seconds,
        default=3600.0,
        metavar="SECONDS",
        help="the time one repository may take; over it, it fails (default 3600, 0: none)",
    )
    audit.add_argument("--format", choices=("text", "json"), default="text")
    audit.add_argument("--output", metavar="FILE", help="write the status to FILE")
    audit.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    audit.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    exports = audit.add_argument_group("exports (as the server's)")
    exports.add_argument(
        "--export",
        dest="export_dir",
        metavar="DIR",
        help="CSV per project (DIR/PROJECT.csv) and repository",
    )
    exports.add_argument("--export-zip", metavar="FILE", help="every repository's CSV in a zip")
    exports.add_argument("--html", metavar="FILE", help="a self-contained, sortable HTML report")
    exports.add_argument("--include-allowlisted", action="store_true")
    exports.add_argument("--include-reviewed", action="store_true")
    exports.add_argument("--since", metavar="DATE", help="findings of commits from DATE on")
    exports.add_argument("--until", metavar="DATE", help="findings of commits before DATE")
    exports.add_argument("--rule", dest="rules", action="append", default=[],
                         metavar="NAME[,NAME...]", help="only these rules' findings")  # fmt: skip


def _audit(args: argparse.Namespace) -> int:
    import dataclasses  # here: the hooks define no dataclass

    from spillguard.audit.command import AuditOptions, run_audit_command

    values = vars(args)
    fields = {field.name for field in dataclasses.fields(AuditOptions)}
    given = {name: values[name] for name in fields if name in values}
    given["paths"] = tuple(args.paths)
    given["rules"] = tuple(args.rules)
    return run_audit_command(AuditOptions(**given))


class _VersionAction(argparse.Action):
    """--version, looking the version up only when asked (it is slow to import)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        import spillguard

        print(f"spillguard {spillguard.__version__}")  # stdout, like git --version
        parser.exit()


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout at the width argparse would choose, found without
    importing shutil, which argparse imports for it (~2.5 ms of every hook's start:
    argparse makes a formatter for every argument it is given)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_columns() - 2)  # as argparse does


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal's, else 80."""
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    """An argument parser whose sub-command parsers (of its class) format with
    ``_Formatter``."""

    def __init__(self, **options: Any) -> None:
        super().__init__(formatter_class=_Formatter, **options)

    def error(self, message: str) -> NoReturn:
        """The error first, on one line as every other error is, then where the help
        is: argparse would print the whole usage (a dozen lines) before it."""
        self.exit(2, f"{self.prog}: error: {message}\n{self.prog}: see '{self.prog} --help'\n")


#: The commands as ``spillguard --help`` lists them: each one's help, and what adds
#: its arguments.
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "scan": ("scan history, a tree, or plain files", _scan_arguments),
    "hook": ("what git hook scripts run", _hook_arguments),
    "install": ("write a git hook script that runs spillguard", _install_arguments),
    "uninstall": (
        "remove spillguard's hook scripts (and put back what they replaced)",
        _uninstall_arguments,
    ),
    "rules": ("list the effective rules", _rules_arguments),
    "sync": ("fetch rules and reviewed lines from the scanning app's REST API", _sync_arguments),
    "review": ("reviewed strings that are not reported", _review_arguments),
    "config": ("validate and show the configuration", _config_arguments),
    "audit": (
        "many repositories (a server's tree of bare repositories), incrementally",
        _audit_arguments,
    ),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, only that command takes arguments.

    argparse parses the arguments after a command with that command's parser alone,
    so the others need only their names and help: adding every command's arguments
    would cost each commit hook a few milliseconds.
    """
    parser: argparse.ArgumentParser = _Parser(
        prog="spillguard", description="Keep secrets out of Git repositories."
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (text, add_arguments) in _COMMANDS.items():
        subparser = commands.add_parser(name, help=text)
        if command in {None, name}:
            add_arguments(subparser)
    return parser


def _common(args: argparse.Namespace) -> CommonOptions:
    return CommonOptions(**{name: getattr(args, name) for name in CommonOptions.FIELDS})


def _sync(args: argparse.Namespace) -> SyncOptions:
    """The sync options, each field from the parsed argument of its name."""
    import dataclasses  # here: the hooks define no dataclass

    from spillguard.commands.setup_options import SyncOptions

    names = (field.name for field in dataclasses.fields(SyncOptions))
    return SyncOptions(**{name: getattr(args, name) for name in names})


def _review(args: argparse.Namespace) -> int:
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


def _config(args: argparse.Namespace) -> int:
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


def _install(args: argparse.Namespace) -> int:
    from spillguard.commands.install import run_install_command
    from spillguard.commands.setup_options import InstallOptions

    return run_install_command(InstallOptions(hook=args.hook, repo=args.repo, force=args.force))


def _uninstall(args: argparse.Namespace) -> int:
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


def _dispatch(args: argparse.Namespace) -> int:
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


def _bare_hook(given: Sequence[str]) -> argparse.Namespace | None:
    """``hook pre-commit`` or ``hook pre-receive`` and nothing more, as the hook scripts
    run them on every commit and push: what argparse would parse, every option at its
    default, without building a parser (a twentieth of a commit hook's start-up).
    Anything else is argparse's to parse."""
    if len(given) != 2 or given[0] != "hook" or given[1] not in _BARE_HOOKS:
        return None
    defaults = CommonOptions.__init__.__kwdefaults__ or {}
    return argparse.Namespace(version=None, command="hook", hook=given[1], **defaults)


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
    # The command, when it comes first (nothing but --version and --help may precede it).
    command = given[0] if given and given[0] in _COMMANDS else None
    args = _bare_hook(given) or build_parser(command).parse_args(given)
    with error_handler() as code:
        code.append(_dispatch(args))
    return code[-1]
