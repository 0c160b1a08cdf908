"""Provider families, derived from the rules themselves: nothing to add by hand.

Each rule of the provider files brings its ``tp`` examples. Each example is placed
as written in a file, and its secret (the rule's match on it) is assigned to the
rule's name in files of other formats, as people keep tokens in settings. A token
that is part of a larger whole (a webhook URL, a connection string, a header value)
is assigned whole, as people keep it. Each ``fp`` example is a near-miss, placed as
written. A rule's family is its file and section (``builtin.toml: payment and
commerce``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import regex

from spillguard.configuration import rules as rules_module
from spillguard.configuration.config import parse_toml
from testing.recall.families import Case, near_miss, positive
from testing.recall.formats import FORMATS, in_file, place
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator

PROVIDER_FILES = ("builtin.toml", "services.toml")
#: The formats a provider token is placed in, beside its example line as written.
PROVIDER_FORMATS = ("env", "yaml", "python", "json", "k8s-secret", "javascript")
_SECTION = regex.compile(r"^# -{10,} (.+)$", regex.MULTILINE)
_NAME = regex.compile(r'^name = "(\w+)"', regex.MULTILINE)
#: What stands before a secret that is assigned to a name: the name, an operator.
_ASSIGNED = regex.compile(r"""(?:[\w.-]*["']?\s*[:=]\s*["']?|--[\w-]+[\s=]+)""")


def sections(source: Path) -> dict[str, str]:
    """Rule name -> the section heading it stands under in ``source``."""
    text = source.read_text(encoding="utf-8")
    heads = [(match.start(), match.group(1)) for match in _SECTION.finditer(text)]
    found = {}
    for match in _NAME.finditer(text):
        before = [head for start, head in heads if start < match.start()]
        found[match.group(1)] = before[-1] if before else "other"
    return found


def provider_cases(seed: str) -> Iterator[Case]:
    here = Path(rules_module.__file__).parent
    for file_name in PROVIDER_FILES:
        source = here / file_name
        heads = sections(source)
        specs = parse_toml(source.read_text(encoding="utf-8"), file_name).get("rules", [])
        for spec in specs:
            family = f"{file_name}: {heads.get(spec['name'], 'other')}"
            yield from _rule_cases(family, spec, seed)


def _rule_cases(family: str, spec: dict[str, object], seed: str) -> Iterator[Case]:
    name = str(spec["name"])
    examples = spec.get("tp", [])
    assert isinstance(examples, list)
    pattern = regex.compile(_pattern(spec))
    group = spec.get("secret_group")
    for number, template in enumerate(examples[:2]):
        text = expand(template, f"{seed}-{name}-{number}")
        yield positive(family, f"{name} as written", in_file("config/settings.txt", text))
        match = pattern.search(text.split("\n")[0])
        if match is None or "\n" in match.group(0):
            continue
        secret = _kept_value(match, str(group) if group else None)
        for index, fmt in enumerate(PROVIDER_FORMATS):
            if (index + number) % 2 == 0 and fmt in FORMATS:
                yield positive(family, f"{name} in {fmt}", place(fmt, name, secret))
    near_misses = spec.get("fp", [])
    assert isinstance(near_misses, list)
    for number, template in enumerate(near_misses):
        text = expand(template, f"{seed}-{name}-fp{number}")
        yield near_miss(family, f"{name} near-miss", in_file("config/settings.txt", text))


def _kept_value(match: regex.Match[str], group: str | None) -> str:
    """The value a person keeps: the secret where a name and operator stand before
    it in the match (``aws_secret_access_key = ...``), else the whole match (a
    webhook URL, a connection string, ``PVEAPIToken=user@pam!id=...``)."""
    if not group or not match.group(group):
        return match.group(0)
    before = match.string[match.start() : match.start(group)]
    return match.group(group) if _ASSIGNED.fullmatch(before) else match.group(0)


def _pattern(spec: dict[str, object]) -> str:
    if "regexp" in spec:
        return str(spec["regexp"])
    return rules_module.ASSIGNMENT.format(context=spec["context"], value=spec["value"])
