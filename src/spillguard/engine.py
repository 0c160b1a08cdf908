"""The rule engine: judges text with the server app's semantics. Knows nothing of git.

For each line, the enabled rules are tried in order and only the first rule that
matches is reported; the finding is the whole match (group 0). A keyword prefilter
over the whole fragment decides which rules can possibly match which lines, so most
text never reaches a regular expression.
"""

from __future__ import annotations

import bisect
import functools
from collections import defaultdict
from typing import TYPE_CHECKING

import regex

from spillguard.allowlist import has_pragma, path_allowlisted
from spillguard.entropy import shannon
from spillguard.filters import password_value_rejected
from spillguard.fingerprint import finding_fingerprint, reviewed_digest
from spillguard.models import MAX_LINE_LENGTH, Finding, Fragment, Rule, RuleError, RuleSet

if TYPE_CHECKING:
    from collections.abc import Iterator

#: How far past its line a ``lookahead`` rule may look (a PEM body follows its header).
LOOKAHEAD_CHARS = 512


@functools.cache
def _compile(regexp: str, flags: int) -> regex.Pattern[str]:
    return regex.compile(regexp, flags)


def compiled(rule: Rule) -> regex.Pattern[str]:
    """The rule's compiled pattern, compiling (once per process) on first use."""
    return rule.pattern if rule.pattern is not None else _compile(rule.regexp, rule.flags)


class Scanner:
    """Applies one RuleSet to fragments and remembers rule errors across them.

    A rule that exceeds its time budget is reported once and not tried again in
    this scan, so one catastrophic custom rule costs one budget, not one per line.
    """

    def __init__(self, ruleset: RuleSet) -> None:
        self.ruleset = ruleset
        self.rules = tuple(rule for rule in ruleset.rules if rule.enabled)
        self.errors: list[RuleError] = []
        self._broken: set[str] = set()
        self._keywordless = tuple(i for i, rule in enumerate(self.rules) if not rule.keywords)
        self._by_keyword: dict[str, list[int]] = defaultdict(list)
        for index, rule in enumerate(self.rules):
            for keyword in rule.keywords:
                self._by_keyword[keyword].append(index)

    def path_allowlisted(self, path: str) -> bool:
        return path_allowlisted(path, self.ruleset.allowlist_paths)

    def scan(self, fragment: Fragment) -> list[Finding]:
        """The findings of one fragment, reviewed ones removed, allowlisted ones flagged."""
        allowlisted_path = self.path_allowlisted(fragment.path)
        if allowlisted_path and not self.ruleset.include_allowlisted:
            return []
        findings = []
        for line_index, rule_indexes in self._candidates(fragment.text):
            finding = self._judge_line(fragment, line_index, rule_indexes)
            if finding is None or self._reviewed(finding):
                continue
            if allowlisted_path or finding.allowlisted:
                if not self.ruleset.include_allowlisted:
                    continue
                finding = _replace_allowlisted(finding)
            findings.append(finding)
        return findings

    def _candidates(self, text: str) -> Iterator[tuple[_Line, list[int]]]:
        """Lines that hold a keyword of some rule, with those rules' indexes in order."""
        if not text:
            return
        starts = _line_starts(text)
        lowered = text.lower()
        if len(lowered) != len(text):
            # Some non-ASCII characters change length when lowered; positions would
            # drift, so lower each line on its own (rare, and still correct).
            yield from self._candidates_by_line(text, starts)
            return
        per_line: dict[int, set[int]] = defaultdict(set)
        for keyword, rule_indexes in self._by_keyword.items():
            position = lowered.find(keyword)
            while position != -1:
                line = bisect.bisect_right(starts, position) - 1
                per_line[line].update(rule_indexes)
                next_start = starts[line + 1] if line + 1 < len(starts) else len(text)
                position = lowered.find(keyword, next_start)
        lines = range(len(starts)) if self._keywordless else sorted(per_line)
        for line in lines:
            indexes = sorted(per_line.get(line, set()).union(self._keywordless))
            if indexes:
                yield _Line(text, starts, line), indexes

    def _candidates_by_line(
        self, text: str, starts: list[int]
    ) -> Iterator[tuple[_Line, list[int]]]:
        for line in range(len(starts)):
            current = _Line(text, starts, line)
            lowered = current.text.lower()
            indexes = [
                index
                for index, rule in enumerate(self.rules)
                if not rule.keywords or any(keyword in lowered for keyword in rule.keywords)
            ]
            if indexes:
                yield current, indexes

    def _judge_line(
        self, fragment: Fragment, line: _Line, rule_indexes: list[int]
    ) -> Finding | None:
        for index in rule_indexes:
            rule = self.rules[index]
            if rule.name in self._broken:
                continue
            match = self._match(rule, line)
            if match is not None:
                return _finding(fragment, line, rule, match)
        return None

    def _match(self, rule: Rule, line: _Line) -> regex.Match[str] | None:
        """The rule's first acceptable match on the line, if any."""
        subject = line.text
        if rule.lookahead:
            subject = line.whole[line.start : line.end + LOOKAHEAD_CHARS]
        try:
            for match in compiled(rule).finditer(subject, timeout=self.ruleset.rule_timeout):
                if match.start() >= len(line.text):
                    return None
                if match.end() > len(line.text) or not self._acceptable(rule, match):
                    continue
                return match
        except TimeoutError:
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
        return None

    def _acceptable(self, rule: Rule, match: regex.Match[str]) -> bool:
        """Filters that turn a regex match into no match (placeholders, low entropy...)."""
        if not match.group(0):
            return False
        secret = match.group(rule.secret_group) if rule.secret_group else match.group(0)
        if secret is None:
            return False
        if rule.stopwords:
            lowered = secret.lower()
            if any(word in lowered for word in rule.stopwords):
                return False
        if any(pattern.search(secret) for pattern in rule.allow):
            return False
        if rule.min_entropy and shannon(secret) < rule.min_entropy:
            return False
        return not (
            rule.value_filter == "password"
            and password_value_rejected(secret, self.ruleset.password_filters)
        )

    def _reviewed(self, finding: Finding) -> bool:
        entries = self.ruleset.reviewed
        if not entries:
            return False
        digests: dict[str, str] = {}
        for entry in entries:
            if entry.rule not in (None, finding.rule):
                continue
            salt = self.ruleset.reviewed_salt if entry.salt is None else entry.salt
            if salt not in digests:
                digests[salt] = reviewed_digest(finding.match_text, salt)
            if entry.digest == digests[salt]:
                return True
        return False


class _Line:
    """A line of a fragment, sliced lazily from the fragment's text."""

    __slots__ = ("end", "index", "start", "text", "whole")

    def __init__(self, whole: str, starts: list[int], index: int) -> None:
        self.whole = whole
        self.index = index
        self.start = starts[index]
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(whole)
        if end > self.start and whole[end - 1] == "\r":
            end -= 1
        self.end = end
        self.text = whole[self.start : end]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    if starts[-1] == len(text) and len(starts) > 1:
        starts.pop()  # a final newline does not start another line
    return starts


def _finding(fragment: Fragment, line: _Line, rule: Rule, match: regex.Match[str]) -> Finding:
    start, end = match.span()
    match_text = line.text[start:end]
    secret_start, secret_end = match.span(rule.secret_group or 0)
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
        fingerprint=finding_fingerprint(rule.name, match_text, fragment.path),
        commit=fragment.commit,
        ref=fragment.ref,
        allowlisted=has_pragma(line.text),
    )


def _replace_allowlisted(finding: Finding) -> Finding:
    from dataclasses import replace

    return replace(finding, allowlisted=True)
