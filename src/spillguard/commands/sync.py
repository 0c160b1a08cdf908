"""``spillguard sync``: fetch the server's rules and reviewed lines into the local cache."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from spillguard.configuration.loading import load_config
from spillguard.configuration.rules import builtin_rules
from spillguard.configuration.sync_cache import cache_path, write_cache
from spillguard.core.errors import ExitCode
from spillguard.sync.fetch import fetch
from spillguard.sync.settings import merged_settings, target

if TYPE_CHECKING:
    from spillguard.commands.setup_options import SyncOptions


def _summary(data: dict[str, Any], origin: str) -> list[str]:
    rules = data["rules"]
    builtin = [rule for rule in rules if rule["kind"] == "builtin"]
    custom = [rule for rule in rules if rule["kind"] == "custom"]
    enabled = sum(rule["enabled"] for rule in builtin)
    scope = ", ".join(f"{key} {value}" for key, value in data["scope"].items())
    release = data["release_line"]
    where = f"{data['variant']}, {scope}" if scope else data["variant"]
    blocking = _yes_no(release["blocking"])
    counts = f"{len(builtin)} built-in ({enabled} enabled), {len(custom)} custom"
    lines = [
        f"synced from {data['server']} ({where}) as {origin}",
        f"  rules: {counts} (blocking field: {blocking})",
    ]
    if data["variant"] != "hosted":
        exports = ", ".join(data.get("reviewed_exports", ()))
        lines.append(
            f"  reviewed lines: {len(data['reviewed'])} "
            f"(ruleName: {_yes_no(release['review_rule_name'])}); exports read: {exports}"
        )
    else:
        lines.append("  reviewed lines: none (the hosted API offers no way to read them)")
    return lines


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def run_sync_command(options: SyncOptions) -> int:
    if options.compare:
        from spillguard.commands.sync_compare import run_compare

        return run_compare(options)
    config = load_config(root=".", config_path=options.config, offline=True)
    settings = merged_settings(config.sync, options.overrides())
    chosen = target(settings, os.environ)
    names = frozenset(rule.name for rule in builtin_rules())
    fetched = fetch(chosen.client, chosen.variant, chosen.scope, builtin_names=names)
    path = cache_path(".", os.environ)
    write_cache(path, fetched.data)
    if not options.quiet:
        for line in _summary(fetched.data, chosen.credentials_origin):
            print(line)
        print(f"  cache: {path}")
    for notice in fetched.notices:
        print(f"spillguard: {notice}", file=sys.stderr)
    return ExitCode.CLEAN
