"""The parsed command line of the scanning commands and git's hooks: one immutable
options record per command, built only by cli.py.

They live below both ``cli.py`` (which fills them from argparse) and ``commands/``
(which takes them), so neither imports the other's module to name them. Records
(``NamedTuple``), not dataclasses: a frozen dataclass compiles six methods in every
process that defines it, a commit hook's included. The other commands' options are
in ``setup_options.py``: a commit hook defines none of their classes.
"""

from __future__ import annotations

from typing import NamedTuple


class CommonOptions(NamedTuple):
    """The output and configuration options every scanning command takes."""

    format: str = "text"
    output: str | None = None
    config: str | None = None
    include_plaintext: bool = False
    include_allowlisted: bool = False
    color: str = "auto"
    quiet: bool = False
    offline: bool = False
    #: Where the repository's files are read: None follows your file's ``config_from``.
    config_from: str | None = None
    #: None: follow the configuration's ``deduplicate_exports``.
    deduplicate: bool | None = None


class ScanOptions(NamedTuple):
    """``spillguard scan``: what to scan and how to report it."""

    common: CommonOptions
    repo: str = "."
    revs: tuple[str, ...] = ()
    tree: str | None = None
    files: tuple[str, ...] = ()
    all_refs: bool = False
    branches: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    #: Worker processes for history scans; None: one per CPU.
    jobs: int | None = None
    #: False: merges' own lines (their combined diffs) are not judged (``--no-merge-diffs``).
    merge_diffs: bool = True
    #: Report filters, as the server's exports have them: only these rules' findings
    #: (empty: every rule's), and reviewed findings too.
    rules: tuple[str, ...] = ()
    include_reviewed: bool = False


class HookOptions(NamedTuple):
    """``spillguard hook KIND``: what git runs from a hook script."""

    common: CommonOptions
    kind: str
    #: pre-push: the remote's name and URL, as git passes them to the hook.
    remote: str | None = None
    url: str | None = None
