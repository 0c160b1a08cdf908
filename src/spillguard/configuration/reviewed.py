"""The reviewed-strings file: salted SHA-256 digests of strings that are not secrets.

``.spillguard-reviewed.toml`` at the repository root plays the role of a baseline.
It never holds plaintext: each entry is ``reviewed_digest(text, salt)`` with the
file's own random salt, plus who added it, when, why, and optionally the one rule
it applies to. A finding whose matched text hashes to an entry is not reported.
"""

from __future__ import annotations

from spillguard.configuration import schema
from spillguard.core.errors import ConfigError
from spillguard.core.models import ReviewedEntry
from spillguard.core.values import Frozen, fill, replace
from spillguard.detection.fingerprint import reviewed_digest

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from typing import Any

REVIEWED_FILE = ".spillguard-reviewed.toml"
FORMAT_VERSION = 1

FILE_KEYS: dict[str, schema.Key] = {
    "version": schema.Key(int, "the format version, 1"),
    "salt": schema.Key(str, "a hex string"),
    "reviewed": schema.Key(list, "an array of [[reviewed]] tables"),
}
ENTRY_KEYS: dict[str, schema.Key] = {
    "digest": schema.Key(str, "a SHA-256 hex digest"),
    "rule": schema.Key(str, "a rule name"),
    "reason": schema.Key(str, "a string", ""),
    "added_by": schema.Key(str, "a string", ""),
    "date": schema.Key(str, "a date, YYYY-MM-DD", ""),
}
_HEADER = """\
# Reviewed strings: spillguard does not report a finding whose matched text (and
# rule, when one is given) equals an entry here. Only salted SHA-256 digests are
# kept, never the strings. Edit with `spillguard review add|remove|list`.
"""


class Record(Frozen):
    """One entry of the file, with its audit fields."""

    __slots__ = ("added_by", "date", "digest", "reason", "rule")

    digest: str
    rule: str | None
    reason: str
    added_by: str
    date: str

    def __init__(
        self,
        digest: str,
        rule: str | None = None,
        reason: str = "",
        added_by: str = "",
        date: str = "",
    ) -> None:
        fill(self, locals())


class ReviewedFile(Frozen):
    """A reviewed file as read: its salt and its records."""

    __slots__ = ("records", "salt", "source")

    salt: str
    records: tuple[Record, ...]
    source: str

    def __init__(
        self,
        salt: str,
        records: tuple[Record, ...] = (),
        source: str = REVIEWED_FILE,
    ) -> None:
        fill(self, locals())


def new_file(source: str = REVIEWED_FILE) -> ReviewedFile:
    import secrets  # only when a file is created: hooks never need it

    return ReviewedFile(salt=secrets.token_hex(16), source=source)


def parse_reviewed(text: str, source: str) -> ReviewedFile:
    """The file's TOML text, checked key by key like a configuration file."""
    from spillguard.configuration.config import parse_toml

    table = schema.check_table(parse_toml(text, source), FILE_KEYS, source)
    version = table.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ConfigError(
            f"{source}: format version {version} is not {FORMAT_VERSION}; upgrade spillguard"
        )
    if "salt" not in table:
        raise ConfigError(f"{source}: missing key 'salt'")
    records = tuple(
        _record(item, f"{source}: reviewed[{index}]")
        for index, item in enumerate(table.get("reviewed", ()))
    )
    return ReviewedFile(salt=table["salt"], records=records, source=source)


def _record(item: Any, where: str) -> Record:
    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a table")
    schema.check_table(item, ENTRY_KEYS, where)
    if "digest" not in item:
        raise ConfigError(f"{where}: missing key 'digest'")
    return Record(
        digest=item["digest"],
        rule=item.get("rule"),
        reason=item.get("reason", ""),
        added_by=item.get("added_by", ""),
        date=item.get("date", ""),
    )


def render_reviewed(reviewed: ReviewedFile) -> str:
    lines = [_HEADER, f"version = {FORMAT_VERSION}", f"salt = {_string(reviewed.salt)}"]
    for record in reviewed.records:
        lines += ["", "[[reviewed]]", f"digest = {_string(record.digest)}"]
        if record.rule is not None:
            lines.append(f"rule = {_string(record.rule)}")
        lines += [
            f"reason = {_string(record.reason)}",
            f"added_by = {_string(record.added_by)}",
            f"date = {_string(record.date)}",
        ]
    return "\n".join(lines) + "\n"


def _string(value: str) -> str:
    """A TOML basic string: JSON's escapes are all valid TOML escapes."""
    import json

    return json.dumps(value, ensure_ascii=False)


def entries(reviewed: ReviewedFile) -> tuple[ReviewedEntry, ...]:
    """The file's entries as the engine matches them."""
    return tuple(
        ReviewedEntry(
            digest=record.digest,
            rule=record.rule,
            reason=record.reason,
            source=reviewed.source,
            salt=reviewed.salt,
        )
        for record in reviewed.records
    )


def digest_of(reviewed: ReviewedFile, text: str) -> str:
    return reviewed_digest(text, reviewed.salt)


def with_record(reviewed: ReviewedFile, record: Record) -> ReviewedFile:
    """The file with ``record`` added, replacing the entries it covers: for the same
    string, every one when it has no rule (it hides the string for every rule), else
    the one for its rule and the one for every rule (a rule narrows it)."""
    kept = [old for old in reviewed.records if not _covered(old, record)]
    return replace(reviewed, records=(*kept, record))


def _covered(old: Record, new: Record) -> bool:
    """Whether ``new`` takes ``old``'s place: the same string, for the same rule or
    with either for every rule."""
    return old.digest == new.digest and (old.rule == new.rule or None in {old.rule, new.rule})


def without(reviewed: ReviewedFile, digest: str, rule: str | None) -> tuple[ReviewedFile, int]:
    """The file without the entries for ``digest`` (only ``rule``'s, when given); and how many."""
    kept = tuple(old for old in reviewed.records if not _matches(old, digest, rule))
    return replace(reviewed, records=kept), len(reviewed.records) - len(kept)


def _matches(record: Record, digest: str, rule: str | None) -> bool:
    return record.digest == digest and (rule is None or record.rule == rule)
