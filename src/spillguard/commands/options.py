"""The parsed command line of the scanning commands and git's hooks: one immutable
options record per command, built only by cli.py.

They live below both ``cli.py`` (which fills them from argparse) and ``commands/``
(which takes them), so neither imports the other's module to name them. Plain
values (``core.values``), neither dataclasses nor ``NamedTuple``: each builds its
methods from source in every process that defines it, a commit hook's included. The
other commands' options are in ``setup_options.py``: a commit hook defines none of
their classes.
"""

from __future__ import annotations

from spillguard.core.values import Frozen, fill


class CommonOptions(Frozen):
    """The output and configuration options every scanning command takes."""

    __slots__ = (
        "color",
        "config",
        "config_from",
        "deduplicate",
        "format",
        "include_allowlisted",
        "include_plaintext",
        "offline",
        "output",
        "quiet",
    )

    format: str
    output: str | None
    config: str | None
    include_plaintext: bool
    include_allowlisted: bool
    color: str
    quiet: bool
    offline: bool
    #: Where the repository's files are read: None follows your file's ``config_from``.
    config_from: str | None
    #: None: follow the configuration's ``deduplicate_exports``.
    deduplicate: bool | None

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        format: str = "text",  # noqa: A002 - the option's name
        output: str | None = None,
        config: str | None = None,
        include_plaintext: bool = False,
        include_allowlisted: bool = False,
        color: str = "auto",
        quiet: bool = False,
        offline: bool = False,
        config_from: str | None = None,
        deduplicate: bool | None = None,
    ) -> None:
        fill(self, locals())


class ScanOptions(Frozen):
    """``spillguard scan``: what to scan and how to report it."""

    __slots__ = (
        "all_refs",
        "branches",
        "common",
        "files",
        "include_reviewed",
        "jobs",
        "merge_diffs",
        "repo",
        "revs",
        "rules",
        "since",
        "tree",
        "until",
    )

    common: CommonOptions
    repo: str
    revs: tuple[str, ...]
    tree: str | None
    files: tuple[str, ...]
    all_refs: bool
    branches: tuple[str, ...]
    since: str | None
    until: str | None
    #: Worker processes for history scans; None: one per CPU.
    jobs: int | None
    #: False: merges' own lines (their combined diffs) are not judged (``--no-merge-diffs``).
    merge_diffs: bool
    #: Report filters, as the server's exports have them: only these rules' findings
    #: (empty: every rule's), and reviewed findings too.
    rules: tuple[str, ...]
    include_reviewed: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        common: CommonOptions,
        repo: str = ".",
        revs: tuple[str, ...] = (),
        tree: str | None = None,
        files: tuple[str, ...] = (),
        all_refs: bool = False,
        branches: tuple[str, ...] = (),
        since: str | None = None,
        until: str | None = None,
        jobs: int | None = None,
        merge_diffs: bool = True,
        rules: tuple[str, ...] = (),
        include_reviewed: bool = False,
    ) -> None:
        fill(self, locals())


class HookOptions(Frozen):
    """``spillguard hook KIND``: what git runs from a hook script."""

    __slots__ = ("common", "kind", "remote", "url")

    common: CommonOptions
    kind: str
    #: pre-push: the remote's name and URL, as git passes them to the hook.
    remote: str | None
    url: str | None

    def __init__(
        self,
        *,
        common: CommonOptions,
        kind: str,
        remote: str | None = None,
        url: str | None = None,
    ) -> None:
        fill(self, locals())
