"""``spillguard rules``: the effective rules and where each came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spillguard.errors import ExitCode, UsageError
from spillguard.loading import load_config
from spillguard.output import open_output

if TYPE_CHECKING:
    from spillguard.cli import RulesOptions
    from spillguard.models import Rule


def rule_dict(rule: Rule) -> dict[str, object]:
    return {
        "name": rule.name,
        "kind": rule.kind,
        "enabled": rule.enabled,
        "blocking": rule.blocking,
        "source": rule.source,
    }


def run_rules_command(options: RulesOptions) -> int:
    common = options.common
    if common.format not in {"text", "json"}:
        raise UsageError(f"rules --format {common.format}: the rule list is text or json")
    from pathlib import Path

    from spillguard.git import config_root
    from spillguard.report.sanitize import clean_name

    # Resolved, as config check does: a rule's source reads the same in both.
    root = str(Path(config_root(options.repo)).resolve())
    config = load_config(root=root, config_path=common.config, offline=common.offline)
    rules = config.ruleset.rules
    with open_output(common.output) as stream:
        if common.format == "json":
            json.dump({"rules": [rule_dict(rule) for rule in rules]}, stream, indent=2)
            stream.write("\n")
            return ExitCode.CLEAN
        width = max(len(rule.name) for rule in rules)
        for rule in rules:
            state = "enabled " if rule.enabled else "disabled"
            block = "blocking" if rule.blocking else "warn    "
            source = clean_name(rule.source)  # a path: shown as config check shows it
            stream.write(f"{rule.name:<{width}}  {rule.kind:<7}  {state}  {block}  {source}\n")
    return ExitCode.CLEAN
