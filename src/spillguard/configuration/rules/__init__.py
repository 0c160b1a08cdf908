"""The built-in rules, shipped as package data TOML and checked like any configuration."""

from __future__ import annotations

import binascii
import functools
import marshal
import os
import sys
from pathlib import Path

from spillguard.configuration import schema
from spillguard.configuration.config import parse_toml
from spillguard.core.errors import ConfigError
from spillguard.core.models import Rule, rule_from_fields
from spillguard.detection.checksums import CHECKS

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: The built-in rule files in judging order (the first rule that matches a line is
#: the one reported): provider token shapes first, then the long tail of services,
#: then credentials recognised by where they stand (URLs, command lines, files,
#: frameworks), and last the rules that judge a value by the name it is assigned to.
#: Separate files so that rules can be added to each without touching the others.
BUILTIN_FILES = ("builtin.toml", "services.toml", "credentials.toml", "generic.toml")
_FLOAT = ((int, float), "a number")
#: The keys of a rule's examples, proven by the test suite and never read by a scan.
_EXAMPLES = ("tp", "fp", "example_path")

BUILTIN_RULE: dict[str, schema.Key] = {
    "name": schema.Key(str, "an UPPER_SNAKE_CASE name"),
    "description": schema.Key(str, "a string", ""),
    "regexp": schema.Key(str, "a regular expression"),
    # Or, for the common "NAME = value" shape: a regex of the names around the
    # assignment and one of the value; the loader joins them (ASSIGNMENT).
    "context": schema.Key(str, "a regular expression of names"),
    "value": schema.Key(str, "a regular expression of the secret value"),
    "keywords": schema.Key(list, "a list of strings", (), item=str),
    "enabled": schema.Key(bool, "true or false", True),
    "secret_group": schema.Key(str, "a group name"),
    "min_entropy": schema.Key(*_FLOAT, 0.0),
    "stopwords": schema.Key(list, "a list of strings", (), item=str),
    "allow": schema.Key(list, "a list of regular expressions", (), item=str),
    "value_filter": schema.Key(
        str,
        '"password", "reference", "generated", "argument" or "shape"',
        None,
        ("password", "reference", "generated", "argument", "shape"),
    ),
    "lookahead": schema.Key(bool, "true or false", False),
    "requires": schema.Key(list, "a list of strings", (), item=str),
    "path": schema.Key(str, "a regular expression of file paths"),
    "previous_line": schema.Key(str, "a regular expression of the line before"),
    "previous_lines": schema.Key(int, "a number of lines", 1, minimum=1),
    "checksum": schema.Key(str, f"one of {', '.join(CHECKS)}", None, tuple(CHECKS)),
    "blocking": schema.Key(bool, "true or false", True),
    # The path its examples are judged at: a rule with ``path`` speaks only there.
    "example_path": schema.Key(str, "a file path"),
    # The line of a tp example its finding is on (a rule reading the line before).
    "example_line": schema.Key(int, "a line number", 1, minimum=1),
    # Examples proven by the test suite; ``{rand:CHARSET:N}`` is expanded at test time.
    "tp": schema.Key(list, "a list of strings", (), item=str),
    "fp": schema.Key(list, "a list of strings", (), item=str),
}


#: How a ``context``/``value`` rule is spelled out: the context word, up to 30
#: more name characters, an assignment operator of some language or format (with a
#: type annotation, ``name: &str =``; Kotlin's ``"name" to "value"``), an optional
#: quote, then the value, which must end at a delimiter. Quotes may be escaped
#: (``os.environ[\"NAME\"] = \"value\"`` in a notebook's JSON) or close a subscript
#: (``$config['name'] =``).
ASSIGNMENT = (
    r"(?i)(?:{context})[ \t\w.-]{{0,30}}?[\s'\"\\\]]{{0,4}}"
    r"(?:=|>|:{{1,3}}=|\|\||:|=>|\?=|,|to(?=\s)|:\s*&?[a-z_][\w.<>\[\]]*\s*=)"
    r"[\x60'\"\s=\\]{{0,6}}(?P<secret>{value})(?=[\x60'\"\s;,)\]}}<]|\\[nr\"']|$)"
)


def builtin_table(*, examples: bool = True) -> list[dict[str, Any]]:
    """The raw rule tables of the built-in files in order, each checked; their ``tp``
    and ``fp`` examples too unless ``examples`` is false (a scan never reads them, and
    they are half the cache a commit hook would load).

    Parsing and checking the TOML costs a commit hook ~13 ms. A copy of the checked
    tables, kept like Python's own bytecode (marshal, in this package's
    ``__pycache__``, named by the interpreter and every TOML file's size and
    modification time, as a ``.pyc`` is checked against its source), loads in a
    fraction of a millisecond; where that folder is not writable, the TOML is parsed
    and checked each time.
    """
    return rule_tables(builtin_sources(), examples=examples)


def rule_tables(sources: Sequence[Path], *, examples: bool = True) -> list[dict[str, Any]]:
    """``builtin_table`` of built-in rules files at ``sources``, in their order."""
    cached = _cache_path(f"rules{'' if examples else '-scan'}", sources)
    rules = _kept(cached)
    if rules is not None:
        return rules
    rules = []
    for source in sources:
        table = parse_toml(source.read_text(encoding="utf-8"), source.name)
        for spec in table.get("rules", []):
            schema.check_table(spec, BUILTIN_RULE, f"{source.name}: rule {spec.get('name', '?')}")
            rules.append(spec if examples else _without_examples(spec))
    _keep(cached, rules)
    return rules


def _cache_path(kind: str, sources: Sequence[Path]) -> Path:
    """One cache for all the files, named by the interpreter and by a CRC-32 of each
    one's size and modification time (a name holding them all would outgrow the 255
    bytes a file name may have as files are added; hashlib would cost a commit hook
    ~2 ms of imports, binascii is loaded already)."""
    stamps = ".".join(f"{stat.st_size}-{stat.st_mtime_ns}" for stat in map(Path.stat, sources))
    return sources[0].with_name("__pycache__") / (
        f"{kind}.{sys.implementation.cache_tag}.{binascii.crc32(stamps.encode()):08x}.marshal"
    )


def _kept(cached: Path) -> list[dict[str, Any]] | None:
    try:
        # Trusted as the bytecode beside it is: whoever can write one can write both.
        rules = marshal.loads(cached.read_bytes())  # noqa: S302
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return rules if isinstance(rules, list) else None


def _without_examples(spec: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in spec.items() if key not in _EXAMPLES}


def _keep(cached: Path, rules: list[dict[str, Any]]) -> None:
    """Write the parsed tables for the next process, atomically; never fail for it."""
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    try:
        cached.parent.mkdir(exist_ok=True)
        partial.write_bytes(marshal.dumps(rules))
        partial.replace(cached)
        # The copies of earlier versions of the files are stale for good: drop them.
        prefix = cached.name.split(".", 2)[:2]
        for old in cached.parent.glob(f"{'.'.join(prefix)}.*.marshal"):
            if old != cached:
                old.unlink(missing_ok=True)
    except (OSError, ValueError):
        partial.unlink(missing_ok=True)


@functools.cache
def builtin_rules() -> tuple[Rule, ...]:
    """The built-in rules in file order, made once per process."""
    return tuple(map(rule_from_fields, rule_fields(builtin_sources())))


def builtin_sources() -> list[Path]:
    """The built-in rule files, in judging order."""
    # Beside this module, as package data; importlib.resources would cost a commit
    # hook ~2 ms of imports (tempfile, shutil, bz2...) for the same bytes.
    here = Path(__file__).parent
    return [here / name for name in BUILTIN_FILES]


def rule_fields(sources: Sequence[Path]) -> list[dict[str, Any]]:
    """Each rule of the built-in files at ``sources`` as the Rule's fields.

    A commit hook makes every built-in rule: spelling the checked tables out into
    fields cost it as much again as making the rules (~6 ms for a thousand), so the
    fields are kept too, in a cache named by the files and by the code that spells
    them out (this module, and the models that say what a Rule holds).
    """
    from spillguard.core import models

    cached = _cache_path("rules-fields", [*sources, Path(__file__), Path(models.__file__)])
    fields = _kept(cached)
    if fields is None:
        fields = [_fields(spec) for spec in rule_tables(sources, examples=False)]
        _keep(cached, fields)
    return fields


def _where(spec: dict[str, Any]) -> str:
    return f"built-in rule {spec.get('name', '?')}"


#: The keys of a checked table that are the Rule's fields of the same name, as they
#: are; ``_LISTS`` become tuples; the rest the loader spells out (``_rule``).
_AS_THEY_ARE = frozenset(
    {"name", "description", "enabled", "blocking", "value_filter", "lookahead", "path"}
    | {"previous_line", "previous_lines", "checksum"}
)
_LISTS = ("keywords", "allow", "requires")


def _fields(spec: dict[str, Any]) -> dict[str, Any]:
    """A checked table as the fields of its Rule."""
    regexp, secret_group = _regexp(spec, _where(spec))
    fields = {key: value for key, value in spec.items() if key in _AS_THEY_ARE}
    fields.update((key, tuple(spec[key])) for key in _LISTS if key in spec)
    if "stopwords" in spec:
        fields["stopwords"] = tuple(word.lower() for word in spec["stopwords"])
    if "min_entropy" in spec:
        fields["min_entropy"] = float(spec["min_entropy"])
    # Keywords are lowercase already (the test suite holds every file to it).
    # Every pattern is compiled on first use (engine.compiled and pattern_of): a
    # commit hook meets a handful of the rules, and compiling all of them would cost
    # it more than the rest of its start-up. The test suite compiles every built-in
    # pattern, so a broken one cannot ship.
    return {"kind": "builtin", "regexp": regexp, "secret_group": secret_group, **fields}


def _regexp(spec: dict[str, Any], where: str) -> tuple[str, str | None]:
    """The rule's pattern and secret group, spelled out from context/value if given."""
    if "regexp" in spec:
        return spec["regexp"], spec.get("secret_group")
    if "context" in spec and "value" in spec:
        return ASSIGNMENT.format(context=spec["context"], value=spec["value"]), "secret"
    raise ConfigError(f"{where}: needs regexp, or context and value")
