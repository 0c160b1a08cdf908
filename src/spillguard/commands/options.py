"""The parsed command line: one frozen options object per command, built only by cli.py.

They live below both ``cli.py`` (which fills them from argparse) and ``commands/``
(which takes them), so neither imports the other's module to name them.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CommonOptions:
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ScanOptions:
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HookOptions:
    """``spillguard hook KIND``: what git runs from a hook script."""

    common: CommonOptions
    kind: str
    #: pre-push: the remote's name and URL, as git passes them to the hook.
    remote: str | None = None
    url: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class InstallOptions:
    """``spillguard install``: which hook to write, where."""

    hook: str
    repo: str = "."
    force: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class UninstallOptions:
    """``spillguard uninstall``: which hooks to remove, where."""

    #: None: every spillguard hook of the repository.
    hook: str | None = None
    repo: str = "."


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RulesOptions:
    """``spillguard rules``: the effective rules of a repository."""

    common: CommonOptions
    repo: str = "."
    #: A line or token to judge: which rules match it, and why each is (not) reported.
    explain: str | None = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SyncOptions:
    """``spillguard sync``: the server to sync from, or a comparison with it."""

    config: str | None = None
    quiet: bool = False
    server: str | None = None
    variant: str | None = None
    project: str | None = None
    repo: str | None = None
    space: str | None = None
    ca_bundle: str | None = None
    xsrf_header: str | None = None
    timeout: float | None = None
    #: Set the server's own scan of a branch beside a local scan instead of syncing.
    compare: bool = False
    branch: str | None = None
    rev: str | None = None
    include_plaintext: bool = False

    def overrides(self) -> dict[str, object | None]:
        """The flags that override ``[sync]`` keys of the same name."""
        return {
            "server": self.server,
            "variant": self.variant,
            "project": self.project,
            "repo": self.repo,
            "space": self.space,
            "ca_bundle": self.ca_bundle,
            "xsrf_header": self.xsrf_header,
            "timeout": self.timeout,
        }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReviewOptions:
    """``spillguard review``: a reviewed string to add or remove, or the list."""

    action: str  # add, remove or list
    repo: str = "."
    text: str | None = None
    #: add: the finding at PATH:LINE or COMMIT:PATH:LINE, or with this fingerprint.
    at: str | None = None
    fingerprint: str | None = None
    rule: str | None = None
    reason: str = ""
    digest: str | None = None
    format: str = "text"
    output: str | None = None
    config: str | None = None
    remote: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ConfigCheckOptions:
    """``spillguard config check``: the layers to validate."""

    repo: str = "."
    config: str | None = None
    format: str = "text"
    output: str | None = None
    offline: bool = False
    include_allowlisted: bool = False
    #: Every rule in the text output, not only those changed from the defaults.
    all_rules: bool = False
