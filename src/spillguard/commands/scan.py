"""``spillguard scan``: history, one tree, or plain files."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

from spillguard.core.errors import UsageError
from spillguard.core.values import replace

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import TextIO

    from spillguard.commands.options import CommonOptions, ScanOptions
    from spillguard.configuration.config import Config
    from spillguard.core.models import Finding, ScanResult, Selection
    from spillguard.report import ReportOptions
    from spillguard.scanning.progress import Progress
    from spillguard.sources.listing import Listing


def _check_selection(options: ScanOptions) -> None:
    history = options.revs or options.all_refs or options.branches or options.since or options.until
    if history and (options.files or options.tree is not None):
        raise UsageError(
            "REV, --all, --branch, --since and --until select history, not --tree/--files"
        )


def _selection(options: ScanOptions) -> Selection:
    from spillguard.core.dates import parse_instant
    from spillguard.core.models import Selection

    since = None if options.since is None else parse_instant(options.since, "--since")
    until = None if options.until is None else parse_instant(options.until, "--until")
    if since is not None and until is not None and until <= since:
        raise UsageError(
            f"--until {options.until} is not after --since {options.since}: "
            "no commit can be in between"
        )
    return Selection(
        revs=options.revs,
        all_refs=options.all_refs,
        branches=options.branches,
        since=since,
        until=until,
    )


def _start_listing(options: ScanOptions) -> Listing | None:
    """For a history scan with git installed: git begins listing the selected commits."""
    import shutil

    if options.files or options.tree is not None or shutil.which("git") is None:
        return None
    from spillguard.sources.listing import Listing

    return Listing(options.repo, _selection(options))


def _selected_commits(options: ScanOptions, listing: Listing | None) -> tuple[str, list[str]]:
    """The repository and the selected commits' ids, children first.

    Resolved before any scanning, so a bad revision fails first: as git lists them,
    or, without git, by a libgit2 walk. libgit2's memory is bounded for the walk and
    for the workers, which inherit the bound, as they inherit malloc's return of
    freed memory (``core.allocator``).
    """
    from spillguard import git
    from spillguard.core.allocator import return_freed_memory

    return_freed_memory()
    git.bound_pack_memory()
    if listing is not None:
        from spillguard.sources.gitcli import git_dir_of

        ids = listing.ids()  # a bad revision fails first
        return git_dir_of(options.repo), ids  # git in every worker reads this directory
    from spillguard.sources.history import select_commits

    repo = git.open_repository(options.repo)
    return repo.path, [str(commit.id) for commit in select_commits(repo, _selection(options))]


def _scan(  # noqa: PLR0913, PLR0917 - the parts of one scan, each from its own place
    options: ScanOptions,
    config: Config,
    root: str,
    progress: Progress | None,
    on_finding: Callable[[Finding], None] | None,
    listing: Listing | None,
) -> ScanResult:
    _check_selection(options)
    if options.files:
        return _scan_files(options, config, root, on_finding, progress)
    if options.tree is not None:
        return _scan_tree(options, config, options.tree, on_finding, progress)
    if _nothing_to_scan(options):
        from spillguard.core.models import ScanResult

        return ScanResult(notices=(*config.notices, NOTHING_TO_SCAN))
    from spillguard.sources.messages import selected_tags, tag_messages

    tags = tag_messages(options.repo, selected_tags(options.repo, _selection(options)))
    from spillguard.scanning.parallel import default_jobs, scan_commits

    repo_path, commits = _selected_commits(options, listing)
    return scan_commits(
        repo_path,
        commits,
        config.ruleset,
        max_size=config.max_file_size,
        jobs=options.jobs or default_jobs(),
        on_finding=on_finding,
        notices=(*config.notices, *_shallow(options.repo)),
        progress=progress,
        extra=tags,
        merge_diffs=options.merge_diffs,
    )


#: The note a history scan of a repository without commits ends with (exit 0: CI
#: runs the scan on a repository's very first push, too).
NOTHING_TO_SCAN = "nothing to scan: the repository has no commits yet"
#: The note a history scan of a shallow clone ends with: what it could not judge.
SHALLOW = (
    "note: a shallow clone: the commits before its oldest ones are missing and were not "
    "scanned, and each oldest one is judged as adding every file it has (git fetch "
    "--unshallow, or a CI checkout of the whole history, scans it all)"
)


def _git_answers(repo: str, *args: str) -> str | None:
    """What git prints for ``args`` in ``repo``, or None when it fails or is not
    installed (the scan's own reader then says what it can read)."""
    from spillguard.sources.gitcli import run_git

    told = run_git("-C", repo, *args)
    return None if told is None else told.decode(errors="replace")


def _nothing_to_scan(options: ScanOptions) -> bool:
    """A scan of HEAD (the default) or of every ref in a repository without a commit."""
    if options.branches or not (options.all_refs or options.revs in {(), ("HEAD",), ("@",)}):
        return False
    if _git_answers(options.repo, "rev-parse", "--git-dir") is None:
        return False
    if options.all_refs:  # git listed no ref at all (a failure is the scan's to report)
        return _git_answers(options.repo, "for-each-ref", "--count=1") == ""
    return _git_answers(options.repo, "rev-parse", "--verify", "-q", "HEAD") is None


def _shallow(repo: str) -> tuple[str, ...]:
    """The shallow clone's note, for a history scan of one."""
    shallow = _git_answers(repo, "rev-parse", "--is-shallow-repository")
    return (SHALLOW,) if shallow is not None and shallow.strip() == "true" else ()


def _scan_files(
    options: ScanOptions,
    config: Config,
    root: str,
    on_finding: Callable[[Finding], None] | None,
    progress: Progress | None,
) -> ScanResult:
    """``--files``: ``root`` is where the configuration was found, and files are named
    from it, so its allowlist_paths apply."""
    from spillguard.scanning.parallel import default_jobs, file_items, scan_listed
    from spillguard.sources.files import list_files

    return scan_listed(
        list_files(options.files, root=root),
        file_items(config.max_file_size),
        config.ruleset,
        jobs=options.jobs or default_jobs(),
        on_finding=on_finding,
        notices=config.notices,
        progress=progress,
    )


def _scan_tree(
    options: ScanOptions,
    config: Config,
    rev: str,
    on_finding: Callable[[Finding], None] | None,
    progress: Progress | None,
) -> ScanResult:
    """``--tree REV``: every file of that tree, listed here by git, read by the workers."""
    from spillguard.scanning.parallel import default_jobs, scan_listed, tree_items
    from spillguard.sources.tree import list_tree

    git_dir, files = list_tree(options.repo, rev)
    return scan_listed(
        files,
        tree_items(git_dir, config.max_file_size),
        config.ruleset,
        jobs=options.jobs or default_jobs(),
        on_finding=on_finding,
        notices=config.notices,
        progress=progress,
    )


def report_options(
    common: CommonOptions, config: Config, stream: TextIO, *, repository: str | None = None
) -> ReportOptions:
    """How to write the report: the command line first, then the configuration.

    ``include_plaintext_in_exports`` and ``deduplicate_exports`` are the server's
    export settings, so they govern the CSV export only.
    """
    export = common.format == "csv"
    dedupe = common.deduplicate
    from spillguard.report import ReportOptions
    from spillguard.report.color import use_color

    return ReportOptions(
        plaintext=common.include_plaintext or (export and config.include_plaintext_in_exports),
        color=common.format == "text" and use_color(common.color, stream),
        quiet=common.quiet,
        deduplicate=config.deduplicate_exports if dedupe is None else dedupe,
        rules=config.ruleset.rules,
        project=config.sync.get("project") or config.sync.get("space"),
        repository=config.sync.get("repo") or repository,
        command=command_here(os.environ),
    )


def command_here(environ: Mapping[str, str]) -> str:
    """How the person reading this report runs spillguard: ``spillguard``, except from a
    hook of the pre-commit framework, which installs spillguard in an environment of
    its own, off the user's PATH: there, that environment's interpreter."""
    if environ.get("PRE_COMMIT") == "1":  # set by the framework for every hook it runs
        import shlex

        return f"{shlex.quote(sys.executable)} -m spillguard"
    return "spillguard"


def _repository_name(options: ScanOptions) -> str | None:
    """The scanned repository's directory name, for exports that have no synced slug."""
    if options.files:
        return None
    path = Path(options.repo).resolve()
    return path.name.removesuffix(".git") or None


def scan_for(options: ScanOptions, config: Config, root: str) -> ScanResult:
    """A scan's result, with no report and no progress line (``sync --compare``)."""
    listing = _start_listing(options)
    try:
        return _scan(options, config, root, None, None, listing)
    finally:
        if listing is not None:
            listing.close()


def run_scan_command(options: ScanOptions) -> int:
    listing = _start_listing(options)  # git lists commits while libgit2 and the config load
    try:
        return _run_scan(options, listing)
    finally:
        if listing is not None:
            listing.close()


def _config(options: ScanOptions, root: str) -> Config:
    """The configuration of the scan; a bare repository (a server's) is judged as its
    pre-receive hook judges a push, with the administrator's files and reviewed entries."""
    from spillguard.configuration.loading import is_bare_directory, load_bare_config, load_config

    common = options.common
    if is_bare_directory(root):
        config = load_bare_config(root, common.config)
        if not common.include_allowlisted:
            return config
        ruleset = replace(config.ruleset, include_allowlisted=True)
        return replace(config, ruleset=ruleset)
    return load_config(
        root=root,
        config_path=common.config,
        include_allowlisted=common.include_allowlisted,
        offline=common.offline,
        config_from=common.config_from,
    )


def _run_scan(options: ScanOptions, listing: Listing | None) -> int:
    from spillguard.core.outcome import exit_code, local_unscannable
    from spillguard.core.output import is_terminal, open_output
    from spillguard.report import streaming_writer, writer

    common = options.common
    from spillguard.git import config_root

    # --files reads the .spillguard.toml and reviewed file of --repo (default: the
    # current directory, or the top of its work tree), as gitleaks reads its file
    # beside what it scans.
    root = config_root(options.repo)
    config = _config(options, root)
    from spillguard.commands.scan_filters import filtered, only, selected_rules, with_reviewed

    config = with_reviewed(options, config)
    selected = selected_rules(options, config)
    with open_output(common.output) as stream:
        report = report_options(common, config, stream, repository=_repository_name(options))
        stream_finding = streaming_writer(common.format)
        # Findings streamed to the terminal that shows the progress line would tangle with it.
        shared_terminal = stream_finding is not None and is_terminal(stream)
        from spillguard.scanning.progress import NullProgress, progress_for

        progress = progress_for(sys.stderr, quiet=common.quiet or shared_terminal)
        on_finding = (
            None
            if stream_finding is None
            else partial(stream_finding, stream=stream, options=report)
        )
        shown = None if isinstance(progress, NullProgress) else progress
        result = _scan(options, config, root, shown, only(selected, on_finding), listing)
        result = local_unscannable(filtered(result, selected), config.on_unscannable)
        if stream_finding is None:
            writer(common.format)(result, stream, report)
    if common.format != "text" and not common.quiet:
        # The report has the stream it was given; the human summary goes to stderr.
        from spillguard.report.text_report import summary_lines

        for line in summary_lines(result):
            print(line, file=sys.stderr)
    return exit_code(result)
