"""The rule engine: judges text with the server app's semantics. Knows nothing of git.

For each line, the enabled rules are tried in order and only the first rule that
matches is reported; the finding is the whole match (group 0). A keyword prefilter
over the whole fragment decides which rules can possibly match which lines, so most
text never reaches a regular expression.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
import time

from spillguard.core.archives import SEPARATOR as ARCHIVE_SEPARATOR
from spillguard.core.models import MAX_LINE_LENGTH, Finding, Fragment, Rule, RuleError, RuleSet
from spillguard.core.values import replace
from spillguard.detection.allowlist import has_pragma, path_allowlisted
from spillguard.detection.checksums import fails_published_check, passes
from spillguard.detection.decoded import View, may_decode, views
from spillguard.detection.entropy import shannon
from spillguard.detection.filters import (
    REFERENCE_FILTERS,
    is_documented_example,
    is_sequential,
    password_value_rejected,
)
from spillguard.detection.fingerprint import finding_fingerprint, reviewed_digest
from spillguard.detection.prefilter import KeywordIndex
from spillguard.detection.redact import unquoted
from spillguard.detection.shape import (
    client_argument,
    generated_value,
    in_hash_context,
    near_secret_word,
)

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    import regex

    from spillguard.detection.native import NativeMatcher

#: How far past its line a ``lookahead`` rule may look (a PEM body follows its header).
LOOKAHEAD_CHARS = 512
#: What can hide a finding: an inline pragma, an ``allowlist_paths`` entry, a reviewed entry.
SILENCED_BY = ("pragma", "path", "reviewed")
#: Lines remembered as holding no finding: at most this many, each at most this long.
_CLEAN_LINES = 1 << 17
_CLEAN_LINE_LENGTH = 1000


@functools.cache
def _compile(regexp: str, flags: int) -> regex.Pattern[str]:
    # Made by the first line that meets the rule, from the user's cache where another
    # process compiled it (``compiled``): a commit hook whose change holds no rule's
    # keyword never loads regex, nor one whose rules' patterns are all kept.
    from spillguard.detection.compiled import compiled_pattern

    return compiled_pattern(regexp, flags)


@functools.cache
def keyword_index(keywords_per_rule: tuple[tuple[str, ...], ...]) -> KeywordIndex:
    """The prefilter of a rule list, built once per process for the same keywords."""
    return KeywordIndex(keywords_per_rule)


def compiled(rule: Rule) -> regex.Pattern[str]:
    """The rule's compiled pattern, compiling (once per process) on first use."""
    return rule.pattern if rule.pattern is not None else _compile(rule.regexp, rule.flags)


def pattern_of(regexp: str) -> regex.Pattern[str]:
    """A built-in rule's ``allow`` or ``previous_line`` pattern, compiled (once per
    process) on first use."""
    return _compile(regexp, 0)


@functools.cache
def path_pattern(regexp: str) -> re.Pattern[str] | regex.Pattern[str]:
    """A built-in rule's ``path`` (only built-in rules have one), compiled on first use
    by the standard library's ``re``, which reads every built-in path as regex does
    (tests/test_rules.py holds them to it): every file's path is looked up, and a
    commit whose lines hold no rule's keyword need not import regex (~60 million
    instructions) for it. A path ``re`` cannot read (a possessive quantifier before
    Python 3.11) is regex's."""
    try:
        return re.compile(regexp)
    except re.error:
        return _compile(regexp, 0)


class OutOfTime(Exception):  # noqa: N818 - a verdict, not an error
    """The scanner's deadline passed: what was found so far stands, the rest is unjudged.

    ``findings``: those of the fragment being judged, up to the line it stopped at
    (from ``scan_batch``: those of its batch). ``reached``: the fragments of the batch
    begun, the one it stopped in included.
    """

    def __init__(self) -> None:
        super().__init__("the deadline passed")
        self.findings: list[Finding] = []
        self.reached = 0


class Scanner:
    """Applies one RuleSet to fragments and remembers rule errors across them.

    A rule that exceeds its time budget is reported once and not tried again in
    this scan, so one catastrophic custom rule costs one budget, not one per line.
    """

    def __init__(
        self,
        ruleset: RuleSet,
        *,
        deadline: float | None = None,
        native: NativeMatcher | None = None,
    ) -> None:
        """``deadline`` (``time.monotonic()``): past it, judging stops with OutOfTime,
        between lines and inside a regular expression alike (a push's time budget).
        ``native``: the Vectorscan prefilter (``native.matcher``), asked which rules
        can match a candidate line before any of their expressions runs."""
        self.ruleset = ruleset
        self.deadline = deadline
        self.rules = tuple(rule for rule in ruleset.rules if rule.enabled)
        self._native = native
        self._native_patterns = () if native is None else native.patterns_of(self.rules)
        self.errors: list[RuleError] = []
        self._broken: set[str] = set()
        # A rule with a path and no keywords (a .pgpass line holds none) is tried on
        # every line of the files it names, and on no other line: it takes a keyword
        # that no text holds instead of joining the rules tried everywhere.
        self._index = keyword_index(
            tuple(
                rule.keywords or (_NO_TEXT,) if rule.path is not None else rule.keywords
                for rule in self.rules
            )
        )
        self._by_path = _PathRules(self.rules)
        # salt -> digest -> rules (None: every rule): one hash per salt and finding.
        self._reviewed_index: dict[str, dict[str, set[str | None]]] = {}
        for entry in ruleset.reviewed:
            salt = ruleset.reviewed_salt if entry.salt is None else entry.salt
            rules = self._reviewed_index.setdefault(salt, {}).setdefault(entry.digest, set())
            rules.add(entry.rule)
        self._all_names = frozenset(rule.name for rule in self.rules)
        self._by_name = {rule.name: rule for rule in self.rules}
        # Each rule's pattern by index, compiled on first use: looked up for every
        # rule tried on every candidate line.
        self._patterns: list[regex.Pattern[str] | None] = [None] * len(self.rules)
        # Lines already judged to hold no finding, by text and candidate rules: history
        # repeats lines (a file edited again, a revert, a cherry-pick); half the
        # candidate lines of the bench repository's history had been judged before.
        # Exact, since a rule only ever stops being tried (it broke) and a line's
        # verdict depends on nothing else, except for rules that look past their line.
        self._clean: set[tuple[str, tuple[int, ...]]] = set()
        # And a line's verdict by a rule that reads the line before depends on that line.
        self._looking_ahead = frozenset(
            index
            for index, rule in enumerate(self.rules)
            if rule.lookahead or rule.previous_line is not None
        )
        self._requires = tuple(rule.requires for rule in self.rules)
        self._unconditional = frozenset(
            index for index, rule in enumerate(self.rules) if not rule.requires
        )
        # A locked rule is never silenced by a pragma; the administrator may turn
        # pragmas off altogether.
        self._pragma_rules = frozenset(
            rule.name
            for rule in self.rules
            if ruleset.allow_pragma and rule.name not in ruleset.locked
        )
        #: Findings hidden so far, by what hid them ("pragma", "path", "reviewed").
        self.silenced: dict[str, int] = dict.fromkeys(SILENCED_BY, 0)
        # The lines of the fragment being scanned whose judging skipped a reviewed
        # match: a line yields one finding, so it counts once however many rules found
        # the reviewed value, and once though it may be judged twice (the exempt rules
        # first), with --include-reviewed or without.
        self._reviewed_seen: set[int] = set()
        # Reviewed matches skipped so far: a line that had one is never remembered clean.
        self._reviewed_skips = 0

    def note_errors(self, errors: Iterable[RuleError]) -> None:
        """Rule errors met over earlier text by another Scanner (a worker's): skip those rules."""
        for error in errors:
            self.errors.append(error)
            self._broken.add(error.rule)

    def path_allowlisted(self, path: str) -> bool:
        return path_allowlisted(path, self.ruleset.allowlist_paths)

    def _path_exempt(self, path: str) -> frozenset[str]:
        """The rules whose findings an ``allowlist_paths`` entry does not hide for ``path``:
        none, every rule (no entry matches), or the locked ones (only a repository's does).
        """
        if not self.ruleset.allowlist_paths or not self.path_allowlisted(path):
            return self._all_names
        if path_allowlisted(path, self.ruleset.trusted_allowlist_paths):
            return frozenset()
        return self.ruleset.locked

    def judged_alike(self, old: str, new: str) -> bool:
        """Whether text at ``old`` and at ``new`` meet the same rules: content a rename
        carries between such paths was judged where it was, and is not judged again."""
        if old == new:
            return True
        # A rule that reads only some paths (.pgpass, config/master.key) makes a pure
        # rename into them new content for that rule.
        if self._by_path.of(old) != self._by_path.of(new):
            return False
        # Mostly the same set (no allowlisted path): equal sets of a thousand names
        # would be compared name by name.
        exempt = self._path_exempt(old)
        other = self._path_exempt(new)
        return exempt is other or exempt == other

    def worth_scanning(self, texts: Sequence[str]) -> list[bool]:
        """Which texts hold a keyword of some rule; the others cannot yield a finding."""
        if self._index.always:
            return [True] * len(texts)
        _, worth = self._prefilter(texts)
        return [index in worth for index in range(len(texts))]

    def scan_batch(self, fragments: Sequence[Fragment]) -> list[Finding]:
        """The findings of the fragments, in order, as ``scan`` of each gives them.

        One pass of the keyword index over all their texts joined by newlines (no
        keyword spans one), instead of one pass and its overhead per text: most
        fragments of a history hold no keyword (six in seven of git's) and cost
        only their share of that pass. Past the deadline, OutOfTime holds the
        batch's findings so far and how many fragments were reached.
        """
        decodable = None
        if self._index.always or len(fragments) < 2:
            hits: dict[int, list[_Hit]] = {}
            chosen: Iterable[int] = range(len(fragments))
            searched: set[int] = set()
        else:
            hits, worth = self._prefilter([fragment.text for fragment in fragments])
            decodable = self._decodable(fragments)
            chosen = sorted(
                worth.union(
                    self._triggered(fragments),
                    decodable,
                    (
                        index
                        for index, fragment in enumerate(fragments)
                        if fragment.before or fragment.after
                    ),
                )
            )
            # The texts the batch's search found no keyword in, but for those it could
            # not search in place (in ``worth`` then): their hits are none.
            searched = set(chosen) - worth
        findings: list[Finding] = []
        index = 0
        try:
            for index in chosen:
                found = hits.get(index, _NO_HITS if index in searched else None)
                views = None if decodable is None else index in decodable
                findings += self._scan(fragments[index], found, views)
        except OutOfTime as stop:
            stop.findings[:0] = findings
            stop.reached = index + 1
            raise
        return findings

    def _prefilter(self, texts: Sequence[str]) -> tuple[dict[int, list[_Hit]], set[int]]:
        """The keyword hits of each text that holds one (positions in the text), and
        the texts worth scanning: those with hits some rule could match, and those
        that cannot be searched in place.

        A text some of whose characters lower to two (İ) cannot be: it goes in
        empty, is worth scanning, and is judged line by line. In every other text
        each character lowered to one, so its hits in the joined text, shifted to
        its start, are those of the text alone, whatever script its keywords are
        written in (hasło, lösenord). An ASCII batch (most of them) is lowered in
        one call.
        """
        joined = "\n".join(texts)
        parts: Sequence[str] = texts
        odd: set[int] = set()
        if joined.isascii():
            lowered = joined.lower()
        else:
            # Text by text: lowering outside ASCII is slow, and most texts need not.
            parts = [text.lower() for text in texts]
            if sum(map(len, parts)) != len(joined) - len(texts) + 1:
                odd = {
                    index
                    for index, (part, text) in enumerate(zip(parts, texts, strict=True))
                    if len(part) != len(text)
                }
                parts = ["" if index in odd else part for index, part in enumerate(parts)]
            lowered = "\n".join(parts)
        # Where each text's newline ends it in the joined text.
        ends = list(map(operator.add, itertools.accumulate(map(len, parts)), itertools.count(1)))
        found: dict[int, list[_Hit]] = {}
        hits: list[_Hit] = []
        start = end = 0
        for position, rules in self._index.hits(lowered):
            if position >= end:
                index = bisect.bisect_right(ends, position)
                end = ends[index]
                start = end - len(parts[index]) - 1
                hits = found[index] = []
            hits.append((position - start, rules))
        worth = {index for index, hits in found.items() if self._could(texts[index], hits)}
        # Hits no rule can turn into a finding are none: the text is judged without them.
        for index in found.keys() - worth:
            del found[index]
        return found, worth | odd

    def _triggered(self, fragments: Sequence[Fragment]) -> list[int]:
        """The fragments at paths that have a rule tried on every line: worth scanning
        whatever keywords they hold. Each path is looked up once a batch (a commit's
        fragments share a few paths)."""
        if not self._by_path.any_everywhere:
            return []
        paths = {path for path in set(map(_path_of, fragments)) if self._by_path.of(path)[1]}
        if not paths:
            return []
        return [index for index, fragment in enumerate(fragments) if fragment.path in paths]

    @staticmethod
    def _decodable(fragments: Sequence[Fragment]) -> set[int]:
        """The fragments that may hold a line whose decoded form differs (``decoded``):
        worth scanning whatever keywords they hold as stored."""
        return {index for index, fragment in enumerate(fragments) if may_decode(fragment.text)}

    def _could(self, text: str, hits: list[_Hit]) -> bool:
        """Whether some rule whose keyword the text holds could match in it: one whose
        required strings it holds too (a lockfile's every URL hits the URL rules'
        keyword, and none holds the ``@`` they require), and, with the native
        prefilter, whose loosened pattern matches somewhere in the text (ASCII).

        The text's lines joined are searched at once: a loosened pattern has no
        anchors nor lookarounds, and a newline is a boundary as a line's ends are,
        so it matches in the text wherever it matches in one of its lines. Nine in
        ten of git/git's texts with a keyword some rule requires no more of are
        passed over so, every line of them unjudged."""
        rules = frozenset().union(*[rules for _, rules in hits])
        requires = self._requires
        possible = [
            index
            for index in rules
            if index in self._unconditional or _holds(requires[index], text)
        ]
        if not possible or self._native is None or not text.isascii():
            return bool(possible)
        return bool(self._native.possible(text, possible, self._native_patterns))

    def scan(self, fragment: Fragment) -> list[Finding]:
        """The findings of one fragment, reviewed ones removed, allowlisted ones flagged
        (or dropped, without ``include_allowlisted``); every one hidden is counted."""
        return self._scan(fragment, None)

    def _scan(
        self, fragment: Fragment, hits: list[_Hit] | None, decodable: bool | None = None
    ) -> list[Finding]:
        """``scan``, with the text's keyword hits when a batch's search found them, and
        whether it ``may_decode`` when the batch asked."""
        exempt = self._path_exempt(fragment.path)
        # Compared once here, not per line: equal sets of 288 names compare name by name.
        everything = exempt is self._all_names or exempt == self._all_names
        findings: list[Finding] = []
        judged: set[int] = set()
        own = None
        if fragment.before or fragment.after:
            # judged with the lines around it, which hold a finding's other half only
            own = range(fragment.start_line, fragment.start_line + _line_count(fragment.text))
            fragment = _in_context(fragment)
            hits = decodable = None  # both were of the text without its context
        try:
            lines = self._candidates(fragment.text, fragment.path, hits)
            self._judge_lines(
                fragment, lines, exempt, findings, judged, everything=everything, own=own
            )
            if may_decode(fragment.text) if decodable is None else decodable:
                self._judge_views(
                    fragment, exempt, findings, judged, everything=everything, own=own
                )
        except OutOfTime as stop:
            self._reviewed_seen.clear()
            stop.findings = findings
            raise
        self.silenced["reviewed"] += len(self._reviewed_seen)
        self._reviewed_seen.clear()
        return findings

    def _judge_lines(  # noqa: PLR0913 - the fragment's lines, and where their findings go
        self,
        fragment: Fragment,
        lines: Iterable[tuple[_Line, list[int]]],
        exempt: frozenset[str],
        findings: list[Finding],
        judged: set[int],
        *,
        everything: bool,
        own: range | None = None,
    ) -> None:
        """Each line's finding into ``findings``; ``judged`` gets the line number of
        every finding, those hidden too. ``own``: the lines added, where the others
        are context, and a finding only on those is not the fragment's."""
        deadline = self.deadline
        clean = self._clean
        below: set[int] = set()
        for line, rule_indexes in lines:
            if deadline is not None and time.monotonic() >= deadline:
                raise OutOfTime
            # Half the candidate lines of a history were judged clean before: they
            # are passed over here, without the calls that would say so.
            if everything and (line.text, tuple(rule_indexes)) in clean:
                continue
            finding = self._judge_exempt_first(
                fragment, line, rule_indexes, exempt, everything=everything
            )
            if finding is None or finding.line in below:
                continue
            if own is not None and not self._rests_on(
                own, finding, fragment.start_line + line.index
            ):
                continue
            judged.add(finding.line)
            if finding.line != fragment.start_line + line.index:
                # Reported on a later line (its secret's): that line is judged already.
                below.add(finding.line)
            if finding.rule not in exempt or finding.allowlisted:
                self.silenced["path" if finding.rule not in exempt else "pragma"] += 1
                if not self.ruleset.include_allowlisted:
                    continue
                finding = _replace_allowlisted(finding)
            findings.append(finding)

    def _rests_on(self, own: range, finding: Finding, matched: int) -> bool:
        """Whether a finding of a rule that matched on line ``matched`` rests on one of
        the ``own`` lines: it is on one, or it matched on one, or its rule read one of
        the lines above the match (a name added above a value it makes a secret)."""
        if finding.line in own or matched in own:
            return True
        rule = self._by_name.get(finding.rule)
        if rule is None or rule.previous_line is None:
            return False
        return any(matched - above in own for above in range(1, rule.previous_lines + 1))

    def _judge_views(  # noqa: PLR0913 - as _judge_lines
        self,
        fragment: Fragment,
        exempt: frozenset[str],
        findings: list[Finding],
        judged: set[int],
        *,
        everything: bool,
        own: range | None = None,
    ) -> None:
        """The findings of the fragment's lines as their readers see them (``decoded``),
        each on its line and shown decoded, its secret masked as any: where the line
        as stored had none, or a weaker one (the decoded form's first rule is the
        line's, unless it blocks less)."""
        reported = {finding.line: position for position, finding in enumerate(findings)}
        # A value reviewed in one form is reviewed in the other: one review per value.
        reviewed = {fragment.start_line + index for index in self._reviewed_seen}
        dropped: set[int] = set()
        added = False
        for view in views(fragment.text):
            number = fragment.start_line + view.line
            if number in reviewed or (number in judged and number not in reported):
                continue  # a finding hidden as stored is hidden decoded
            found, inner, passed_over = self._judge_view(
                fragment, view, exempt, everything=everything, own=own
            )
            for line_number in passed_over:
                # reviewed decoded: the line's finding as stored is that value too
                reviewed.add(line_number)
                self._reviewed_seen.add(line_number - fragment.start_line)
                if line_number in reported:
                    dropped.add(reported[line_number])
            added |= _merge_view(findings, reported, judged, found)
            judged.update(inner)
        if dropped:
            findings[:] = [kept for at, kept in enumerate(findings) if at not in dropped]
        if added:
            findings.sort(key=_line_of)

    def _judge_view(
        self,
        fragment: Fragment,
        view: View,
        exempt: frozenset[str],
        *,
        everything: bool,
        own: range | None,
    ) -> tuple[list[Finding], set[int], set[int]]:
        """One decoded view judged on its own: its findings, the lines they are on, and
        the lines where a reviewed value was passed over (line numbers of ``fragment``)."""
        number = fragment.start_line + view.line
        seen = Fragment(
            path=fragment.path,
            text=view.text,
            start_line=number,
            commit=fragment.commit,
            ref=fragment.ref,
        )
        lines = self._candidates(view.text, fragment.path, None)
        if view.first_only:
            lines = [(line, rules) for line, rules in lines if line.index == 0]
        found: list[Finding] = []
        inner: set[int] = set()
        stored_reviewed, self._reviewed_seen = self._reviewed_seen, set()
        try:
            self._judge_lines(seen, lines, exempt, found, inner, everything=everything, own=own)
        finally:
            passed_over, self._reviewed_seen = self._reviewed_seen, stored_reviewed
        passed = {number + index for index in passed_over}
        if view.first_only:
            found = [finding for finding in found if finding.line == number]
            inner &= {number}
            passed &= {number}
        return found, inner, passed

    def _candidates(
        self, text: str, path: str, hits: list[_Hit] | None
    ) -> list[tuple[_Line, list[int]]]:
        """Lines where some rule can match, with those rules' indexes in order: the
        rules for other paths left out, the rules for this path's every line put in,
        and those whose required strings the line lacks left out (they cannot match
        it, and a line left with none costs no judging at all: a lockfile's URLs hit
        the URL rules' keywords, line after line). ``hits``: the text's keyword hits,
        or None to search it here."""
        if not text:
            return []
        excluded, everywhere = self._by_path.of(path)
        always = self._index.always | everywhere
        found_hits: Iterable[_Hit] | None = hits
        if found_hits is None:
            lowered = text.lower()
            if len(lowered) != len(text):
                return self._possible(self._candidates_by_line(text, always), excluded)
            found_hits = self._index.hits(lowered)
        hit_lines = _lines_of_hits(text, found_hits)
        if not always:
            return self._possible(hit_lines, excluded)
        found = {line.index: rules for line, rules in hit_lines}
        every_line = ((line, found.get(line.index, always) | always) for line in _all_lines(text))
        return self._possible(every_line, excluded)

    def _possible(
        self, lines: Iterable[tuple[_Line, Iterable[int]]], excluded: frozenset[int]
    ) -> list[tuple[_Line, list[int]]]:
        """Each line with its rules in order, without ``excluded`` and those whose
        required strings it lacks; the lines left with none left out."""
        requires = self._requires
        possible = []
        for line, rules in lines:
            text = line.text
            kept = [
                index
                for index in sorted(rules)
                if index not in excluded
                and (not requires[index] or any(needed in text for needed in requires[index]))
            ]
            if kept and self._native is not None and text.isascii():
                kept = self._native.possible(text, kept, self._native_patterns)
            if kept:
                possible.append((line, kept))
        return possible

    def _candidates_by_line(
        self, text: str, always: frozenset[int]
    ) -> Iterator[tuple[_Line, frozenset[int]]]:
        """The lines of a text some of whose characters lower to two, with the rules
        of the keywords each holds and ``always``: positions in the lowered text would
        drift from the text's, so each line is lowered on its own, and one search of
        the lowered lines joined by newlines (no keyword spans one) finds the keywords
        of each.
        """
        lines = list(_all_lines(text))
        lowered = [line.text.lower() for line in lines]
        ends = list(itertools.accumulate(len(part) + 1 for part in lowered))
        found: dict[int, set[int]] = {}
        for position, rules in self._index.hits("\n".join(lowered)):
            found.setdefault(bisect.bisect_right(ends, position), set()).update(rules)
        for number, line in enumerate(lines):
            line_rules = found.get(number)
            if line_rules is not None or always:
                yield line, always.union(line_rules or ())

    def _judge_exempt_first(
        self,
        fragment: Fragment,
        line: _Line,
        rule_indexes: list[int],
        exempt: frozenset[str],
        *,
        everything: bool,
    ) -> Finding | None:
        """The line's finding among the rules the path's allowlist does not hide; only
        without one, among all (to be counted as hidden, or flagged).

        What a repository loosened must not shadow a locked rule's secret later on the
        line: neither a rule its ``allowlist_paths`` hides, nor one its warn mode turned
        into a warning, nor one a pragma silences. ``everything``: ``exempt`` holds
        every rule.
        """
        if everything:
            finding = self._judge_line(fragment, line, rule_indexes)
            locked = self.ruleset.locked
            if finding is None or not locked or finding.rule in locked:
                return finding
            if finding.blocking and not finding.allowlisted:
                return finding
            return self._judge_among(fragment, line, rule_indexes, locked) or finding
        finding = self._judge_among(fragment, line, rule_indexes, exempt)
        if finding is None:
            return self._judge_line(fragment, line, rule_indexes)
        return finding

    def _judge_among(
        self, fragment: Fragment, line: _Line, rule_indexes: list[int], names: frozenset[str]
    ) -> Finding | None:
        """The line's finding among the rules ``names``; every other rule's matches masked."""
        shown = [index for index in rule_indexes if self.rules[index].name in names]
        finding = self._judge_line(fragment, line, shown)
        if finding is None or finding.truncated:
            return finding
        return replace(finding, hidden=self._other_secrets(line, rule_indexes, finding))

    def _judge_line(
        self, fragment: Fragment, line: _Line, rule_indexes: list[int]
    ) -> Finding | None:
        key = None
        if len(line.text) <= _CLEAN_LINE_LENGTH and self._looking_ahead.isdisjoint(rule_indexes):
            key = (line.text, tuple(rule_indexes))
            if key in self._clean:
                return None
        reviewed = self._reviewed_skips
        finding = self._first_finding(fragment, line, rule_indexes)
        # A line with a reviewed match is judged every time, so that each is counted.
        if finding is None and key is not None and self._reviewed_skips == reviewed:
            if len(self._clean) >= _CLEAN_LINES:
                self._clean.clear()
            self._clean.add(key)
        return finding

    def _first_finding(
        self, fragment: Fragment, line: _Line, rule_indexes: list[int]
    ) -> Finding | None:
        """The line's finding: the first rule's first match that is not reviewed. With
        ``--include-reviewed``, a line whose every match is reviewed reports its first,
        flagged; a line with a secret beside a reviewed string still reports the secret."""
        # Spans whose text is reviewed for every rule: another rule's match there is
        # the same value found again, reviewed too (one review clears a line).
        covered: list[tuple[int, int]] = []
        first_reviewed: tuple[int, regex.Match[str]] | None = None
        for position, index in enumerate(rule_indexes):
            if self.rules[index].name in self._broken:
                continue
            if not self._reviewed_index:
                match = next(self._matches(index, line), None)
            else:
                match = self._first_unreviewed(index, line, covered)
                if match is None and first_reviewed is None and self.ruleset.include_reviewed:
                    reviewed = next(self._matches(index, line), None)
                    first_reviewed = None if reviewed is None else (position, reviewed)
            if match is not None:
                return self._finding_of(fragment, line, rule_indexes[position:], match)
        if first_reviewed is None:
            return None
        position, match = first_reviewed
        finding = self._finding_of(fragment, line, rule_indexes[position:], match)
        return replace(finding, reviewed=True, blocking=False)

    def _finding_of(
        self, fragment: Fragment, line: _Line, rule_indexes: list[int], match: regex.Match[str]
    ) -> Finding:
        """The finding of ``match``, a match of the first of ``rule_indexes``; the other
        secrets its line shows, by those rules, masked with it."""
        rule = self.rules[rule_indexes[0]]
        # A rule that reads past its line (a YAML block scalar's value, a plist's
        # <string>) reports the line its secret is on: that is the line to fix,
        # and the one a report shows and masks.
        shown = _secret_line(rule, line, match)
        pragma = rule.name in self._pragma_rules and (
            has_pragma(line.text) or (shown is not line and has_pragma(shown.text))
        )
        finding = (
            _finding(fragment, line, rule, match, allowlisted=pragma)
            if shown is line
            else replace(_finding_below(fragment, line, shown, rule, match), allowlisted=pragma)
        )
        if finding.truncated:
            return finding
        # Only this match is reported, but the line is shown with it: the
        # other secrets on it must be masked as well.
        hidden = self._other_secrets(shown, rule_indexes, finding)
        return replace(finding, hidden=hidden)

    def _first_unreviewed(
        self, index: int, line: _Line, covered: list[tuple[int, int]]
    ) -> regex.Match[str] | None:
        """Rule ``index``'s first match on the line that is not a reviewed string: a
        reviewed string is no finding, and must not hide a secret after it on the line.

        A match is reviewed when its whole text or its secret value equals an entry for
        its rule or for every rule, or when its value lies within ``covered``, text an
        earlier rule's match found reviewed for every rule (``AWS_SECRET_ACCESS_KEY``'s
        value, found again by ``GENERIC_API_KEY``). Such text is added to ``covered``.
        """
        rule = self.rules[index]
        for match in self._matches(index, line):
            # The whole match, or the secret proper: a GENERIC_PASSWORD finding is
            # reviewed by the password a user has in hand, not the masked assignment.
            start, end = unquoted(match.string, *_secret_span(rule, match))
            whole = self._reviewed(rule.name, match.group(0))
            value = self._reviewed(rule.name, match.string[start:end])
            if not (whole or value) and not any(
                low <= start <= end <= high for low, high in covered
            ):
                return match
            if whole == _EVERY_RULE:
                covered.append(match.span())
            elif value == _EVERY_RULE:
                covered.append((start, end))
            self._reviewed_seen.add(line.index)
            self._reviewed_skips += 1
        return None

    def _other_secrets(
        self, line: _Line, rule_indexes: list[int], reported: Finding
    ) -> tuple[tuple[int, int], ...]:
        """The secret spans of every other match on the line by ``rule_indexes``; the
        reporting rule is searched only past its match (what it skipped was reviewed)."""
        spans: set[tuple[int, int]] = set()
        for index in rule_indexes:
            rule = self.rules[index]
            if rule.name in self._broken:
                continue
            start = reported.line_offset_end if rule.name == reported.rule else 0
            spans.update(_secret_span(rule, match) for match in self._matches(index, line, start))
        return tuple(sorted(spans))

    def _matches(self, index: int, line: _Line, start: int = 0) -> Iterator[regex.Match[str]]:
        """Rule ``index``'s acceptable matches on the line from ``start``, in order."""
        rule = self.rules[index]
        subject = line.text
        if not _holds(rule.requires, subject):
            return
        if rule.previous_line is not None and not pattern_of(rule.previous_line).search(
            _previous(line, rule.previous_lines)
        ):
            return
        if rule.lookahead:
            subject = line.whole[line.start : line.end + LOOKAHEAD_CHARS]
        pattern = self._patterns[index]
        if pattern is None:
            pattern = self._patterns[index] = compiled(rule)
        end = len(line.text)
        timeout, by_deadline = (
            (self.ruleset.rule_timeout, False) if self.deadline is None else self._timeout()
        )
        try:
            for match in pattern.finditer(subject, start, timeout=timeout):
                if match.start() >= end:
                    return
                if match.end() > end or not self._acceptable(rule, match):
                    continue
                yield match
        except TimeoutError:
            if by_deadline:
                raise OutOfTime from None
            self._broken.add(rule.name)
            self.errors.append(
                RuleError(
                    rule=rule.name,
                    message=(
                        f"rule {rule.name} exceeded its time budget of "
                        f"{self.ruleset.rule_timeout:g} s on one line and was skipped "
                        "for the rest of the scan"
                    ),
                )
            )

    def _timeout(self) -> tuple[float, bool]:
        """A rule's time for one line: its budget, or what is left before the deadline
        when that is less (True: the deadline bounds it)."""
        budget = self.ruleset.rule_timeout
        if self.deadline is None:
            return budget, False
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime
        return (left, True) if left < budget else (budget, False)

    def _acceptable(self, rule: Rule, match: regex.Match[str]) -> bool:
        """Filters that turn a regex match into no match (placeholders, low entropy...)."""
        return self.rejection(rule, match) is None

    def rejection(self, rule: Rule, match: regex.Match[str]) -> str | None:
        """Why a match of ``rule`` is no finding (what ``rules --explain`` says), or None."""
        return next(self._rejections(rule, match), None)

    def _rejections(self, rule: Rule, match: regex.Match[str]) -> Iterator[str]:
        """The reasons a match is no finding, in the order they are checked (the first
        is enough: ``rejection`` asks for no more)."""
        if not match.group(0):
            yield "it matches the empty string"
        start, end = _secret_span(rule, match)
        yield from _implausibilities(rule, match.string[start:end])
        # A digest labelled as one (a RECORD's sha256=, a lock file's sha512-) is no key,
        # whatever piece of it a rule took for one.
        if rule.kind == "builtin" and in_hash_context(match.string, start):
            yield "its value lies in a digest labelled as one (sha256=, integrity, h1:...)"
        if rule.value_filter in _BY_SHAPE:
            if not _by_shape(rule.value_filter, match, (start, end)):
                yield "its value does not look generated, or its name says it is no secret"
        elif rule.value_filter is not None:
            settings = (
                self.ruleset.password_filters
                if rule.value_filter == "password"
                else REFERENCE_FILTERS
            )
            if password_value_rejected(_as_written(rule, match), settings):
                yield "its value is a reference, a placeholder or too short"

    def explain(self, text: str) -> list[tuple[str, str | None]]:
        """Each enabled rule whose pattern matches ``text`` (one line), with why its
        match is no finding (None: it is one), in judging order."""
        verdicts: list[tuple[str, str | None]] = []
        line = _Line(text, 0, len(text), 0)
        for index, rule in enumerate(self.rules):
            if not _holds(rule.requires, text):
                continue
            matches = list(self._all_matches(index, line))
            if matches:
                reasons = [self.rejection(rule, match) for match in matches]
                verdicts.append((rule.name, None if None in reasons else reasons[0]))
        return verdicts

    def _all_matches(self, index: int, line: _Line) -> Iterator[regex.Match[str]]:
        """Rule ``index``'s matches on the line, acceptable or not."""
        pattern = self._patterns[index] or compiled(self.rules[index])
        return pattern.finditer(line.text, timeout=self.ruleset.rule_timeout)

    def _reviewed(self, rule: str, match_text: str) -> str | None:
        """Whether ``match_text`` is reviewed for ``rule``: ``_EVERY_RULE`` when an entry
        without a rule names it, the rule's name when only entries for it do, else None."""
        found = None
        for salt, digests in self._reviewed_index.items():
            rules = digests.get(reviewed_digest(match_text, salt))
            if rules is not None:
                if None in rules:
                    return _EVERY_RULE
                if rule in rules:
                    found = rule
        return found


#: What ``Scanner._reviewed`` answers for a string an entry without a rule names.
_EVERY_RULE = "*"
#: The value filters that judge a value by its shape (detection/shape.py): near its
#: secret word (GENERIC_TOKEN_NEAR_WORD), handed to a client by position
#: (GENERIC_CLIENT_ARGUMENT), or alone (GENERIC_SECTION_KEY).
_BY_SHAPE = frozenset({"generated", "argument", "shape"})


def _by_shape(kind: str, match: regex.Match[str], secret: tuple[int, int]) -> bool:
    if kind == "generated":
        return near_secret_word(match.string, match.span("word"), match.end("tail"), secret)
    if kind == "argument":
        message = "selector" in match.re.groupindex and match.start("selector") != -1
        return client_argument(match.string, match.span("callee"), secret, message=message)
    return generated_value(match.string, secret)


#: A keyword hit: its position in a text, and the rules the keywords found there name.
_Hit = tuple[int, frozenset[int]]
_path_of = operator.attrgetter("path")
_line_of = operator.attrgetter("line")
_NO_HITS: list[_Hit] = []
#: A keyword no text holds (scanned texts hold no NUL: binary files are skipped).
_NO_TEXT = "\x00"
#: Paths remembered by _PathRules; a scan meets a few thousand at most.
_PATHS_KEPT = 4096


class _PathRules:
    """Which rules a file's path leaves out, and which it has tried on every line."""

    __slots__ = ("_known", "_rules", "any_everywhere")

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = [
            (index, rule.path, not rule.keywords)
            for index, rule in enumerate(rules)
            if rule.path is not None
        ]
        self._known: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
        #: Whether some rule is tried on every line of the files it names.
        self.any_everywhere = any(bare for _, _, bare in self._rules)

    def of(self, path: str) -> tuple[frozenset[int], frozenset[int]]:
        """(rules left out, rules tried on every line) for a file at ``path``."""
        if not self._rules:
            return _NONE
        known = self._known.get(path)
        if known is None:
            # an archive's member is a file at its own path inside it
            own = path.rpartition(ARCHIVE_SEPARATOR)[2]
            matching = {
                index for index, pattern, _ in self._rules if path_pattern(pattern).search(own)
            }
            known = (
                frozenset(index for index, _, _ in self._rules if index not in matching),
                frozenset(index for index, _, bare in self._rules if bare and index in matching),
            )
            if len(self._known) >= _PATHS_KEPT:
                self._known.clear()
            self._known[path] = known
        return known


_NONE: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())


class _Line:
    """A line of a fragment: its 0-based index and where it lies in the whole text."""

    __slots__ = ("end", "index", "start", "text", "whole")

    def __init__(self, whole: str, start: int, end: int, index: int) -> None:
        """``end`` is where the line's newline is, or the end of the text."""
        if end > start and whole[end - 1] == "\r":
            end -= 1
        self.whole = whole
        self.index = index
        self.start = start
        self.end = end
        self.text = whole[start:end]


def _previous(line: _Line, count: int = 1) -> str:
    """The text of the ``count`` lines before ``line`` in its fragment (fewer at its
    start), joined by newlines; empty for the first line."""
    if line.start == 0:
        return ""
    end = start = line.start - 1
    for _ in range(count):
        start = line.whole.rfind("\n", 0, start)
        if start == -1:
            break
    return line.whole[start + 1 : end].replace("\r\n", "\n").rstrip("\r")


def _line_count(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n"))


def _in_context(fragment: Fragment) -> Fragment:
    """The fragment with the lines around it (``Fragment.before``, ``after``) as its text."""
    text = fragment.text if fragment.text.endswith("\n") else fragment.text + "\n"
    return Fragment(
        path=fragment.path,
        text=fragment.before + text + fragment.after,
        start_line=fragment.start_line - fragment.before.count("\n"),
        commit=fragment.commit,
        ref=fragment.ref,
        moved_from=fragment.moved_from,
    )


def _merge_view(
    findings: list[Finding], reported: dict[int, int], judged: set[int], found: list[Finding]
) -> bool:
    """A view's findings into the fragment's: on a line with none, or in place of a
    weaker one (``reported``: line -> position). Whether one was added."""
    added = False
    for finding in found:
        position = reported.get(finding.line)
        if position is None and finding.line not in judged:
            reported[finding.line] = len(findings)
            findings.append(finding)
            added = True
        elif position is not None and (finding.blocking or not findings[position].blocking):
            findings[position] = finding
    return added


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end == -1 else end


def _all_lines(text: str) -> Iterator[_Line]:
    start = index = 0
    while start < len(text):
        end = _line_end(text, start)
        yield _Line(text, start, end, index)
        start, index = end + 1, index + 1


def _holds(requires: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` holds one of a rule's required strings (or it requires none):
    without one, the rule cannot match there."""
    return not requires or any(needed in text for needed in requires)


def _lines_of_hits(
    text: str, hits: Iterable[tuple[int, frozenset[int]]]
) -> Iterator[tuple[_Line, frozenset[int]]]:
    """Keyword hits (in text order) grouped by the line they fall on.

    Only the lines with hits are located: newlines are counted between hits,
    so a large file with a few hits costs a few ``str.count`` calls.
    """
    line: _Line | None = None
    rules: frozenset[int] = frozenset()
    index = counted = 0
    for position, hit_rules in hits:
        if line is None or position > line.end:
            if line is not None:
                yield line, rules
            index += text.count("\n", counted, position)
            counted = position
            start = text.rfind("\n", 0, position) + 1
            line = _Line(text, start, _line_end(text, position), index)
            rules = hit_rules
        elif hit_rules is not rules:
            # Most lines hold one hit: a union only for the others.
            rules |= hit_rules
    if line is not None:
        yield line, rules


def _finding(
    fragment: Fragment, line: _Line, rule: Rule, match: regex.Match[str], *, allowlisted: bool
) -> Finding:
    start, end = match.span()
    secret_start, secret_end = _secret_span(rule, match)
    return _finding_at(
        fragment, line, rule, (start, end, secret_start, secret_end), allowlisted=allowlisted
    )


def _finding_at(
    fragment: Fragment,
    line: _Line,
    rule: Rule,
    spans: tuple[int, int, int, int],
    *,
    allowlisted: bool,
) -> Finding:
    """The finding of a match at ``spans`` (its start and end, its secret's start and
    end) in ``line``'s text."""
    start, end, secret_start, secret_end = spans
    match_text = line.text[start:end]
    truncated = len(line.text) > MAX_LINE_LENGTH
    text = match_text if truncated else line.text
    offset = 0 if truncated else start
    return Finding(
        rule=rule.name,
        blocking=rule.blocking,
        path=fragment.path,
        line=fragment.start_line + line.index,
        text=text,
        line_offset_start=offset,
        line_offset_end=offset + (end - start),
        truncated=truncated,
        match_text=match_text,
        secret_start=secret_start - start,
        secret_end=secret_end - start,
        fingerprint=finding_fingerprint(
            rule=rule.name,
            path=fragment.path,
            commit=fragment.commit.id if fragment.commit else None,
            line=fragment.start_line + line.index,
            column=start,
        ),
        commit=fragment.commit,
        ref=fragment.ref,
        allowlisted=allowlisted,
    )


def _secret_line(rule: Rule, line: _Line, match: regex.Match[str]) -> _Line:
    """The line the match's secret lies on: ``line``, or a later one for a rule that
    looks past its line and names its secret there."""
    secret_start, _ = _secret_span(rule, match)
    if secret_start <= len(line.text):
        return line
    subject = match.string
    start = subject.rfind("\n", 0, secret_start) + 1
    below = subject.count("\n", 0, start)
    begin = line.start + start
    return _Line(line.whole, begin, _line_end(line.whole, begin), line.index + below)


def _finding_below(
    fragment: Fragment, line: _Line, shown: _Line, rule: Rule, match: regex.Match[str]
) -> Finding:
    """The finding of a match on ``line`` whose secret lies on ``shown``, a later line:
    reported there, the secret as its match (not yet allowlisted)."""
    # The match's offsets count from ``line``'s start: its subject runs on past it.
    secret_start, secret_end = _secret_span(rule, match)
    start = secret_start - (shown.start - line.start)
    end = min(start + secret_end - secret_start, len(shown.text))
    return _finding_at(fragment, shown, rule, (start, end, start, end), allowlisted=False)


def _implausibilities(rule: Rule, secret: str) -> Iterator[str]:
    """Why the rule's stopwords, allow patterns, entropy floor or checks rule the secret
    out, in the order they are checked."""
    if rule.stopwords:
        lowered = secret.lower()
        if any(word in lowered for word in rule.stopwords):
            yield "its value holds one of the rule's stopwords (example, sample...)"
    if any(pattern_of(pattern).search(secret) for pattern in rule.allow):
        yield "its value matches one of the rule's allowed patterns"
    if rule.min_entropy and shannon(secret) < _floor(rule, secret):
        yield "its value's entropy is under the rule's floor"
    if rule.checksum is not None and not passes(rule.checksum, secret):
        yield _CHECK_FAILS.get(rule.checksum, f"its {rule.checksum} check fails")
    if rule.kind == "builtin":
        # ABCDEFGHIJKLMNOP, an RFC's sample token or a token with a wrong checksum is
        # an example, not a key.
        if is_sequential(secret):
            yield "its value holds a run of letters or digits in order (ABCDEFGH, 12345678)"
        if is_documented_example(secret):
            yield "its value is an example a specification or a vendor's documentation prints"
        if fails_published_check(secret):
            yield _CHECK_FAILS["github_crc32"]


_CRC = (
    "its checksum fails: a GitHub or npm token ends in the CRC32 of its random part "
    "(six base62 characters), and this one's does not match, so it was made up"
)
#: Why a token whose provider's check fails is no finding, by check.
_CHECK_FAILS = {
    "github_crc32": _CRC,
    "npm_crc32": _CRC,
    "basic_credentials": "it decodes to a placeholder user:password pair",
}


#: The entropy floor of a long hexadecimal value (a key or a token of 16 symbols
#: reaches 4 bits a character at most, and 40 random ones about 3.7): a rule's floor
#: for values of any alphabet would miss half the hexadecimal keys.
_HEX_FLOOR = 3.0
_HEX_LENGTH = 32


def _floor(rule: Rule, secret: str) -> float:
    if (
        rule.min_entropy > _HEX_FLOOR
        and len(secret) >= _HEX_LENGTH
        and all(character in _HEX_DIGITS for character in secret)
    ):
        return _HEX_FLOOR
    return rule.min_entropy


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _secret_span(rule: Rule, match: regex.Match[str]) -> tuple[int, int]:
    """Where the secret group matched; the whole match when it took no part in it.

    A rule whose alternatives name the secret in only some of them (a bare token
    or an assignment of it) judges the whole match for the others.
    """
    if rule.secret_group:
        span: tuple[int, int] = match.span(rule.secret_group)
        if span[0] != -1:
            return span
    return match.span()


_QUOTES = "\"'`"


def _as_written(rule: Rule, match: regex.Match[str]) -> str:
    """The secret with the quotes that enclose it on the line: a quoted value is a
    literal, whatever it looks like (``token = "NjA5.jZt.FXu"`` is no attribute chain)."""
    start, end = _secret_span(rule, match)
    text = match.string
    if start > 0 and end < len(text) and text[start - 1] == text[end] and text[end] in _QUOTES:
        return text[start - 1 : end + 1]
    return text[start:end]


def _replace_allowlisted(finding: Finding) -> Finding:
    return replace(finding, allowlisted=True)
