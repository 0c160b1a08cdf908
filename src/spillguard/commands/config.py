"""``spillguard config check``: validate every layer, print what they resolve to.

A broken file fails here exactly as it would fail a hook (exit 2, one line naming
the file, key or rule), so ``config check`` is the way to try a change first.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spillguard.commands.rules import rule_dict
from spillguard.configuration.config import REPOSITORY_FILE, SERVER_REPOSITORY_FILE
from spillguard.configuration.loading import (
    SERVER_FILE,
    default_branch_file,
    load_config,
    load_server_config,
    user_config_path,
)
from spillguard.configuration.reviewed import REVIEWED_FILE
from spillguard.core.errors import ExitCode, UsageError
from spillguard.core.output import open_output

if TYPE_CHECKING:
    from typing import TextIO

    from spillguard.commands.setup_options import ConfigCheckOptions
    from spillguard.configuration.config import Config
    from spillguard.core.models import Rule


def run_config_check(options: ConfigCheckOptions) -> int:
    from spillguard.git import work_tree_root

    if not Path(options.repo).is_dir():
        raise UsageError(f"--repo {options.repo}: not a directory")
    bare = _is_bare(options.repo)
    root = options.repo if bare else (work_tree_root(options.repo) or options.repo)
    root = str(Path(root).resolve())
    config = _load(options, root, bare=bare)
    document = check_document(config)
    document["searched"] = _searched(options, root, bare=bare)
    document["layers"] = _in_order(document["layers"], document["searched"])
    with open_output(options.output) as stream:
        if options.format == "json":
            import json

            json.dump(document, stream, indent=2)
            stream.write("\n")
        else:
            _write_text(config, document, stream, all_rules=options.all_rules)
    return ExitCode.CLEAN


def _searched(options: ConfigCheckOptions, root: str, *, bare: bool) -> list[dict[str, Any]]:
    """The files looked for, found or not, so a misplaced file is easy to spot."""
    candidates: list[tuple[str, Path]] = []
    if options.config is None:
        candidates.append(
            ("global", Path(root, SERVER_FILE) if bare else user_config_path(os.environ))
        )
    if not bare:
        candidates += [
            ("repository", Path(root, REPOSITORY_FILE)),
            ("repository", Path(root, SERVER_REPOSITORY_FILE)),
            ("reviewed", Path(root, REVIEWED_FILE)),
        ]
    return [{"role": role, "path": str(path), "found": path.is_file()} for role, path in candidates]


#: Where each kind of layer applies, lowest first; the reviewed entries come with the
#: repository's files, the command line's flags last.
_LAYER_ORDER = ("builtin", "global", "server", "repository", "reviewed", "flags")


def _in_order(layers: list[dict[str, Any]], searched: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The layers applied and the files looked for but not found (or found but not
    a layer, as the reviewed file), each in its place, lowest first."""
    roles = {layer["role"] for layer in layers}
    looked_for = [
        {"role": item["role"], "source": item["path"], "found": item["found"]}
        for item in searched
        if item["role"] not in roles
    ]
    rank = {role: index for index, role in enumerate(_LAYER_ORDER)}
    return sorted([*layers, *looked_for], key=lambda layer: rank.get(layer["role"], 0))


def _is_bare(repo: str) -> bool:
    path = Path(repo)
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _load(options: ConfigCheckOptions, root: str, *, bare: bool) -> Config:
    if bare:
        # What the next push would be judged by: the files on the default branch.
        from spillguard.git import open_repository

        repo = open_repository(root)
        return load_server_config(
            repo_dir=root,
            config_path=options.config,
            read_file=partial(default_branch_file, repo),
        )
    return load_config(
        root=root,
        config_path=options.config,
        include_allowlisted=options.include_allowlisted,
        offline=options.offline,
        config_from="work-tree",  # it checks the files you are editing
    )


def settings_with_sources(config: Config) -> dict[str, tuple[Any, str]]:
    """Every setting, tables flattened to dotted keys, with the layer that set it last."""
    sources = dict(config.origins)  # later origins overwrite earlier ones
    flat: dict[str, tuple[Any, str]] = {}
    for name, value in config.settings.items():
        if isinstance(value, dict):
            for key, item in value.items():
                dotted = f"{name}.{key}"
                flat[dotted] = (item, sources.get(dotted, "default"))
        else:
            flat[name] = (value, sources.get(name, "default"))
    return flat


def check_document(config: Config) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for entry in config.ruleset.reviewed:
        counts[entry.source] = counts.get(entry.source, 0) + 1
    return {
        "layers": [
            {"role": role, "source": source, "found": True} for role, source in config.layers
        ],
        "rules": [rule_dict(rule) for rule in config.ruleset.rules],
        "settings": {
            name: {"value": value, "source": source}
            for name, (value, source) in settings_with_sources(config).items()
        },
        "allowlist_paths": [pattern.pattern for pattern in config.ruleset.allowlist_paths],
        "locked_rules": sorted(config.locked_rules),
        "reviewed": [{"source": source, "entries": count} for source, count in counts.items()],
        "notices": list(config.notices),
        "differences": _differences(config),
    }


def _differences(config: Config) -> list[dict[str, str]]:
    """The custom rules that reach a known difference from the server's Java 8."""
    if not any(rule.kind == "custom" for rule in config.ruleset.rules):
        return []
    from spillguard.detection.javaregex import differences

    return [
        {"rule": rule.name, "difference": difference}
        for rule in config.ruleset.rules
        if rule.kind == "custom"
        for difference in differences(rule.regexp)
    ]


def _rule_lines(config: Config, *, all_rules: bool) -> list[str]:
    """A count of the rules, and a line for each one not as built in (a custom rule,
    one disabled, warn-only or locked); ``all_rules``: a line for every rule."""
    rules = config.ruleset.rules
    enabled = sum(rule.enabled for rule in rules)
    custom = sum(rule.kind == "custom" for rule in rules)
    warn = sum(rule.enabled and not rule.blocking for rule in rules)
    counts = (
        f"rules: {len(rules)} ({len(rules) - custom} built-in, {custom} custom): {enabled} "
        f"enabled, {len(rules) - enabled} disabled, {warn} warn-only, "
        f"{len(config.locked_rules)} locked"
    )
    from spillguard.configuration.rules import builtin_rules

    defaults = {known.name: (known.enabled, known.blocking) for known in builtin_rules()}
    shown = [rule for rule in rules if all_rules or _changed(rule, config, defaults)]
    if not shown:
        return [counts, "  (--rules lists every rule)"]
    what = "every rule:" if all_rules else "changed from the defaults (--rules lists every rule):"
    lines = [counts, f"  {what}"]
    width = max(len(rule.name) for rule in shown)
    for rule in shown:
        state = ("enabled " if rule.enabled else "disabled") + (
            "  blocking" if rule.blocking else "  warn    "
        )
        locked = "  locked" if rule.name in config.locked_rules else ""
        lines.append(f"  {rule.name:<{width}}  {rule.kind:<7}  {state}  {rule.source}{locked}")
    return lines


def _changed(rule: Rule, config: Config, defaults: dict[str, tuple[bool, bool]]) -> bool:
    return (
        defaults.get(rule.name) != (rule.enabled, rule.blocking)
        or rule.kind != "builtin"
        or rule.name in config.locked_rules
    )


def _write_text(
    config: Config, document: dict[str, Any], stream: TextIO, *, all_rules: bool = False
) -> None:
    import json

    from spillguard.report.sanitize import clean_name

    lines = ["layers (lowest first):"]
    lines += [
        f"  {layer['role']:<10}  {layer['source']}{'' if layer['found'] else ' (not found)'}"
        for layer in document["layers"]
    ]
    lines += _rule_lines(config, all_rules=all_rules)
    lines.append("settings:")
    for name, item in document["settings"].items():
        lines.append(f"  {name} = {json.dumps(item['value'])}  ({item['source']})")
    lines += [f"allowlist_paths: {pattern}" for pattern in document["allowlist_paths"]]
    lines += [f"reviewed: {item['entries']} from {item['source']}" for item in document["reviewed"]]
    lines += [f"notice: {notice}" for notice in config.notices]
    lines += [
        f"difference: custom rule {item['rule']}: {item['difference']} "
        "(docs/configuration.md#known-differences-from-javas-regular-expressions)"
        for item in document["differences"]
    ]
    lines.append("configuration OK")
    # clean_name: a tab in a file's path shows as \x09, as in scan reports.
    stream.writelines(clean_name(line) + "\n" for line in lines)
