"""Attack strings for a regular expression's repeats, to expose catastrophic backtracking.

A repeat backtracks exponentially when its body can match one string in several
ways: a nested quantifier (``(a+)+``) or alternatives that overlap
(``(ab|a|b)+``: ``ab`` is one alternative, or two). Such a regexp answers a
string that reaches the repeat (what comes before it), pumps it (each
alternative once, in order) and then fails (a control character) only after
trying every way, which the caller's timeout turns into a refusal. The strings
are built from the pattern's own syntax tree, so a rule that needs a prefix
(``tok_``) is reached; a sound regexp answers each in microseconds.

The tree is Python's (``re``'s parser): a pattern only ``regex`` understands
(``\\p{Lu}``) yields no string here, and the caller's runs of single characters
still probe it.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

#: How long an attack string's pumped part is, in characters.
PUMPED_LENGTH = 1000
#: What makes the match fail after the pumped part: no regexp expects it.
MISMATCH = "\x01"
#: Stands for any character a negated class admits.
_OUTSIDE = "\x02"
_CATEGORY_SAMPLES = {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a"}
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT")


def attack_strings(pattern: str) -> list[str]:
    """One string per pumpable repeat of ``pattern`` (none when ``re`` cannot parse it)."""
    parser = _parser()
    try:
        with warnings.catch_warnings():
            # re warns of what regex's V1 mode reads otherwise (nested sets): silence
            # it, the attack strings are only probes.
            warnings.simplefilter("ignore")
            tree = parser.parse(pattern, 0)
    except Exception:  # noqa: BLE001 - regex-only syntax: the character runs probe it
        return []
    return list(dict.fromkeys(_attacks(list(tree), "")))


def _parser() -> Any:
    """``re``'s parser: ``re._parser`` since Python 3.11, ``sre_parse`` before."""
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        return importlib.import_module("sre_parse")


def _attacks(sequence: list[Any], prefix: str) -> Iterator[str]:
    """Attack strings for every repeat in ``sequence``, reached by ``prefix`` and by
    a sample of what precedes the repeat in the sequence."""
    for index, (op, value) in enumerate(sequence):
        before = prefix + "".join(_sample(item) for item in sequence[:index])
        name = str(op)
        if name in _REPEATS:
            _, maximum, body = value
            if maximum > 1:
                for pump in _pumps(list(body)):
                    yield before + pump * max(1, PUMPED_LENGTH // len(pump)) + MISMATCH
            yield from _attacks(list(body), before)
        for inner in _children(name, value):
            yield from _attacks(inner, before)


def _children(name: str, value: Any) -> list[list[Any]]:
    """The sub-sequences of a node other than a repeat's body."""
    if name == "SUBPATTERN":
        return [list(value[-1])]
    if name in ("ATOMIC_GROUP", "POSSESSIVE_REPEAT"):
        return []  # neither backtracks into itself
    if name == "BRANCH":
        return [list(branch) for branch in value[1]]
    return []


def _pumps(body: list[Any]) -> list[str]:
    """What one pass of a repeat's body matches, and, when the body is a choice,
    each alternative once in a row: ``(ab|a|b)`` pumps ``ab`` and ``abab``."""
    pumps = [_sample_all(body)]
    while len(body) == 1 and str(body[0][0]) == "SUBPATTERN":
        body = list(body[0][1][-1])
    if len(body) == 1 and str(body[0][0]) == "BRANCH":
        pumps.append("".join(_sample_all(list(branch)) for branch in body[0][1][1]))
    return [pump for pump in pumps if pump]


def _sample_all(sequence: list[Any]) -> str:
    return "".join(_sample(item, at_least_once=True) for item in sequence)


def _sample(item: Any, *, at_least_once: bool = False) -> str:  # noqa: PLR0911 - one per node kind
    """A short string that ``item`` matches (the empty string for assertions)."""
    op, value = item
    name = str(op)
    if name == "LITERAL":
        return chr(value)
    if name == "NOT_LITERAL":
        return "b" if chr(value) == "a" else "a"
    if name == "ANY":
        return "a"
    if name == "IN":
        return _sample_class(value)
    if name in (*_REPEATS, "POSSESSIVE_REPEAT"):
        minimum, _, body = value
        count: int = max(minimum, 1) if at_least_once else minimum
        return "".join(_sample(inner, at_least_once=at_least_once) for inner in body) * count
    inner = _inner(name, value)
    if inner is not None:
        return "".join(_sample(each, at_least_once=at_least_once) for each in inner)
    return ""  # anchors, look-arounds, back-references


def _inner(name: str, value: Any) -> Any:
    """The sequence a group stands for (a choice: its first alternative), else None."""
    if name == "SUBPATTERN":
        return value[-1]
    if name == "ATOMIC_GROUP":
        return value
    if name == "BRANCH":
        return value[1][0]
    if name == "GROUPREF_EXISTS":
        return value[1]
    return None


def _sample_class(items: list[Any]) -> str:
    """A character of a class: its first member, or one no class names when negated."""
    for op, value in items:
        name = str(op)
        if name == "NEGATE":
            return _OUTSIDE
        if name == "LITERAL":
            return chr(value)
        if name == "RANGE":
            return chr(value[0])
        if name == "CATEGORY":
            return _CATEGORY_SAMPLES.get(str(value), _OUTSIDE)
    return "a"
