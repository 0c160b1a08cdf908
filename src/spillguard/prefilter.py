"""The combined keyword prefilter: one pass over a fragment says which rules can match which lines.

Every rule's keywords (lowercase) go into one trie-shaped alternation, compiled
once per rule set. One scan of the lowered text finds, at each position, the
longest keyword that starts there; every keyword that is a prefix of it starts
there too, so each hit stands for a precomputed set of rules. A rule is a
candidate on a line when one of its keywords occurs in the lowered line; a rule
without keywords is a candidate on every line. The result is exact: the same
sets as testing every keyword against every line, for a fraction of the work.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

_Trie = dict[str, "_Trie"]
_END = ""


class KeywordIndex:
    """The candidate rules of each line of a text, found in one regex pass."""

    __slots__ = ("_always", "_pattern", "_rules_of", "_size")

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
        self._size = len(keywords_per_rule)
        self._always = frozenset(always)
        # A hit on keyword K also proves every keyword that is a prefix of K.
        self._rules_of = {
            word: frozenset().union(
                *(rules for other, rules in by_keyword.items() if word.startswith(other))
            )
            for word in by_keyword
        }
        self._pattern = (
            re.compile(f"(?=({_render(_trie(by_keyword))}))", re.DOTALL) if by_keyword else None
        )

    def candidates(self, lowered: str, starts: Sequence[int]) -> dict[int, list[int]]:
        """Line index to the sorted indexes of the rules to try on it.

        ``lowered`` is the text lowercased (same length as the text) and
        ``starts`` the offsets where its lines start. Lines with no candidate
        are left out.
        """
        per_line: dict[int, set[int]] = defaultdict(set)
        if self._pattern is not None:
            rules_of = self._rules_of
            for match in self._pattern.finditer(lowered):
                line = bisect.bisect_right(starts, match.start()) - 1
                per_line[line].update(rules_of[match.group(1)])
        if self._always:
            return {
                line: sorted(per_line.get(line, self._always).union(self._always))
                for line in range(len(starts))
            }
        return {line: sorted(rules) for line, rules in sorted(per_line.items())}

    def line_candidates(self, lowered_line: str) -> list[int]:
        """The sorted candidate rules of one lowered line (the slow, obvious way)."""
        found = set(self._always)
        for word, rules in self._rules_of.items():
            if word in lowered_line:
                found.update(rules)
        return sorted(found)


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
