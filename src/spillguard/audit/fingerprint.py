"""A digest of everything that decides a branch's findings: rules, allowlists, reviewed lines.

A branch judged under one digest and audited under another is outdated: the server app
marks its scans the same way after a rule change, and rescans them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from spillguard.core.values import Record, compared

if TYPE_CHECKING:
    from spillguard.configuration.config import Config


def _described(value: object) -> str:
    """A value by its compared fields, shallowly: a nested value by its repr (a
    compiled pattern's repr is its pattern and flags). A rule's compiled pattern is a
    cache (not compared): its regexp is the rule. Shallow, because a thousand rules
    described field by field, deeply, cost a fifth of a second per repository."""
    if isinstance(value, Record):
        return repr([(name, field) for name, field in compared(value) if name != "rules"])
    return repr(value)


#: Rules described in this process, by identity (the rule is kept, so its id is not
#: reused): the built-in rules are the same objects in every repository's rule set.
_rules: dict[int, tuple[object, bytes]] = {}


def _rule(rule: object) -> bytes:
    known = _rules.get(id(rule))
    if known is None:
        known = (rule, _described(rule).encode("utf-8", "surrogateescape"))
        _rules[id(rule)] = known
    return known[1]


def config_fingerprint(config: Config) -> str:
    """SHA-256 of the rule set and the size cap that judged a branch."""
    digest = hashlib.sha256()
    for rule in config.ruleset.rules:
        digest.update(_rule(rule))
    digest.update(_described(config.ruleset).encode("utf-8", "surrogateescape"))
    digest.update(str(config.max_file_size).encode())
    return digest.hexdigest()
