"""Frozen domain values. Behaviour lives in functions elsewhere, not here."""

from __future__ import annotations

from spillguard.core.values import Frozen, fill

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Literal

    import regex

    RuleKind = Literal["builtin", "custom"]
    #: What a scan covered, for its summary: commits, the staged changes, or files.
    ScanScope = Literal["commits", "staged", "files"]

#: Lines longer than this are reported with only the matched text (``truncated``),
#: as the server does; the match offsets are then relative to that text.
MAX_LINE_LENGTH = 1000


class Rule(Frozen):
    """One compiled rule. ``pattern`` is compiled once, at load.

    Not slotted, unlike the other values: every process that judges text makes the
    thousand built-in rules, and a rule's fields are filled (``rule_from_fields``) or
    copied (``configuration.resolution``) as one dictionary, not field by field."""

    UNCOMPARED = frozenset({"pattern"})
    UNSHOWN = frozenset({"pattern", "allow", "path", "previous_line"})

    name: str
    kind: RuleKind
    regexp: str
    #: Compiled at load for custom rules (validation needs it); None for built-in
    #: rules, which engine.compiled() compiles on first use: most never match a
    #: keyword in a small commit, and compiling all of them costs start-up time.
    pattern: regex.Pattern[str] | None
    flags: int
    description: str
    keywords: tuple[str, ...]
    enabled: bool
    blocking: bool
    source: str
    #: Name of the group whose value the filters and the entropy floor judge;
    #: the finding itself is always the whole match (group 0).
    secret_group: str | None
    min_entropy: float
    #: Matches whose secret contains one of these (lowercase) are not matches.
    stopwords: tuple[str, ...]
    #: Matches whose secret matches one of these regular expressions are not matches.
    #: Built-in rules only; compiled on first use (engine.allow_patterns), as ``regexp``.
    allow: tuple[str, ...]
    #: Named value filter ("password": drop env references and placeholders).
    value_filter: str | None
    #: Let the pattern look past the end of the line (a key header and its body);
    #: the match itself must still lie on the line.
    lookahead: bool
    #: Case-sensitive strings one of which every match holds (keywords are lowercase,
    #: so they cannot say "ENV"): a line without any is not tried. Built-in rules only.
    requires: tuple[str, ...]
    #: Only files whose path this matches are judged by the rule (a .pgpass line is
    #: a credential there only). A rule with a path and no keywords is tried on every
    #: line of those files. Built-in rules only; a regular expression compiled on
    #: first use, as ``regexp``.
    path: str | None
    #: The name of a published check the secret must pass (see checksums.CHECKS).
    checksum: str | None
    #: The line before a match must match this (the name of a Kubernetes env entry
    #: stands on the line before its ``value:``). Built-in rules only; compiled on
    #: first use, as ``regexp``.
    previous_line: str | None
    #: How many lines before the match ``previous_line`` reads, joined by newlines (a
    #: Terraform variable's name stands a few lines above its ``default``).
    previous_lines: int

    def __init__(  # noqa: PLR0913 - every field of a rule, by name
        self,
        *,
        name: str,
        kind: RuleKind,
        regexp: str,
        pattern: regex.Pattern[str] | None = None,
        flags: int = 0,
        description: str = "",
        keywords: tuple[str, ...] = (),
        enabled: bool = True,
        blocking: bool = True,
        source: str = "builtin",
        secret_group: str | None = None,
        min_entropy: float = 0.0,
        stopwords: tuple[str, ...] = (),
        allow: tuple[str, ...] = (),
        value_filter: str | None = None,
        lookahead: bool = False,
        requires: tuple[str, ...] = (),
        path: str | None = None,
        checksum: str | None = None,
        previous_line: str | None = None,
        previous_lines: int = 1,
    ) -> None:
        fill(self, locals())


_RULE_DEFAULTS: dict[str, Any] = Rule.__init__.__kwdefaults__ or {}
_RULE_NAMES = frozenset(Rule.FIELDS)
_RULE_REQUIRED = _RULE_NAMES - _RULE_DEFAULTS.keys()


def rule_from_fields(fields: Mapping[str, Any]) -> Rule:
    """``Rule(**fields)`` at a fifth of its cost (``__init__`` sets each of 21 fields
    through ``object.__setattr__``, ~8 ms for the built-in rules of a commit hook):
    ``fields`` are a Rule's fields (the built-in rules' cache), the rest take their
    defaults."""
    if not _RULE_REQUIRED <= fields.keys() <= _RULE_NAMES:
        raise TypeError(f"not a Rule's fields: {sorted(fields)}")
    rule = object.__new__(Rule)
    values = vars(rule)
    values.update(_RULE_DEFAULTS)
    values.update(fields)
    return rule


class PasswordFilters(Frozen):
    """The GENERIC_PASSWORD settings the hosted variant exposes, each switchable."""

    __slots__ = ("env_references", "min_length", "placeholders")

    env_references: bool
    placeholders: bool
    min_length: int

    def __init__(
        self,
        *,
        env_references: bool = True,
        placeholders: bool = True,
        min_length: int = 4,
    ) -> None:
        fill(self, locals())


#: The default filters, one value shared by every rule set that keeps them.
_PASSWORD_FILTERS = PasswordFilters()


class ReviewedEntry(Frozen):
    """A reviewed string, kept as a salted SHA-256 so no plaintext is stored."""

    __slots__ = ("digest", "reason", "rule", "salt", "source")

    digest: str
    rule: str | None
    reason: str
    source: str
    #: The salt of ``digest`` when it is not the RuleSet's (the sync cache has its own).
    salt: str | None

    def __init__(
        self,
        *,
        digest: str,
        rule: str | None = None,
        reason: str = "",
        source: str = "",
        salt: str | None = None,
    ) -> None:
        fill(self, locals())


class RuleSet(Frozen):
    """Everything the engine needs to judge text; no git, no files."""

    __slots__ = (
        "allow_pragma",
        "allowlist_paths",
        "include_allowlisted",
        "include_reviewed",
        "locked",
        "password_filters",
        "reviewed",
        "reviewed_salt",
        "rule_timeout",
        "rules",
        "trusted_allowlist_paths",
    )
    UNSHOWN = frozenset({"allowlist_paths", "trusted_allowlist_paths"})

    rules: tuple[Rule, ...]
    allowlist_paths: tuple[regex.Pattern[str], ...]
    #: Rules no repository file may loosen, and the ``allowlist_paths`` entries that
    #: are not a repository file's: only those hide a locked rule's findings.
    locked: frozenset[str]
    trusted_allowlist_paths: tuple[regex.Pattern[str], ...]
    reviewed: tuple[ReviewedEntry, ...]
    reviewed_salt: str
    rule_timeout: float
    password_filters: PasswordFilters
    include_allowlisted: bool
    #: False: the administrator turned the inline pragma off (``allow_pragma``).
    allow_pragma: bool
    #: Report reviewed findings too, flagged and never blocking (``--include-reviewed``).
    include_reviewed: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        rules: tuple[Rule, ...],
        allowlist_paths: tuple[regex.Pattern[str], ...] = (),
        locked: frozenset[str] = frozenset(),
        trusted_allowlist_paths: tuple[regex.Pattern[str], ...] = (),
        reviewed: tuple[ReviewedEntry, ...] = (),
        reviewed_salt: str = "",
        rule_timeout: float = 20.0,
        password_filters: PasswordFilters = _PASSWORD_FILTERS,
        include_allowlisted: bool = False,
        allow_pragma: bool = True,
        include_reviewed: bool = False,
    ) -> None:
        fill(self, locals())


class CommitInfo(Frozen):
    """The commit a fragment comes from: its id, author, date and message."""

    __slots__ = ("author", "committer", "date", "email", "id", "message")
    UNSHOWN = frozenset({"message", "committer"})

    id: str
    author: str
    email: str
    date: str
    message: str
    #: ``Name <email>`` of the committer, which every ``git log --format=fuller`` shows.
    committer: str

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        id: str,  # noqa: A002 - the field's name
        author: str,
        email: str,
        date: str,
        message: str = "",
        committer: str = "",
    ) -> None:
        fill(self, locals())


class Fragment(Frozen):
    """Text to judge: a whole file, or a run of consecutive added lines of a diff."""

    __slots__ = ("after", "before", "commit", "moved_from", "path", "ref", "start_line", "text")
    UNSHOWN = frozenset({"text", "before", "after"})

    path: str
    text: str
    start_line: int
    commit: CommitInfo | None
    ref: str | None
    #: Set on lines a rename carried over from this path unchanged: judged only when
    #: that path's rules differ from ``path``'s (an allowlisted path, say), since
    #: content that arrives at a path is judged by that path's rules.
    moved_from: str | None
    #: The file's lines just before and after the fragment's, each ending in a newline
    #: (``sources.context``): read with it by rules that join a name and its value
    #: over two lines; a finding only on them is not the fragment's.
    before: str
    after: str

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        path: str,
        text: str,
        start_line: int = 1,
        commit: CommitInfo | None = None,
        ref: str | None = None,
        moved_from: str | None = None,
        before: str = "",
        after: str = "",
    ) -> None:
        fill(self, locals())


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


class Finding(Frozen):
    """A secret a rule found: where, by which rule, the line it is on."""

    __slots__ = (
        "allowlisted",
        "blocking",
        "commit",
        "fingerprint",
        "hidden",
        "line",
        "line_offset_end",
        "line_offset_start",
        "match_text",
        "path",
        "ref",
        "reviewed",
        "rule",
        "secret_end",
        "secret_start",
        "text",
        "truncated",
    )
    UNSHOWN = frozenset({"text", "match_text", "hidden"})

    rule: str
    blocking: bool
    path: str
    line: int
    #: The whole line, or only the match when the line is longer than MAX_LINE_LENGTH.
    text: str
    line_offset_start: int
    line_offset_end: int
    truncated: bool
    match_text: str
    #: Where the secret proper lies within ``match_text`` (the rule's secret group);
    #: masking hides that part and keeps the rest readable.
    secret_start: int
    secret_end: int
    #: Secret spans (within ``text``) of other matches on the line: only the first
    #: rule's first match is reported, but reports mask every secret the line shows.
    hidden: tuple[tuple[int, int], ...]
    fingerprint: str
    commit: CommitInfo | None
    ref: str | None
    allowlisted: bool
    #: A reviewed string, reported only with ``--include-reviewed``; never blocking.
    reviewed: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        rule: str,
        blocking: bool,
        path: str,
        line: int,
        text: str,
        line_offset_start: int,
        line_offset_end: int,
        truncated: bool,
        match_text: str,
        secret_start: int = 0,
        secret_end: int = -1,
        hidden: tuple[tuple[int, int], ...] = (),
        fingerprint: str,
        commit: CommitInfo | None = None,
        ref: str | None = None,
        allowlisted: bool = False,
        reviewed: bool = False,
    ) -> None:
        fill(self, locals())


class RuleError(Frozen):
    """A rule that failed while judging (it exceeded its time budget)."""

    __slots__ = ("message", "rule")

    rule: str
    message: str

    def __init__(self, *, rule: str, message: str) -> None:
        fill(self, locals())


class CommitWalked(Frozen):
    """A commit a scan went through, whether or not it added a line to judge."""

    __slots__ = ("commit",)

    commit: str

    def __init__(self, *, commit: str) -> None:
        fill(self, locals())


class Skipped(Frozen):
    """An input left out on purpose (a submodule, an LFS pointer, a binary over
    max_file_size...), or that could not be read."""

    __slots__ = ("commit", "failed", "path", "reason", "unjudged")

    path: str
    reason: str
    commit: str | None
    #: True when the input should have been scanned and could not be (exit 3).
    failed: bool
    #: Content left unread by design (a binary over ``max_file_size``): the
    #: administrator's ``on_unscannable`` decides whether it rejects.
    unjudged: bool

    def __init__(
        self,
        *,
        path: str,
        reason: str,
        commit: str | None = None,
        failed: bool = False,
        unjudged: bool = False,
    ) -> None:
        fill(self, locals())


class ScanStats(Frozen):
    """How much a scan covered, for its summary."""

    __slots__ = ("bytes", "commits", "files", "scope", "seconds")

    #: Commits walked (empty ones and those that only delete lines included).
    commits: int
    files: int
    bytes: int
    seconds: float
    scope: ScanScope

    def __init__(
        self,
        *,
        commits: int = 0,
        files: int = 0,
        bytes: int = 0,  # noqa: A002 - the field's name
        seconds: float = 0.0,
        scope: ScanScope = "commits",
    ) -> None:
        fill(self, locals())


class Silenced(Frozen):
    """Findings a scan did not report (or flagged ``allowlisted``), by what hid them:
    counted in every summary, so that no hidden finding goes unseen."""

    __slots__ = ("path", "pragma", "reviewed")

    pragma: int
    path: int
    reviewed: int

    def __init__(self, *, pragma: int = 0, path: int = 0, reviewed: int = 0) -> None:
        fill(self, locals())


_NO_STATS = ScanStats()
_NONE_SILENCED = Silenced()


class ScanResult(Frozen):
    """Everything a scan found and left out, for the reports and the exit code."""

    __slots__ = (
        "bypassed",
        "errors",
        "findings",
        "notices",
        "out_of_time",
        "silenced",
        "skipped",
        "stats",
    )

    findings: tuple[Finding, ...]
    errors: tuple[RuleError, ...]
    skipped: tuple[Skipped, ...]
    stats: ScanStats
    #: Notices for the reader (a skipped commit, a policy decision); never secrets.
    notices: tuple[str, ...]
    silenced: Silenced
    #: Commits a hook did not scan because their message holds a bypass token.
    bypassed: tuple[str, ...]
    #: The time budget ran out before everything was judged (a push's deadline).
    out_of_time: bool

    def __init__(  # noqa: PLR0913 - every field, by name
        self,
        *,
        findings: tuple[Finding, ...] = (),
        errors: tuple[RuleError, ...] = (),
        skipped: tuple[Skipped, ...] = (),
        stats: ScanStats = _NO_STATS,
        notices: tuple[str, ...] = (),
        silenced: Silenced = _NONE_SILENCED,
        bypassed: tuple[str, ...] = (),
        out_of_time: bool = False,
    ) -> None:
        fill(self, locals())


class RefUpdate(Frozen):
    __slots__ = ("new", "old", "ref")

    old: str
    new: str
    ref: str

    def __init__(self, old: str, new: str, ref: str) -> None:
        fill(self, locals())


def is_zero_id(object_id: str) -> bool:
    """True for git's null id in any object format (40 zeros for SHA-1, 64 for SHA-256):
    a ref created (as ``old``) or deleted (as ``new``)."""
    return bool(object_id) and set(object_id) == {"0"}


class Selection(Frozen):
    """Which commits a history scan covers."""

    __slots__ = ("all_refs", "branches", "revs", "since", "until")

    revs: tuple[str, ...]
    all_refs: bool
    branches: tuple[str, ...]
    #: Seconds since the epoch; the window is ``since <= commit time < until``.
    since: float | None
    until: float | None

    def __init__(
        self,
        *,
        revs: tuple[str, ...] = (),
        all_refs: bool = False,
        branches: tuple[str, ...] = (),
        since: float | None = None,
        until: float | None = None,
    ) -> None:
        fill(self, locals())
