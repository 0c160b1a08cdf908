"""``scan --rule`` and ``--include-reviewed``: report filters, as the server's exports have.

``--rule`` keeps the findings of the named rules after each line was judged by all
of them (only the first matching rule reports a line), as the server's export
filters the findings it holds; a server rule name stands for its local rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spillguard.core.errors import UsageError
from spillguard.core.values import replace

if TYPE_CHECKING:
    from collections.abc import Callable

    from spillguard.commands.options import ScanOptions
    from spillguard.configuration.config import Config
    from spillguard.core.models import Finding, ScanResult


def with_reviewed(options: ScanOptions, config: Config) -> Config:
    if not options.include_reviewed:
        return config
    ruleset = replace(config.ruleset, include_reviewed=True)
    return replace(config, ruleset=ruleset)


def selected_rules(options: ScanOptions, config: Config) -> frozenset[str] | None:
    """The rules ``--rule`` names (comma-separated, repeatable); None: every rule."""
    from spillguard.configuration.rules.server_names import local_rules

    names = [name.strip() for given in options.rules for name in given.split(",")]
    if not any(names):
        return None
    known = {rule.name for rule in config.ruleset.rules}
    selected: set[str] = set()
    for name in filter(None, names):
        found = local_rules(name, known)
        if not found:
            raise UsageError(
                f"scan --rule {name}: no rule of that name (spillguard rules lists them)"
            )
        selected.update(found)
    return frozenset(selected)


def only(
    selected: frozenset[str] | None, on_finding: Callable[[Finding], None] | None
) -> Callable[[Finding], None] | None:
    """A streamed finding passed on only when its rule is selected."""
    if selected is None or on_finding is None:
        return on_finding
    sink = on_finding

    def forward(finding: Finding) -> None:
        if finding.rule in selected:
            sink(finding)

    return forward


def filtered(result: ScanResult, selected: frozenset[str] | None) -> ScanResult:
    if selected is None:
        return result
    kept = tuple(finding for finding in result.findings if finding.rule in selected)
    return replace(result, findings=kept)
