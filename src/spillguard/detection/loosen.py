"""A rule's pattern loosened for Vectorscan: it matches in every ASCII line the rule can.

The native prefilter (``native.py``) scans a line with every rule's loosened pattern
at once and tries a rule's own ``regex`` only where its loosened pattern matched, so
a loosened pattern must match wherever the rule's does: a *superset*, never a
subset, and only ever asked about ASCII lines (others take the engine's usual
path). Written out for Vectorscan's byte mode, with every flag-dependent construct
spelt as ``regex`` means it on ASCII text:

- lookarounds and anchors (``(?=...)``, ``(?<!...)``, ``^``, ``$``, ``\\A``,
  ``\\Z``) are dropped: they only ever rule matches out; ``\\b`` and ``\\B`` stay,
  since a line is scanned alone, as the rule's pattern sees it;
- groups lose their names and numbers, atomic groups and possessive or lazy
  quantifiers become plain ones (each only ever rules matches out);
- a backreference becomes its group's loosened pattern (what the group matched,
  the group's pattern matches);
- ``\\d \\w \\s``, ``.`` and classes become explicit classes of the ASCII
  characters ``regex`` matches with them; ``(?i)`` becomes each letter's two cases
  (and the non-ASCII letters ``regex`` folds onto an ASCII one: the Kelvin sign,
  the long s, the dotted and the dotless i),
  made global where ``regex`` would apply it from the middle of a pattern on.

Anything else (a conditional, recursion, a Unicode property, version 1's nested
sets, a flag with other meanings) has no loosened pattern: ``loosen`` returns
None, and that rule is tried on its candidate lines as without the prefilter.
"""

from __future__ import annotations

import re

import regex

#: Flags of a rule's pattern the translation knows the meaning of on ASCII text.
_KNOWN_FLAGS = (
    regex.IGNORECASE | regex.MULTILINE | regex.DOTALL | regex.ASCII | regex.UNICODE | regex.V0
)
#: Inline flags: those whose meaning on one ASCII line is known (``m``, ``s``: a line
#: holds no newline; ``a``, ``u``: \\w and the rest agree on ASCII), and ``i``.
_INLINE_FLAGS = frozenset("imsau")
_ASCII = frozenset(range(128))
_DIGITS = frozenset(range(ord("0"), ord("9") + 1))
_WORD = frozenset(
    [*_DIGITS, ord("_"), *range(ord("A"), ord("Z") + 1), *range(ord("a"), ord("z") + 1)]
)
#: ``\\s`` of ``regex`` on ASCII: tab, newline, vertical tab, form feed, return, space.
_SPACE = frozenset([9, 10, 11, 12, 13, 32])
_SHORTHANDS = {
    "d": _DIGITS,
    "D": _ASCII - _DIGITS,
    "w": _WORD,
    "W": _ASCII - _WORD,
    "s": _SPACE,
    "S": _ASCII - _SPACE,
}
#: Non-ASCII characters that ``regex`` matches, under IGNORECASE, with ASCII ones
#: (its simple case folding; the test suite checks the table against ``regex``).
CASE_TWINS = {0x130: "i", 0x131: "I", 0x17F: "sS", 0x212A: "kK"}
_ESCAPED = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
#: Letters escaped that stand for an assertion; dropped like the others.
_ASSERTIONS = frozenset("AZ")
_QUANTIFIER = re.compile(r"\{(\d*)(,(\d*))?\}")
_NAME = re.compile(r"[A-Za-z_]\w*")
_POSIX = re.compile(r"\[:\^?[A-Za-z]+:\]")


class _Unloosenable(Exception):  # noqa: N818 - a verdict inside the translation
    """The pattern uses a construct without a known loosening."""


def loosen(pattern: str, flags: int = 0) -> str | None:
    """The pattern loosened for Vectorscan (ASCII, byte mode), or None when it has none
    (or matches no ASCII line at all)."""
    if flags & ~_KNOWN_FLAGS:
        return None
    try:
        # A first reading finds the flags set inline anywhere: ``(?i)`` in the middle
        # of a pattern applies from there on (in version 0, to all of it): caseless
        # everywhere is the superset of both.
        probe = _Translator(pattern, caseless=False)
        probe.run()
        caseless = bool(flags & regex.IGNORECASE) or probe.global_caseless
        loosened = _Translator(pattern, caseless=caseless).run()
    except _Unloosenable:
        return None
    if loosened is None:
        return None
    return f"(?i){loosened}" if caseless else loosened


#: What the translation of a part is: its loosened pattern, "" for one that matches
#: the empty string only (an assertion dropped), None for one that matches no ASCII
#: text (a literal ñ): a sequence holding it cannot match, an alternative it is can
#: be left out.
_Part = str | None


class _Translator:
    """One pass over a ``regex`` pattern (version 0), writing its loosened form."""

    def __init__(self, pattern: str, *, caseless: bool) -> None:
        self.pattern = pattern
        self.at = 0
        self.caseless = caseless
        self.global_caseless = False
        #: Each capturing group's loosened pattern, by number and by name.
        self.groups: dict[int | str, _Part] = {}
        self.count = 0

    def run(self) -> _Part:
        out = self._alternation()
        if self.at != len(self.pattern):
            raise _Unloosenable  # an unbalanced ")"
        return out

    def _peek(self, text: str) -> bool:
        return self.pattern.startswith(text, self.at)

    def _alternation(self) -> _Part:
        branches = [self._sequence()]
        while self._peek("|"):
            self.at += 1
            branches.append(self._sequence())
        possible = [branch for branch in branches if branch is not None]
        if not possible:
            return None
        return possible[0] if len(possible) == 1 else "|".join(possible)

    def _sequence(self) -> _Part:
        parts: list[str] = []
        never = False
        while self.at < len(self.pattern) and self.pattern[self.at] not in "|)":
            atom = self._atom()
            quantifier, least = self._quantifier()
            if atom is None:
                # Unmatchable: the sequence too, unless it may be repeated no times.
                never = never or least > 0
            elif atom and quantifier:
                parts.append(f"(?:{atom}){quantifier}")
            elif atom:
                parts.append(atom)
        return None if never else "".join(parts)

    def _quantifier(self) -> tuple[str, int]:
        """The quantifier after an atom (Vectorscan's spelling) and its least count."""
        char = self.pattern[self.at : self.at + 1]
        if char and char in "*+?":
            self.at += 1
            written, least = char, int(char == "+")
        else:
            found = _QUANTIFIER.match(self.pattern, self.at)
            if found is None:
                return "", 1
            low, comma, high = found.group(1), found.group(2), found.group(3)
            if not low and not high:
                # ``{}`` and ``{,}`` are no quantifiers to regex: a literal, or ``*``.
                raise _Unloosenable
            self.at = found.end()
            least = int(low or 0)
            written = f"{{{least}{',' if comma else ''}{high or ''}}}"
        # Lazy and possessive forms match no string the plain one does not.
        if self.pattern[self.at : self.at + 1] in ("?", "+"):
            self.at += 1
        return written, least

    def _atom(self) -> _Part:
        char = self.pattern[self.at]
        self.at += 1
        if char == "(":
            return self._group()
        if char == "[":
            return self._class(self._class_members())
        if char == "\\":
            return self._escape()
        if char == ".":
            return _class(_ASCII - {10})
        if char in "^$":
            return ""
        if char in "*+?":
            raise _Unloosenable  # nothing to repeat
        return self._literal(ord(char))

    def _literal(self, code: int) -> _Part:
        if code < 128 and chr(code).isalnum():
            # Vectorscan's own (?i) folds a letter as regex folds it on ASCII text,
            # and keeps a literal a literal (its fastest matcher).
            return chr(code)
        return self._class(self._cased({code}))

    def _class(self, members: set[int]) -> _Part:
        """A class of exactly these characters: under Vectorscan's (?i), one whose
        letters are not in both cases (an İ is an i, not an I) keeps its case."""
        written = _class(members)
        if written is None or not self.caseless:
            return written
        if all(ord(chr(code).swapcase()) in members for code in members if chr(code).isalpha()):
            return written
        return f"(?-i:{written})"

    def _cased(self, members: set[int] | frozenset[int]) -> set[int]:
        """The ASCII characters ``members`` match, in the current case mode."""
        found = {code for code in members if code < 128}
        if self.caseless:
            found |= {ord(char.swapcase()) for char in map(chr, found) if char.isalpha()}
            for code, twins in CASE_TWINS.items():
                if code in members:
                    found.update(map(ord, twins))
        return found

    def _escape(self) -> _Part:
        if self.at >= len(self.pattern):
            raise _Unloosenable
        char = self.pattern[self.at]
        self.at += 1
        if char in _SHORTHANDS:
            return _class(_SHORTHANDS[char])
        if char in "bB":
            return f"\\{char}"
        if char in _ASSERTIONS:
            return ""
        if char.isdigit():
            return self._backreference(char)
        if char == "g" and self._peek("<"):
            return self._named_reference(">")
        return self._literal(self._escaped_code(char))

    def _escaped_code(self, char: str) -> int:
        """The code point of an escape other than a class, an assertion or a reference."""
        if char in _ESCAPED:
            return _ESCAPED[char]
        if char in _HEX_ESCAPES:
            digits = self.pattern[self.at : self.at + _HEX_ESCAPES[char]]
            if len(digits) != _HEX_ESCAPES[char] or not all(
                digit in "0123456789abcdefABCDEF" for digit in digits
            ):
                raise _Unloosenable
            self.at += len(digits)
            return int(digits, 16)
        if char.isalnum():
            # \p{...}, \N{...}, \G, \X, \m... and version 1's escapes.
            raise _Unloosenable
        return ord(char)

    def _backreference(self, first: str) -> _Part:
        digits = first
        if first == "0" or (self.pattern[self.at : self.at + 1].isdigit()):
            # Octal escapes and two-digit references: rare enough to leave out.
            raise _Unloosenable
        return self._group_text(int(digits))

    def _named_reference(self, closing: str) -> _Part:
        self.at += 1
        end = self.pattern.find(closing, self.at)
        if end == -1:
            raise _Unloosenable
        name = self.pattern[self.at : end]
        self.at = end + 1
        return self._group_text(int(name) if name.isdigit() else name)

    def _group_text(self, key: int | str) -> _Part:
        """A closed group's loosened pattern, for a reference to it."""
        if key not in self.groups:
            raise _Unloosenable  # a reference forward, or to a group still open
        return self.groups[key]

    def _group(self) -> _Part:
        if not self._peek("?"):
            return self._capture(None)
        self.at += 1
        for opening in ("=", "!", "<=", "<!"):
            if self._peek(opening):
                self.at += len(opening)
                self._body()
                return ""  # a lookaround only rules matches out
        if self._peek(":") or self._peek(">"):
            self.at += 1
            return self._body()
        if self._peek("P<") or (self._peek("<") and not self._peek("<=")):
            self.at += 2 if self._peek("P<") else 1
            return self._capture(self._name(">"))
        if self._peek("P="):
            self.at += 1
            return self._named_reference(")")
        return self._comment() if self._peek("#") else self._flags()

    def _comment(self) -> str:
        end = self.pattern.find(")", self.at)
        if end == -1:
            raise _Unloosenable
        self.at = end + 1
        return ""

    def _name(self, closing: str) -> str:
        found = _NAME.match(self.pattern, self.at)
        if found is None or not self.pattern.startswith(closing, found.end()):
            raise _Unloosenable
        self.at = found.end() + len(closing)
        return found.group()

    def _capture(self, name: str | None) -> _Part:
        self.count += 1
        number = self.count
        text = self._body()
        self.groups[number] = text
        if name is not None:
            self.groups[name] = text
        return text

    def _body(self) -> _Part:
        """A group's alternation up to its ``)``."""
        text = self._alternation()
        if not self._peek(")"):
            raise _Unloosenable
        self.at += 1
        return f"(?:{text})" if text else text

    def _flags(self) -> _Part:
        """``(?flags)``, ``(?flags:...)`` or ``(?flags-flags:...)``."""
        end = self.at
        while end < len(self.pattern) and self.pattern[end] not in ":)":
            end += 1
        spec = self.pattern[self.at : end]
        on, _, off = spec.partition("-")
        if end == len(self.pattern) or not spec or not set(on + off) <= _INLINE_FLAGS:
            raise _Unloosenable  # (?|...), (?(...)...), (?R), version flags...
        self.at = end + 1
        if self.pattern[end] == ")":
            if off:
                raise _Unloosenable  # a global flag turned off: version 1 only
            if "i" in on:
                self.global_caseless = True
                self.caseless = True
            return ""
        outer = self.caseless
        inner = self.caseless = ("i" in on) or (outer and "i" not in off)
        try:
            body = self._body()
        finally:
            self.caseless = outer
        if inner == outer or not body:
            return body
        # Vectorscan's case mode follows the translation's.
        return f"(?{'' if inner else '-'}i:{body})"

    def _class_members(self) -> set[int]:
        """The ASCII characters a class ``[...]`` matches (the ``[`` already read)."""
        negated = self._peek("^")
        if negated:
            self.at += 1
        members: set[int] = set()
        first = True
        while True:
            if self.at >= len(self.pattern):
                raise _Unloosenable
            char = self.pattern[self.at]
            if char == "]" and not first:
                self.at += 1
                break
            first = False
            if _POSIX.match(self.pattern, self.at):
                raise _Unloosenable  # [[:alpha:]]
            low = self._class_item()
            if isinstance(low, frozenset):
                members |= low
                continue
            if self._peek("-") and not self.pattern.startswith("-]", self.at):
                self.at += 1
                high = self._class_item()
                if isinstance(high, frozenset) or high < low:
                    raise _Unloosenable
                members.update(range(low, high + 1))
                continue
            members.add(low)
        found = self._cased(members)
        return set(_ASCII - found) if negated else found

    def _class_item(self) -> int | frozenset[int]:
        """One character of a class, or the members of a shorthand inside it."""
        char = self.pattern[self.at]
        self.at += 1
        if char != "\\":
            return ord(char)
        if self.at >= len(self.pattern):
            raise _Unloosenable
        escaped = self.pattern[self.at]
        self.at += 1
        if escaped in _SHORTHANDS:
            return _SHORTHANDS[escaped]
        if escaped == "b":
            return 8  # backspace, inside a class
        return self._escaped_code(escaped)


def _class(members: set[int] | frozenset[int]) -> _Part:
    """An explicit Vectorscan class (or character) for a set of ASCII characters;
    None for none."""
    if not members:
        return None
    codes = sorted(members)
    if len(codes) == 1:
        return f"\\x{codes[0]:02x}"
    runs = []
    start = previous = codes[0]
    for code in codes[1:]:
        if code != previous + 1:
            runs.append((start, previous))
            start = code
        previous = code
    runs.append((start, previous))
    return (
        "["
        + "".join(
            f"\\x{low:02x}" if low == high else f"\\x{low:02x}-\\x{high:02x}" for low, high in runs
        )
        + "]"
    )
