"""The server app's own per-repository file, ``soteri-security.yml``, as a repository layer.

It holds five keys, with the meanings ``.spillguard.toml`` gives them:
``inherit_builtin_rules``, ``inherit_custom_rules``, ``rules``, ``custom_rules``
(a map of rule name to Java regexp) and ``allowlist_paths``. PyYAML parses it in
safe mode (plain data, no object construction from a repository's text), and is
imported only when such a file exists: a commit hook never pays for it otherwise.
Every error names the file and the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spillguard.configuration.config import SERVER_REPOSITORY_FILE, Layer, layer_from_table
from spillguard.core.errors import ConfigError
from spillguard.core.values import replace

if TYPE_CHECKING:
    import yaml

__all__ = ["SERVER_REPOSITORY_FILE", "load_server_yaml"]
#: The keys the server app reads from it.
KEYS = ("inherit_builtin_rules", "inherit_custom_rules", "rules", "custom_rules", "allowlist_paths")


def load_server_yaml(text: str, *, source: str) -> Layer:
    """The file as a repository layer; each key is validated at its own line."""
    node = _compose(text, source)
    data: dict[str, Any] = {}
    custom: dict[str, Any] = {}
    for key_node, value_node in node.value if node is not None else ():
        key = _scalar(key_node, source)
        where = f"{source}:{key_node.start_mark.line + 1}"
        if key not in KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(KEYS)})")
        if key == "custom_rules":
            custom.update(_custom_rules(value_node, source))
        else:
            data.update(
                layer_from_table(
                    {key: _value(value_node, source)}, source=where, role="repository"
                ).data
            )
    data["custom_rules"] = custom
    return Layer(role="repository", source=source, data=data)


def _custom_rules(node: yaml.Node, source: str) -> dict[str, Any]:
    """Each rule compiled and checked at its own line; the rule's source is the file."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        line = node.start_mark.line + 1
        raise ConfigError(f"{source}:{line}: custom_rules must be a map of NAME: regexp")
    rules: dict[str, Any] = {}
    for name_node, pattern_node in node.value:
        name = _scalar(name_node, source)
        where = f"{source}:{name_node.start_mark.line + 1}"
        pattern = _value(pattern_node, source)
        if not isinstance(pattern, str):
            raise ConfigError(f"{where}: custom rule {name} must be a regexp string")
        layer = layer_from_table({"custom_rules": {name: pattern}}, source=where, role="repository")
        rules[name] = replace(layer.data["custom_rules"][name], source=source)
    return rules


def _compose(text: str, source: str) -> yaml.MappingNode | None:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = source if mark is None else f"{source}:{mark.line + 1}"
        raise ConfigError(f"{where}: invalid YAML: {error.problem}") from None
    except yaml.YAMLError as error:  # a reader error: a control character, say
        raise ConfigError(f"{source}: invalid YAML: {error}") from None
    if node is None:  # an empty file (or comments only) sets nothing
        return None
    if not isinstance(node, yaml.MappingNode):
        line = node.start_mark.line + 1
        raise ConfigError(f"{source}:{line}: the file must be a map of settings")
    return node


def _scalar(node: yaml.Node, source: str) -> str:
    value = _value(node, source)
    if not isinstance(value, str):
        line = node.start_mark.line + 1
        raise ConfigError(f"{source}:{line}: a key must be a string, not {value!r}")
    return value


def _value(node: yaml.Node, source: str) -> Any:
    """A node as plain data (strings, numbers, booleans, lists, maps), safe mode."""
    import yaml

    try:
        return yaml.SafeLoader("").construct_object(node, deep=True)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or node.start_mark
        raise ConfigError(f"{source}:{mark.line + 1}: invalid YAML: {error.problem}") from None
