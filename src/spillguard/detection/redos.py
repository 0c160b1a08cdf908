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
    from collections.abc import Callable, Iterator

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


#: A repeat allowing at least this many passes is unbounded for the long-line probes.
_UNBOUNDED = 1000
_CATEGORY_TESTS: dict[str, Callable[[str], bool]] = {
    "CATEGORY_DIGIT": str.isdigit,
    "CATEGORY_NOT_DIGIT": lambda c: not c.isdigit(),
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
}


def long_line_probes(pattern: str, candidates: str, length: int) -> list[str] | None:
    """Lines of ``length`` characters on which searching ``pattern`` takes time growing
    with the square of their length, when it does (None: ``re`` cannot parse it).

    A search tries every position of a line. An unbounded repeat (``Q+``, ``\\w+``)
    reached from many positions of a run it accepts consumes the rest of the run from
    each of them, then backtracks through it when what follows fails: ``Q+Z`` on a
    line of ``Q``. The run's character must be accepted by the repeat and by every
    character the pattern requires before it (``x[a-z]+y`` needs a run of ``x``); a
    repeat of a group is pumped as ``attack_strings`` pumps it. A scan judges one line at
    a time: a probe is cut where it would hold a line break, and the pieces that stay
    long are the probes.
    """
    parser = _parser()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = parser.parse(pattern, 0)
    except Exception:  # noqa: BLE001 - regex-only syntax: the caller probes without a tree
        return None
    fold = bool(tree.state.flags & parser.SRE_FLAG_IGNORECASE)
    literal = set(_literals(list(tree)))
    probes: list[str] = []
    for before, body in _unbounded(list(tree), []):
        # What reaches the repeat and one pass of it, over and over (key.*secret on
        # "keyakeyakeya..."): each time it is reached, the repeat runs to the end.
        reach = "".join(_sample(item) for item in before)
        probes.extend((reach + pump) * (length // len(reach + pump)) for pump in _pumps(body))
        # Reached once and pumped to the end (a run of blanks after "(" for \(\s*[^)]*?,):
        # two repeats that split one run try every split of it.
        probes.extend(reach + pump * (length // len(pump)) for pump in _pumps(body))
        if len(body) == 1 and _single(body[0]):
            required = [*_required(before), body[0]]
            accepted = [c for c in candidates if all(_accepts(item, c, fold) for item in required)]
            # One character the rest of the pattern fails on, one it names (it may
            # end the match at once, or only after backtracking).
            chosen = [*[c for c in accepted if c not in literal][:1], *accepted[:1]]
            probes.extend(c * length for c in chosen)
    lines = (line for probe in probes for line in probe.split("\n"))
    return list(dict.fromkeys(line for line in lines if 2 * len(line) >= length))


def _unbounded(sequence: list[Any], prefix: list[Any]) -> Iterator[tuple[list[Any], list[Any]]]:
    """(what precedes it, its body) for every unbounded repeat of ``sequence``: a
    possessive one too (it gives nothing back, but still runs to the end of the run
    from each position that reaches it)."""
    for index, (op, value) in enumerate(sequence):
        before = prefix + sequence[:index]
        name = str(op)
        if name in (*_REPEATS, "POSSESSIVE_REPEAT"):
            _, maximum, body = value
            if maximum >= _UNBOUNDED:
                yield before, list(body)
            yield from _unbounded(list(body), before)
        elif name == "SUBPATTERN":
            yield from _unbounded(list(value[-1]), before)
        elif name == "ATOMIC_GROUP":
            yield from _unbounded(list(value), before)
        elif name == "BRANCH":
            for branch in value[1]:
                yield from _unbounded(list(branch), before)


def _literals(sequence: list[Any]) -> Iterator[str]:
    """Every character ``sequence`` names literally, in groups and repeats too."""
    for op, value in sequence:
        name = str(op)
        if name == "LITERAL":
            yield chr(value)
        elif name in _REPEATS:
            yield from _literals(list(value[2]))
        elif name == "SUBPATTERN":
            yield from _literals(list(value[-1]))
        elif name == "BRANCH":
            for branch in value[1]:
                yield from _literals(list(branch))


def _single(item: Any) -> bool:
    return str(item[0]) in ("LITERAL", "NOT_LITERAL", "ANY", "IN")


def _required(sequence: list[Any]) -> Iterator[Any]:
    """The single characters ``sequence`` cannot match without (groups opened, choices,
    assertions and optional parts left out: they never narrow the probes)."""
    for op, value in sequence:
        name = str(op)
        if _single((op, value)):
            yield (op, value)
        elif name in _REPEATS and value[0] >= 1 and len(value[2]) == 1 and _single(value[2][0]):
            yield value[2][0]
        elif name == "SUBPATTERN":
            yield from _required(list(value[-1]))


def _accepts(item: Any, character: str, fold: bool) -> bool:
    forms = {character, character.lower(), character.upper()} if fold else {character}
    return any(_accepts_one(item, form) for form in forms)


def _accepts_one(item: Any, character: str) -> bool:
    op, value = item
    name = str(op)
    if name in ("LITERAL", "NOT_LITERAL"):
        return (ord(character) == int(value)) == (name == "LITERAL")
    if name == "ANY":
        return character != "\n"
    negated, hit = False, False
    for member, detail in value:
        kind = str(member)
        if kind == "NEGATE":
            negated = True
        elif kind == "LITERAL":
            hit = hit or ord(character) == detail
        elif kind == "RANGE":
            hit = hit or detail[0] <= ord(character) <= detail[1]
        else:  # a category; one this does not know accepts the character
            test = _CATEGORY_TESTS.get(str(detail))
            hit = hit or test is None or test(character)
    return hit != negated
