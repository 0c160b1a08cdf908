"""The combined keyword prefilter: one pass over a fragment says which rules can match where.

Every rule's keywords (lowercase) go into one trie-shaped alternation, compiled
once per rule set, and one left-to-right scan of the lowered text finds them.
At each hit the scan takes the longest keyword starting there; every keyword
inside it occurs too, so a hit stands for a precomputed set of rules. A keyword
that starts inside a hit and runs past its end begins with a suffix of the hit:
only at those few offsets is an anchored match tried. A rule is a candidate on a
line when one of its keywords occurs in the lowered line, and a rule without
keywords is a candidate on every line: the same sets as testing every keyword
against every line, for a fraction of the work.
"""

from __future__ import annotations

import operator
import re
from collections import defaultdict

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any

_Trie = dict[str, "_Trie"]
#: (rules of each keyword with those of the keywords inside it, the offsets where a
#: longer keyword may start inside each, the trie pattern or None without keywords)
_Tables = tuple[dict[str, frozenset[int]], dict[str, tuple[int, ...]], "re.Pattern[str] | None"]
_END = ""
#: Keywords by their first _GRAM characters, and the keywords shorter than that.
_Grams = tuple[dict[str, list[tuple[str, frozenset[int]]]], list[tuple[str, frozenset[int]]]]
_GRAM = 3


#: Texts shorter than this are searched keyword by keyword (``str.find``), which
#: needs no compiled pattern: a commit hook judging a small change never builds it.
SMALL_TEXT = 4096
#: Small texts longer than this search only the keywords whose first three characters
#: occur in them: one pass collects the text's three-character runs, which rules
#: out four keywords in five of a catalogue of hundreds of providers before any
#: ``str.find`` (each a pass over the text); shorter texts search every keyword,
#: which is as quick.
GRAM_FILTER = 512


class KeywordIndex:
    """Where the keywords of a rule list occur in a text, found in one regex pass."""

    __slots__ = (
        "_automaton",
        "_by_gram",
        "_by_keyword",
        "_keyword_rules",
        "_native",
        "_small_text",
        "_tables",
        "always",
    )

    def __init__(
        self,
        keywords_per_rule: Sequence[Iterable[str]],
        *,
        small_text: int = SMALL_TEXT,
        native: bool = True,
    ) -> None:
        """``keywords_per_rule[i]``: the lowercase keywords of rule ``i``, in rule order."""
        by_keyword: dict[str, set[int]] = defaultdict(set)
        always: list[int] = []
        for index, keywords in enumerate(keywords_per_rule):
            words = [word for word in keywords if word]
            if not words:
                always.append(index)
            for word in words:
                by_keyword[word].add(index)
        #: Rules tried on every line: they have no keywords.
        self.always = frozenset(always)
        self._by_keyword = {word: frozenset(rules) for word, rules in by_keyword.items()}
        #: Each keyword's rules by its index, as the native automaton names a keyword.
        self._keyword_rules = tuple(self._by_keyword.values())
        self._small_text = small_text
        #: Keywords by their first three characters, and those shorter than three,
        #: built on first need (a small text past GRAM_FILTER).
        self._by_gram: _Grams | None = None
        self._tables: _Tables | None = None
        #: The optional native Aho-Corasick automaton (the ``fast`` extra), built on
        #: first need; False once it is known to be unavailable or not wanted.
        self._native = native
        self._automaton: Any = None

    def _built(self) -> _Tables:
        """The pattern and its tables, built on first need (a large text)."""
        if self._tables is None:
            by_keyword = self._by_keyword
            trie = _trie(by_keyword)
            rules_of = {}
            inner = {}
            for word, rules in by_keyword.items():
                parts, inner[word] = _inside(word, trie)
                # A hit on keyword K also proves every keyword inside K.
                others = [by_keyword[part] for part in parts if part != word]
                rules_of[word] = rules.union(*others) if others else rules
            pattern = re.compile(_render(trie)) if by_keyword else None
            self._tables = (rules_of, inner, pattern)
        return self._tables

    def hits(self, lowered: str) -> Iterator[tuple[int, frozenset[int]]]:
        """(position, rule indexes) of the keyword hits in ``lowered``, in text order."""
        if self._tables is None and self._automaton is None and len(lowered) < self._small_text:
            yield from self._small_hits(lowered)
            return
        automaton = self._native_automaton()
        if automaton is not None:
            yield from self._native_hits(automaton, lowered)
            return
        rules_of, inner, pattern = self._built()
        if pattern is None:
            return
        match_at = pattern.match
        for found in pattern.finditer(lowered):
            word = found.group()
            start = found.start()
            yield start, rules_of[word]
            for offset in inner[word]:
                longer = match_at(lowered, start + offset)
                if longer is not None:
                    yield start + offset, rules_of[longer.group()]

    def _native_automaton(self) -> Any:
        if self._automaton is None and self._native:
            try:
                import ahocorasick_rs
            except ImportError:
                self._native = False
                return None
            # A DFA: 0.7 MB and 1 ms to build for the built-in keywords, and twice as
            # fast a search as the NFA the library picks by itself for them.
            self._automaton = ahocorasick_rs.AhoCorasick(
                list(self._by_keyword), implementation=ahocorasick_rs.Implementation.DFA
            )
        return self._automaton

    def _native_hits(self, automaton: Any, lowered: str) -> list[tuple[int, frozenset[int]]]:
        """Every occurrence of every keyword, found by the native automaton in one pass."""
        rules = self._keyword_rules
        found = [
            (start, rules[word])
            for word, start, _ in automaton.find_matches_as_indexes(lowered, overlapping=True)
        ]
        found.sort(key=_POSITION)
        return found

    def _small_candidates(self, lowered: str) -> Iterable[tuple[str, frozenset[int]]]:
        """The keywords (with their rules) that may occur in a small text."""
        if len(lowered) <= GRAM_FILTER:
            return self._by_keyword.items()
        if self._by_gram is None:
            self._by_gram = _grams_of(self._by_keyword)
        by_gram, short = self._by_gram
        add = operator.add
        present = set(map(add, map(add, lowered, lowered[1:]), lowered[2:]))
        return [item for gram in by_gram.keys() & present for item in by_gram[gram]] + short

    def _small_hits(self, lowered: str) -> list[tuple[int, frozenset[int]]]:
        """Every occurrence of every keyword with that keyword's rules, in text order.

        Per line, the union is the same as the pattern's (whose hits carry the rules
        of every keyword inside the longest one found there).
        """
        found = []
        for word, rules in self._small_candidates(lowered):
            position = lowered.find(word)
            while position != -1:
                found.append((position, rules))
                position = lowered.find(word, position + 1)
        found.sort(key=_POSITION)
        return found


def _grams_of(by_keyword: dict[str, frozenset[int]]) -> _Grams:
    by_gram: dict[str, list[tuple[str, frozenset[int]]]] = defaultdict(list)
    short = []
    for word, rules in by_keyword.items():
        if len(word) < _GRAM:
            short.append((word, rules))
        else:
            by_gram[word[:_GRAM]].append((word, rules))
    return dict(by_gram), short


def _inside(word: str, trie: _Trie) -> tuple[list[str], tuple[int, ...]]:
    """The keywords inside ``word`` (itself too), and the offsets inside it where a
    keyword may start that runs past its end, in one walk of the trie from each
    offset (a few steps each: listing every substring of a long keyword cost a
    catalogue of 2,000 keywords 27 ms).

    A keyword running past the end begins with the suffix of ``word`` at that offset:
    the walk reaches the end of ``word`` and the trie goes on. Keywords that start
    and end inside ``word`` are proven by the hit on ``word`` itself.
    """
    found = []
    offsets = []
    for start in range(len(word)):
        node = trie
        for end in range(start, len(word)):
            child = node.get(word[end])
            if child is None:
                break
            node = child
            if _END in node:
                found.append(word[start : end + 1])
        else:
            if start and any(key != _END for key in node):
                offsets.append(start)
    return found, tuple(offsets)


def _trie(words: Iterable[str]) -> _Trie:
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[_END] = {}
    return root


def _render(node: _Trie) -> str:
    """A regex for the trie that prefers the longest keyword at each position."""
    branches = [re.escape(char) + _render(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    if _END not in node:
        return body
    # A keyword ends here and longer ones go on: try the longer ones first (greedy ?).
    return f"(?:{body})?"


#: A hit's position: what hits are sorted by (a key in C, called once a hit).
_POSITION = operator.itemgetter(0)
