"""The command line's parser: argparse lives here and only here.

A hook script's ``hook pre-commit`` or ``hook pre-receive`` is read without it
(``cli``): importing argparse alone costs a hook 8.6 M instructions, a fifth of
Python's own start-up.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from spillguard.report import FORMATS

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn


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


def parse(given: Sequence[str]) -> argparse.Namespace:
    """The arguments, parsed by a parser built for the command given (when it comes
    first: nothing but --version and --help may precede it)."""
    command = given[0] if given and given[0] in _COMMANDS else None
    return build_parser(command).parse_args(given)
