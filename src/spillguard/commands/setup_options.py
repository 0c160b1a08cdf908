"""The parsed command line of the commands that set spillguard up and look after it
(``install``, ``uninstall``, ``rules``, ``sync``, ``review``, ``config check``): one
frozen options object per command, built only by cli.py, and loaded only when one of
them runs (``options.py`` has the scanning commands' and the hooks').
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spillguard.commands.options import CommonOptions


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
