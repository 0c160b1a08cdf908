"""``spillguard rules``: the effective rules, where each came from, and the server's view."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import TYPE_CHECKING, Any

from spillguard.configuration.loading import load_config
from spillguard.core.errors import ConfigError, ExitCode
from spillguard.core.output import open_output

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.commands.options import CommonOptions
    from spillguard.commands.setup_options import RulesOptions
    from spillguard.core.models import Rule, RuleSet


@dataclasses.dataclass(frozen=True, slots=True)
class ServerView:
    """What the sync cache says: the server rule behind each local rule, and the rest."""

    #: Local rule name -> (server rule name, the server's state).
    states: dict[str, tuple[str, bool]] = dataclasses.field(default_factory=dict)
    #: Server rules no local rule stands for: name, kind, enabled, reason.
    missing: tuple[dict[str, Any], ...] = ()
    synced: bool = False


def rule_dict(rule: Rule) -> dict[str, object]:
    return {
        "name": rule.name,
        "kind": rule.kind,
        "enabled": rule.enabled,
        "blocking": rule.blocking,
        "source": rule.source,
        "description": rule.description,
    }


def _with_server(rule: Rule, view: ServerView) -> dict[str, object]:
    found = view.states.get(rule.name)
    # The server rule this one stands for and its state there (null: none, or no sync).
    server = {"server_rule": found[0], "server_enabled": found[1]} if found else {}
    return {**rule_dict(rule), "server_rule": None, "server_enabled": None, **server}


def server_view(root: str, *, offline: bool) -> ServerView:
    """The sync cache's server rules as they map here; empty without a usable cache."""
    from spillguard.configuration.fidelity import server_states, unreproduced
    from spillguard.configuration.rules import builtin_rules
    from spillguard.configuration.sync_cache import cache_path, read_cache_data

    path = cache_path(root, os.environ)
    if offline or not path.is_file():
        return ServerView()
    try:
        data = read_cache_data(path)
        names = frozenset(rule.name for rule in builtin_rules())
        return ServerView(
            states=server_states(data, names),
            missing=tuple(unreproduced(data, names)),
            synced=True,
        )
    except (ConfigError, KeyError, TypeError, AttributeError):
        return ServerView()  # the scan's own notice says the cache is ignored


def _server_column(rule: Rule, view: ServerView) -> str:
    from spillguard.report.sanitize import clean_name

    if not view.synced:
        return ""
    found = view.states.get(rule.name)
    if found is None:
        return "  server: -" if rule.kind == "custom" else "  server: not listed"
    # The server's own spelling of the rule: server text, never a terminal's command.
    return f"  server: {clean_name(found[0])} ({'enabled' if found[1] else 'disabled'})"


def _write_text(stream: TextIO, rules: tuple[Rule, ...], view: ServerView) -> None:
    from spillguard.report.sanitize import clean, clean_name

    width = max(len("RULE"), *(len(rule.name) for rule in rules))
    sources = [clean_name(rule.source) for rule in rules]  # paths, as config check shows them
    source_width = max(len("SOURCE"), *(len(source) for source in sources))
    server = "  SERVER" if view.synced else ""
    header = f"{'RULE':<{width}}  KIND     STATE     MODE      {'SOURCE':<{source_width}}"
    stream.write(f"{header}{server}  DESCRIPTION\n")
    for rule, source in zip(rules, sources, strict=True):
        state = "enabled " if rule.enabled else "disabled"
        block = "blocking" if rule.blocking else "warn    "
        line = f"{rule.name:<{width}}  {rule.kind:<7}  {state}  {block}  {source:<{source_width}}"
        described = f"  {clean(rule.description)}" if rule.description else ""
        stream.write(f"{line}{_server_column(rule, view)}{described}".rstrip() + "\n")
    if view.missing:
        stream.write("\nserver rules not applied here (no local rule stands for them):\n")
    for item in view.missing:
        state = "enabled" if item["enabled"] else "disabled"
        reason = clean(str(item["reason"]))
        stream.write(f"  {clean_name(item['name'])}  {item['kind']}  {state}  {reason}\n")


def run_rules_command(options: RulesOptions) -> int:
    common = options.common
    from pathlib import Path

    from spillguard.git import config_root

    # Resolved, as config check does: a rule's source reads the same in both.
    root = str(Path(config_root(options.repo)).resolve())
    config = load_config(
        root=root,
        config_path=common.config,
        offline=common.offline,
        config_from=common.config_from,
    )
    if options.explain is not None:
        return _explain(options.explain, config.ruleset, common)
    rules = config.ruleset.rules
    view = server_view(root, offline=common.offline)
    with open_output(common.output) as stream:
        if common.format == "json":
            report = {
                "rules": [_with_server(rule, view) for rule in rules],
                "server_rules_not_applied": list(view.missing),
            }
            json.dump(report, stream, indent=2)
            stream.write("\n")
            return ExitCode.CLEAN
        _write_text(stream, rules, view)
    return ExitCode.CLEAN


def _explain(given: str, ruleset: RuleSet, common: CommonOptions) -> int:
    """``rules --explain``: the rules whose pattern matches the text, each with why its
    match is or is not reported; the text itself is never printed (it may be a secret)."""
    import sys

    from spillguard.detection.engine import Scanner

    text = sys.stdin.read() if given == "-" else given
    lines = [line for line in text.splitlines() if line.strip()] or [""]
    scanner = Scanner(ruleset)
    verdicts = [verdict for line in lines for verdict in scanner.explain(line)]
    with open_output(common.output) as stream:
        if common.format == "json":
            entries = [
                {"rule": rule, "reported": reason is None, "reason": reason}
                for rule, reason in verdicts
            ]
            json.dump({"explain": entries}, stream, indent=2)
            stream.write("\n")
            return ExitCode.CLEAN
        if not verdicts:
            stream.write("no rule matches this text\n")
        for rule, reason in verdicts:
            stream.write(
                f"{rule}: reported\n" if reason is None else f"{rule}: not reported: {reason}\n"
            )
    return ExitCode.CLEAN
