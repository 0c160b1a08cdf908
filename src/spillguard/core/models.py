"""Frozen domain values. Behaviour lives in functions elsewhere, not here."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

    import regex

RuleKind = Literal["builtin", "custom"]

#: Lines longer than this are reported with only the matched text (``truncated``),
#: as the server does; the match offsets are then relative to that text.
MAX_LINE_LENGTH = 1000


@dataclasses.dataclass(frozen=True, kw_only=True)
class Rule:
    """One compiled rule. ``pattern`` is compiled once, at load.

    Not slotted, unlike the other values: every process that judges text makes the
    thousand built-in rules, and a rule's fields are filled (``rule_from_fields``) or
    copied (``configuration.resolution``) as one dictionary, not field by field."""

    name: str
    kind: RuleKind
    regexp: str
    #: Compiled at load for custom rules (validation needs it); None for built-in
    #: rules, which engine.compiled() compiles on first use: most never match a
    #: keyword in a small commit, and compiling all of them costs start-up time.
    pattern: regex.Pattern[str] | None = dataclasses.field(default=None, compare=False, repr=False)
    flags: int = 0
    description: str = ""
    keywords: tuple[str, ...] = ()
    enabled: bool = True
    blocking: bool = True
    source: str = "builtin"
    #: Name of the group whose value the filters and the entropy floor judge;
    #: the finding itself is always the whole match (group 0).
    secret_group: str | None = None
    min_entropy: float = 0.0
    #: Matches whose secret contains one of these (lowercase) are not matches.
    stopwords: tuple[str, ...] = ()
    #: Matches whose secret matches one of these regular expressions are not matches.
    #: Built-in rules only; compiled on first use (engine.allow_patterns), as ``regexp``.
    allow: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    #: Named value filter ("password": drop env references and placeholders).
    value_filter: str | None = None
    #: Let the pattern look past the end of the line (a key header and its body);
    #: the match itself must still lie on the line.
    lookahead: bool = False
    #: Case-sensitive strings one of which every match holds (keywords are lowercase,
    #: so they cannot say "ENV"): a line without any is not tried. Built-in rules only.
    requires: tuple[str, ...] = ()
    #: Only files whose path this matches are judged by the rule (a .pgpass line is
    #: a credential there only). A rule with a path and no keywords is tried on every
    #: line of those files. Built-in rules only; a regular expression compiled on
    #: first use, as ``regexp``.
    path: str | None = dataclasses.field(default=None, repr=False)
    #: The name of a published check the secret must pass (see checksums.CHECKS).
    checksum: str | None = None
    #: The line before a match must match this (the name of a Kubernetes env entry
    #: stands on the line before its ``value:``). Built-in rules only; compiled on
    #: first use, as ``regexp``.
    previous_line: str | None = dataclasses.field(default=None, repr=False)
    #: How many lines before the match ``previous_line`` reads, joined by newlines (a
    #: Terraform variable's name stands a few lines above its ``default``).
    previous_lines: int = 1


_RULE_DEFAULTS = {
    field.name: field.default
    for field in dataclasses.fields(Rule)
    if field.default is not dataclasses.MISSING
}
_RULE_NAMES = frozenset(field.name for field in dataclasses.fields(Rule))
_RULE_REQUIRED = _RULE_NAMES - _RULE_DEFAULTS.keys()


def rule_from_fields(fields: Mapping[str, Any]) -> Rule:
    """``Rule(**fields)`` at a fifth of its cost (the dataclass __init__ sets each of 21
    fields through ``object.__setattr__``, ~8 ms for the built-in rules of a commit
    hook): ``fields`` are a Rule's fields (the built-in rules' cache), the rest take
    their defaults."""
    if not _RULE_REQUIRED <= fields.keys() <= _RULE_NAMES:
        raise TypeError(f"not a Rule's fields: {sorted(fields)}")
    rule = object.__new__(Rule)
    values = vars(rule)
    values.update(_RULE_DEFAULTS)
    values.update(fields)
    return rule


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PasswordFilters:
    """The GENERIC_PASSWORD settings the hosted variant exposes, each switchable."""

    env_references: bool = True
    placeholders: bool = True
    min_length: int = 4


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReviewedEntry:
    """A reviewed string, kept as a salted SHA-256 so no plaintext is stored."""

    digest: str
    rule: str | None = None
    reason: str = ""
    source: str = ""
    #: The salt of ``digest`` when it is not the RuleSet's (the sync cache has its own).
    salt: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuleSet:
    """Everything the engine needs to judge text; no git, no files."""

    rules: tuple[Rule, ...]
    allowlist_paths: tuple[regex.Pattern[str], ...] = dataclasses.field(default=(), repr=False)
    #: Rules no repository file may loosen, and the ``allowlist_paths`` entries that
    #: are not a repository file's: only those hide a locked rule's findings.
    locked: frozenset[str] = frozenset()
    trusted_allowlist_paths: tuple[regex.Pattern[str], ...] = dataclasses.field(
        default=(), repr=False
    )
    reviewed: tuple[ReviewedEntry, ...] = ()
    reviewed_salt: str = ""
    rule_timeout: float = 20.0
    password_filters: PasswordFilters = PasswordFilters()
    include_allowlisted: bool = False
    #: False: the administrator turned the inline pragma off (``allow_pragma``).
    allow_pragma: bool = True
    #: Report reviewed findings too, flagged and never blocking (``--include-reviewed``).
    include_reviewed: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CommitInfo:
    """The commit a fragment comes from: its id, author, date and message."""

    id: str
    author: str
    email: str
    date: str
    message: str = dataclasses.field(default="", repr=False)
    #: ``Name <email>`` of the committer, which every ``git log --format=fuller`` shows.
    committer: str = dataclasses.field(default="", repr=False)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Fragment:
    """Text to judge: a whole file, or a run of consecutive added lines of a diff."""

    path: str
    text: str = dataclasses.field(repr=False)
    start_line: int = 1
    commit: CommitInfo | None = None
    ref: str | None = None
    #: Set on lines a rename carried over from this path unchanged: judged only when
    #: that path's rules differ from ``path``'s (an allowlisted path, say), since
    #: content that arrives at a path is judged by that path's rules.
    moved_from: str | None = None
    #: The file's lines just before and after the fragment's, each ending in a newline
    #: (``sources.context``): read with it by rules that join a name and its value
    #: over two lines; a finding only on them is not the fragment's.
    before: str = dataclasses.field(default="", repr=False)
    after: str = dataclasses.field(default="", repr=False)


# A frozen dataclass's __init__ sets each field through object.__setattr__: building a
# Fragment so costs 1.3 µs, more than cutting and decoding its lines. A history scan
# builds one per run of added lines, millions on git/git, so ``diff_fragment`` fills
# the slots through their descriptors instead, in half the time.
_FRAGMENT_SLOTS = vars(Fragment)
_SET_PATH = _FRAGMENT_SLOTS["path"].__set__
_SET_TEXT = _FRAGMENT_SLOTS["text"].__set__
_SET_START_LINE = _FRAGMENT_SLOTS["start_line"].__set__
_SET_COMMIT = _FRAGMENT_SLOTS["commit"].__set__
_SET_REF = _FRAGMENT_SLOTS["ref"].__set__
_SET_MOVED_FROM = _FRAGMENT_SLOTS["moved_from"].__set__
_SET_BEFORE = _FRAGMENT_SLOTS["before"].__set__
_SET_AFTER = _FRAGMENT_SLOTS["after"].__set__


def diff_fragment(  # noqa: PLR0913, PLR0917 - every field of a Fragment, in order
    path: str,
    text: str,
    start_line: int,
    commit: CommitInfo | None,
    ref: str | None,
    moved_from: str | None,
    context: tuple[str, str] = ("", ""),
) -> Fragment:
    """``Fragment(path=path, text=text, ...)``, every field given (``context``: before
    and after), built faster."""
    fragment = object.__new__(Fragment)
    _SET_PATH(fragment, path)
    _SET_TEXT(fragment, text)
    _SET_START_LINE(fragment, start_line)
    _SET_COMMIT(fragment, commit)
    _SET_REF(fragment, ref)
    _SET_MOVED_FROM(fragment, moved_from)
    _SET_BEFORE(fragment, context[0])
    _SET_AFTER(fragment, context[1])
    return fragment


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """A secret a rule found: where, by which rule, the line it is on."""

    rule: str
    blocking: bool
    path: str
    line: int
    #: The whole line, or only the match when the line is longer than MAX_LINE_LENGTH.
    text: str = dataclasses.field(repr=False)
    line_offset_start: int
    line_offset_end: int
    truncated: bool
    match_text: str = dataclasses.field(repr=False)
    #: Where the secret proper lies within ``match_text`` (the rule's secret group);
    #: masking hides that part and keeps the rest readable.
    secret_start: int = 0
    secret_end: int = -1
    #: Secret spans (within ``text``) of other matches on the line: only the first
    #: rule's first match is reported, but reports mask every secret the line shows.
    hidden: tuple[tuple[int, int], ...] = dataclasses.field(default=(), repr=False)
    fingerprint: str
    commit: CommitInfo | None = None
    ref: str | None = None
    allowlisted: bool = False
    #: A reviewed string, reported only with ``--include-reviewed``; never blocking.
    reviewed: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuleError:
    """A rule that failed while judging (it exceeded its time budget)."""

    rule: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CommitWalked:
    """A commit a scan went through, whether or not it added a line to judge."""

    commit: str


#: What a scan covered, for its summary: commits, the staged changes, or files.
ScanScope = Literal["commits", "staged", "files"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """An input left out on purpose (a submodule, an LFS pointer, a binary over
    max_file_size...), or that could not be read."""

    path: str
    reason: str
    commit: str | None = None
    #: True when the input should have been scanned and could not be (exit 3).
    failed: bool = False
    #: Content left unread by design (a binary over ``max_file_size``): the
    #: administrator's ``on_unscannable`` decides whether it rejects.
    unjudged: bool = False


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ScanStats:
    """How much a scan covered, for its summary."""

    #: Commits walked (empty ones and those that only delete lines included).
    commits: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    scope: ScanScope = "commits"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Silenced:
    """Findings a scan did not report (or flagged ``allowlisted``), by what hid them:
    counted in every summary, so that no hidden finding goes unseen."""

    pragma: int = 0
    path: int = 0
    reviewed: int = 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult:
    """Everything a scan found and left out, for the reports and the exit code."""

    findings: tuple[Finding, ...] = ()
    errors: tuple[RuleError, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    stats: ScanStats = ScanStats()
    #: Notices for the reader (a skipped commit, a policy decision); never secrets.
    notices: tuple[str, ...] = ()
    silenced: Silenced = Silenced()
    #: Commits a hook did not scan because their message holds a bypass token.
    bypassed: tuple[str, ...] = ()
    #: The time budget ran out before everything was judged (a push's deadline).
    out_of_time: bool = False


class RefUpdate(NamedTuple):
    old: str
    new: str
    ref: str


def is_zero_id(object_id: str) -> bool:
    """True for git's null id in any object format (40 zeros for SHA-1, 64 for SHA-256):
    a ref created (as ``old``) or deleted (as ``new``)."""
    return bool(object_id) and set(object_id) == {"0"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which commits a history scan covers."""

    revs: tuple[str, ...] = ()
    all_refs: bool = False
    branches: tuple[str, ...] = ()
    #: Seconds since the epoch; the window is ``since <= commit time < until``.
    since: float | None = None
    until: float | None = None
