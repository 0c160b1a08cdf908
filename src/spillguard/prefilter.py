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

import re
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

_Trie = dict[str, "_Trie"]
_END = ""


class KeywordIndex:
    """Where the keywords of a rule list occur in a text, found in one regex pass."""

    __slots__ = ("_inner", "_pattern", "_rules_of", "always")

    def __init__(self, keywords_per_rule: Sequence[Iterable[str]]) -> None:
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
        # A hit on keyword K also proves every keyword inside K.
        self._rules_of = {
            word: frozenset().union(*(by_keyword.get(part, ()) for part in _substrings(word)))
            for word in by_keyword
        }
        starts_of_longer = {word[:end] for word in by_keyword for end in range(1, len(word))}
        self._inner = {word: _inner_offsets(word, starts_of_longer) for word in by_keyword}
        self._pattern = re.compile(_render(_trie(by_keyword))) if by_keyword else None

    def hits(self, lowered: str) -> Iterator[tuple[int, frozenset[int]]]:
        """(position, rule indexes) of the keyword hits in ``lowered``, in text order."""
        if self._pattern is None:
            return
        match_at = self._pattern.match
        rules_of = self._rules_of
        inner = self._inner
        for found in self._pattern.finditer(lowered):
            word = found.group()
            start = found.start()
            yield start, rules_of[word]
            for offset in inner[word]:
                longer = match_at(lowered, start + offset)
                if longer is not None:
                    yield start + offset, rules_of[longer.group()]

    def line_candidates(self, lowered_line: str) -> list[int]:
        """The sorted candidate rules of one lowered line (the slow, obvious way)."""
        found = set(self.always)
        for word, rules in self._rules_of.items():
            if word in lowered_line:
                found.update(rules)
        return sorted(found)


def _substrings(word: str) -> set[str]:
    return {
        word[start:end] for start in range(len(word)) for end in range(start + 1, len(word) + 1)
    }


def _inner_offsets(word: str, starts_of_longer: set[str]) -> tuple[int, ...]:
    """Offsets inside ``word`` where a keyword may start that runs past its end.

    Such a keyword begins with the suffix of ``word`` at that offset (a proper
    start of a longer keyword); keywords that start and end inside ``word`` are
    proven by the hit on ``word`` itself.
    """
    return tuple(offset for offset in range(1, len(word)) if word[offset:] in starts_of_longer)


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
