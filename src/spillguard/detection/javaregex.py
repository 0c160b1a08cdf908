"""Java 8 regular expressions (the server app's dialect), translated for ``regex``.

Custom and synced rules are ``java.util.regex`` patterns, and a different match
is a different ``matchText`` (reviewed lines stop working), so the translation
keeps Java's meaning, not only its syntax. The pattern is parsed as Java parses
it and written out with every flag-dependent construct spelt explicitly:

- ``\\d \\w \\s`` and POSIX classes (``\\p{Alpha}``) are ASCII unless ``(?U)``;
  ``\\b`` is Java 8's (letters and digits of any script, ``_``); ``\\h \\v \\R``;
- ``(?i)`` folds ASCII letters only, unless ``(?u)`` (or ``(?U)``) too;
- ``.``, ``^``, ``$`` and ``\\Z`` know Java's line terminators (``\\n \\r \\u0085
  \\u2028 \\u2029``; ``\\n`` alone under ``(?d)``), ``(?s)`` and ``(?m)``;
- ``[[:digit:]]`` is a class of ``[ : d i g t``, as in Java; classes nest and
  intersect (``&&``); ``(?x)`` skips blanks and comments inside them too;
- octal ``\\0101``, ``\\x{41}``, ``\\uD83D\\uDE00``, ``\\cA``, ``\\Q...\\E``;
- ``x{,3}``, a lone ``{`` and unknown escapes are refused, as Java refuses them;
- possessive quantifiers, atomic groups, lookaround, named groups, ``\\k<name>``,
  ``\\G`` and ``\\z`` keep their meaning.

What has no translation (``(?c)``, Java-only ``\\p{java...}`` classes) is refused
with the construct named.
"""

from __future__ import annotations

import dataclasses
import functools

import regex

from spillguard.detection.javaclasses import (
    BOUNDARY_WORD,
    JAVA_METHODS,
    LINE_TERMINATORS,
    POSIX,
    SHORTHAND,
    WHITESPACE,
)

#: The translation uses nested sets and set operations: regex's version 1.
FLAGS = regex.V1
_FLAG_LETTERS = "idmsuxU"
_NAME = regex.compile(r"[a-zA-Z][a-zA-Z0-9]*")
_HEX = regex.compile(r"[0-9a-fA-F]+")
_QUANTIFIER = regex.compile(r"\{(\d+)(,(\d*))?\}")
#: Java's general category names, also spelt ``IsLu``; regex knows them without "Is".
_CATEGORY = regex.compile(r"Is([A-Z][a-z&]?)")
#: The characters of \\d, \\w and \\s without (?U) (\\s is none of them under (?U) either).
_SHORTHAND_CHARS = {
    "d": "0123456789",
    "w": "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "s": " \t\n\x0b\f\r",
}
#: (?iu) twins of a range are listed per character up to this many characters.
_CASE_RANGE_LIMIT = 0x3000


class JavaRegexError(ValueError):
    """The pattern is not a Java regexp, or uses a construct that cannot be used."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Flags:
    i: bool = False  # CASE_INSENSITIVE
    d: bool = False  # UNIX_LINES
    m: bool = False  # MULTILINE
    s: bool = False  # DOTALL
    u: bool = False  # UNICODE_CASE
    x: bool = False  # COMMENTS
    U: bool = False  # UNICODE_CHARACTER_CLASS (implies UNICODE_CASE)


def translate(pattern: str) -> str:
    """The ``regex`` (V1) spelling of a Java pattern; JavaRegexError when it has none."""
    return _Translator(pattern).run()


def compile_java(pattern: str) -> regex.Pattern[str]:
    """Compile a Java pattern; errors name the construct or the position."""
    translated = translate(pattern)
    try:
        return regex.compile(translated, FLAGS)
    except regex.error as error:
        raise JavaRegexError(f"does not compile: {error}") from None


class _Translator:
    """One pass over the pattern, as ``java.util.regex.Pattern`` reads it."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.flags = _Flags()
        self.out: list[str] = []
        self.groups = 0
        self.names: set[str] = set()
        #: Whether the last thing written can take a quantifier.
        self.quantifiable = False
        #: Every character the last atom can match, when few and known: a \b next to
        #: it needs to look one way only, which keeps regex's fast search for the atom.
        self.last_chars: str | None = None
        #: A general \b written before an atom not yet seen: (index, b or B, (?U)).
        self.pending: tuple[int, str, bool] | None = None
        #: A \b made one-sided by the atom just written: (index, its general form).
        self.resolved: tuple[int, str] | None = None

    # --- reading -------------------------------------------------------------------

    def error(self, message: str) -> JavaRegexError:
        return JavaRegexError(f"does not compile: {message} near index {self.pos}")

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        if not char:
            raise self.error("unexpected end of pattern")
        self.pos += 1
        return char

    def skip_comments(self) -> None:
        """Under (?x), blanks and ``#`` comments (to a line terminator) are not the pattern."""
        while self.flags.x and self.peek():
            char = self.peek()
            if char in " \t\n\x0b\f\r":
                self.pos += 1
            elif char == "#":
                while self.peek() and self.peek() not in "\n\r\x85\u2028\u2029":
                    self.pos += 1
            else:
                return

    # --- the sequence --------------------------------------------------------------

    def run(self) -> str:
        saved: list[_Flags] = []
        while True:
            self.skip_comments()
            char = self.peek()
            if not char:
                break
            self.pos += 1
            if char == "(":
                self.open_group(saved)
            elif char == ")":
                if not saved:
                    raise self.error("unmatched closing ')'")
                self.flags = saved.pop()
                self.emit(")", quantifiable=True)
            elif char == "|":
                self.emit("|", quantifiable=False)
            elif char in "*+?{":
                self.quantifier(char)
            else:
                self.atom(char)
        if saved:
            raise self.error("unclosed group")
        return "".join(self.out)

    def emit(self, text: str, *, quantifiable: bool, chars: str | None = None) -> None:
        self.out.append(text)
        self.quantifiable = quantifiable
        self.resolved = None
        if self.pending is not None:
            index, kind, unicode = self.pending
            self.pending = None
            side = _word_side(chars, unicode=unicode)
            if side is not None:
                self.resolved = (index, self.out[index])
                self.out[index] = _boundary_before(kind, next_is_word=side, unicode=unicode)
        self.last_chars = chars

    def quantifier(self, char: str) -> None:
        if not self.quantifiable:
            raise self.error(f"dangling meta character {char!r}")
        if char == "{":
            found = _QUANTIFIER.match(self.text, self.pos - 1)
            if found is None:  # x{,3}, a lone {: Java's "Illegal repetition"
                raise self.error("illegal repetition")
            low, comma, high = found.group(1), found.group(2), found.group(3)
            if high and int(high) < int(low):
                raise self.error("illegal repetition range")
            self.pos = found.end()
            char = "{" + low + (comma or "") + "}"
        minimum = {"*": 0, "?": 0, "+": 1}.get(char, 0 if char.startswith("{0") else 1)
        if minimum == 0 and self.resolved is not None:  # the atom may be absent after all
            index, general = self.resolved
            self.out[index] = general
        chars = self.last_chars if minimum else None
        if self.peek() in ("?", "+"):
            char += self.take()
        self.emit(char, quantifiable=False)
        self.last_chars = chars  # the last character matched is still the atom's

    def open_group(self, saved: list[_Flags]) -> None:
        saved.append(self.flags)
        if self.peek() != "?":
            self.groups += 1
            self.emit("(", quantifiable=False)
            return
        self.pos += 1
        for opener in (":", "=", "!", ">", "<=", "<!"):
            if self.text.startswith(opener, self.pos):
                self.pos += len(opener)
                self.emit("(?" + opener, quantifiable=False)
                return
        if self.peek() == "<":
            self.pos += 1
            name = _NAME.match(self.text, self.pos)
            if name is None or self.peek(len(name.group())) != ">":
                raise self.error("capturing group name does not start with a Latin letter")
            if name.group() in self.names:
                raise self.error(f"named capturing group <{name.group()}> is already defined")
            self.names.add(name.group())
            self.pos = name.end() + 1
            self.groups += 1
            self.emit(f"(?P<{name.group()}>", quantifiable=False)
            return
        self.inline_flags()
        if self.take() == ")":  # (?i): to the end of the enclosing group
            saved.pop()
            self.emit("", quantifiable=False)
        else:  # (?i:...)
            self.emit("(?:", quantifiable=False)

    def inline_flags(self) -> None:
        on = True
        flags = dataclasses.asdict(self.flags)
        while self.peek() and self.peek() not in ":)":
            letter = self.take()
            if letter == "-":
                on = False
            elif letter == "c":
                raise JavaRegexError("unsupported construct '(?c)': CANON_EQ inline flag")
            elif letter in _FLAG_LETTERS:
                flags[letter] = on
                if letter == "U" and on:
                    flags["u"] = True
            else:
                raise self.error(f"unknown inline modifier {letter!r}")
        if self.peek() not in (":", ")"):
            raise self.error("unclosed group")
        self.flags = _Flags(**flags)

    # --- atoms ---------------------------------------------------------------------

    def atom(self, char: str) -> None:
        flags = self.flags
        if char == ".":
            if flags.s:
                self.emit(r"(?s:.)", quantifiable=True)
            else:
                self.emit(f"[^{self.terminators()}]", quantifiable=True)
        elif char == "^":
            self.emit(self.caret(), quantifiable=False)
        elif char == "$":
            self.emit(self.dollar(multiline=flags.m), quantifiable=False)
        elif char == "[":
            text, chars = self.char_class()
            self.emit(text, quantifiable=True, chars=chars)
        elif char == "\\":
            self.escape()
        else:
            self.literal(char)

    def terminators(self) -> str:
        return r"\n" if self.flags.d else LINE_TERMINATORS

    def caret(self) -> str:
        if not self.flags.m:
            return r"(?<![\s\S])"
        # After a line terminator (not between \r and \n), never at the very end.
        return rf"(?=[\s\S])(?:(?<![\s\S])|(?<=[{self.terminators()}])(?!(?<=\r)\n))"

    def dollar(self, *, multiline: bool) -> str:
        ends = self.terminators()
        if multiline:
            return rf"(?=[{ends}]|\Z)(?!(?<=\r)\n)"
        if self.flags.d:
            return r"(?=\n?\Z)"
        # At the end, or before one final line terminator (\r\n counts as one).
        return rf"(?:\Z|(?=\r\n\Z)|(?!(?<=\r)\n)(?=[{ends}]\Z))"

    def literal(self, char: str) -> None:
        self.emit(self.cased(char), quantifiable=True, chars=char)

    def cased(self, char: str) -> str:
        """One character outside a class, as written under the current flags."""
        if self.flags.i and self.flags.u and char.lower() != char.upper():
            # Simple case folding, as Java compares characters (-f: not ß = ss).
            return f"(?i-f:{_escape(char)})"
        return "[" + self.cased_item(char) + "]" if self.folds(char) else _escape(char)

    def folds(self, char: str) -> bool:
        """Whether (?i) without (?u) gives ``char`` a twin: ASCII letters only."""
        return self.flags.i and char.isascii() and char.isalpha()

    def cased_item(self, char: str) -> str:
        """One character in a class: with its case twins under (?i)."""
        if not self.flags.i:
            return _escape(char)
        twins = dict.fromkeys((char, *_case_twins(char, unicode=self.flags.u)))
        return "".join(_escape(twin) for twin in twins)

    def cased_range(self, low: str, high: str) -> str:
        """A range in a class, with (under (?i)) every character whose twin is in it."""
        items = [f"{_escape(low)}-{_escape(high)}"]
        if self.flags.i and not self.flags.u:
            # ASCII twins: the range's share of a-z in upper case, and of A-Z in lower.
            for first, last, shift in (("a", "z", -32), ("A", "Z", 32)):
                start, end = max(ord(low), ord(first)), min(ord(high), ord(last))
                if start <= end:
                    items.append(f"{chr(start + shift)}-{chr(end + shift)}")
        elif self.flags.i and ord(high) - ord(low) <= _CASE_RANGE_LIMIT:
            for code in range(ord(low), ord(high) + 1):
                items.extend(_escape(twin) for twin in _case_twins(chr(code), unicode=True))
        return "".join(items)

    # --- escapes -------------------------------------------------------------------

    def escape(self) -> None:  # noqa: C901, PLR0912 - one branch per Java escape
        char = self.take()
        flags = self.flags
        if char in "123456789":
            self.backreference(char)
        elif char == "k":
            if self.take() != "<":
                raise self.error("\\k is not followed by '<' for named capturing group")
            name = _NAME.match(self.text, self.pos)
            if name is None or self.peek(len(name.group())) != ">":
                raise self.error("named capturing group is missing trailing '>'")
            self.pos = name.end() + 1
            self.emit(self.case_scoped(f"(?P={name.group()})"), quantifiable=True)
        elif char == "Q":
            end = self.text.find("\\E", self.pos)
            quoted = self.text[self.pos :] if end < 0 else self.text[self.pos : end]
            self.pos = len(self.text) if end < 0 else end + 2
            for quoted_char in quoted:  # a quantifier after \E takes the last one, as in Java
                self.literal(quoted_char)
        elif char in "bB":
            side = _word_side(self.last_chars, unicode=flags.U)
            if side is not None:
                self.emit(_boundary_after(char, side, unicode=flags.U), quantifiable=False)
            else:
                self.emit(_boundary(char, unicode=flags.U), quantifiable=False)
                self.pending = (len(self.out) - 1, char, flags.U)
        elif char == "A":
            self.emit(r"(?<![\s\S])", quantifiable=False)
        elif char == "G":
            self.emit(r"\G", quantifiable=False)
        elif char == "z":
            self.emit(r"\Z", quantifiable=False)
        elif char == "Z":
            self.emit(self.dollar(multiline=False), quantifiable=False)
        elif char == "R":
            self.emit(rf"(?>\r\n|[{WHITESPACE['v']}])", quantifiable=True)
        else:
            items = self.class_escape(char)
            if items is not None:
                chars = None if flags.U else _SHORTHAND_CHARS.get(char)
                self.emit(items, quantifiable=True, chars=chars)
            else:
                self.literal(self.literal_escape(char))

    def backreference(self, first: str) -> None:
        number = int(first)
        # Java takes more digits only while they still name an existing group.
        while self.peek().isdigit() and number * 10 + int(self.peek()) <= self.groups:
            number = number * 10 + int(self.take())
        if number > self.groups:
            self.emit("(?!)", quantifiable=True)  # Java compiles it; it never matches
        else:
            self.emit(self.case_scoped(f"(?:\\g<{number}>)"), quantifiable=True)

    def case_scoped(self, text: str) -> str:
        return f"(?i:{text})" if self.flags.i else text

    def class_escape(self, char: str) -> str | None:
        """The set ``\\d``, ``\\p{...}`` and the like stand for, or None for a character."""
        lower = char.lower()
        if lower in SHORTHAND:
            items = SHORTHAND[lower][self.flags.U]
        elif lower in WHITESPACE:
            items = WHITESPACE[lower]
        elif lower == "p":
            items = self.property()
        else:
            return None
        return f"[^{items}]" if char.isupper() else f"[{items}]"

    def property(self) -> str:
        if self.peek() == "{":
            end = self.text.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed character family")
            name = self.text[self.pos + 1 : end]
            self.pos = end + 1
        else:
            name = self.take()
        return _property(name, unicode=self.flags.U)

    def literal_escape(self, char: str) -> str:
        simple = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}
        if char in simple:
            return simple[char]
        if char == "0":
            return chr(self.octal())
        if char == "x":
            return self.hex_escape()
        if char == "u":
            return self.unicode_escape()
        if char == "c":
            return chr(ord(self.take()) ^ 64)
        if char.isascii() and char.isalnum():
            raise self.error(f"illegal/unsupported escape sequence \\{char}")
        return char

    def octal(self) -> int:
        digits = ""
        limit = 3 if self.peek() in "0123" else 2
        while len(digits) < limit and self.peek() and self.peek() in "01234567":
            digits += self.take()
        if not digits:
            raise self.error("illegal octal escape sequence")
        return int(digits, 8)

    def hex_escape(self) -> str:
        if self.peek() == "{":
            end = self.text.find("}", self.pos)
            digits = self.text[self.pos + 1 : end] if end > 0 else ""
            if not _HEX.fullmatch(digits) or int(digits, 16) > 0x10FFFF:
                raise self.error("illegal hexadecimal escape sequence")
            self.pos = end + 1
            return chr(int(digits, 16))
        digits = self.text[self.pos : self.pos + 2]
        if len(digits) != 2 or not _HEX.fullmatch(digits):
            raise self.error("illegal hexadecimal escape sequence")
        self.pos += 2
        return chr(int(digits, 16))

    def unicode_escape(self) -> str:
        digits = self.text[self.pos : self.pos + 4]
        if len(digits) != 4 or not _HEX.fullmatch(digits):
            raise self.error("illegal Unicode escape sequence")
        self.pos += 4
        high = int(digits, 16)
        low = self.text[self.pos + 2 : self.pos + 6]
        # A surrogate pair written as two escapes is one character, as in a Java string.
        pair = self.text.startswith("\\u", self.pos) and _HEX.fullmatch(low) is not None
        if pair and 0xD800 <= high < 0xDC00 and 0xDC00 <= int(low, 16) < 0xE000:
            self.pos += 6
            return chr(0x10000 + ((high - 0xD800) << 10) + int(low, 16) - 0xDC00)
        return chr(high)

    # --- character classes ---------------------------------------------------------

    def char_class(self) -> tuple[str, str | None]:
        """A class after its ``[``, as a regex V1 set (unions nest, ``&&`` intersects),
        and its characters when it is a short list of them."""
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        operands: list[str] = []
        items: list[str] = []
        members: list[str] | None = None if negated else []
        while True:
            self.skip_comments()
            char = self.take() if self.peek() else ""
            if not char:
                raise self.error("unclosed character class")
            if char == "]" and (items or operands):
                break
            if char == "[":
                items.append(self.char_class()[0])
                members = None
            elif char == "&" and self.peek() == "&":
                self.pos += 1
                operands.append("".join(items))
                items = []
                members = None
            else:
                item, chars = self.class_item(char)
                items.append(item)
                members = None if members is None or chars is None else [*members, chars]
        operands.append("".join(items))
        operands = [operand for operand in operands if operand]  # Java ignores [a&&]
        body = "&&".join(f"[{operand}]" if len(operands) > 1 else operand for operand in operands)
        return f"[{'^' if negated else ''}{body}]", None if members is None else "".join(members)

    def class_item(self, char: str) -> tuple[str, str | None]:
        """One member of a class (a set escape, a character, or a range), and its
        characters when they are few."""
        if char == "\\":
            escaped = self.take()
            if escaped == "Q":
                end = self.text.find("\\E", self.pos)
                quoted = self.text[self.pos :] if end < 0 else self.text[self.pos : end]
                self.pos = len(self.text) if end < 0 else end + 2
                return "".join(self.cased_item(c) for c in quoted), quoted
            items = self.class_escape(escaped)
            if items is not None:
                return items, None
            char = self.literal_escape(escaped)
        self.skip_comments()
        if self.peek() == "-" and self.peek(1) not in ("]", "["):
            self.pos += 1
            self.skip_comments()
            high = self.take()
            if high == "\\":
                high = self.literal_escape(self.take())
            if ord(high) < ord(char):
                raise self.error("illegal character range")
            span = ord(high) - ord(char)
            chars = "".join(map(chr, range(ord(char), ord(high) + 1))) if span < 256 else None
            return self.cased_range(char, high), chars
        return self.cased_item(char), char


def _escape(char: str) -> str:
    """A character as a regex literal, in a set or out of one."""
    if char.isascii() and char.isalnum():
        return char
    if char.isascii() and char.isprintable():
        return "\\" + char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _case_twins(char: str, *, unicode: bool) -> tuple[str, ...]:
    """The characters (?i) equates with ``char``: ASCII letters only, unless (?u);
    then every character with the same lower case of its upper case, as Java compares."""
    if not unicode:
        return (char.swapcase(),) if char.isascii() and char.isalpha() else ()
    return tuple(twin for twin in _unicode_twins().get(_fold(char), ()) if twin != char)


def _fold(char: str) -> str:
    upper = char.upper()
    lower = (upper if len(upper) == 1 else char).lower()
    return lower if len(lower) == 1 else char


@functools.cache
def _unicode_twins() -> dict[str, tuple[str, ...]]:
    """Characters by their simple fold (built once, only for (?iu) classes)."""
    twins: dict[str, list[str]] = {}
    for code in range(0x10000):
        char = chr(code)
        folded = _fold(char)
        if folded != char or char.upper() != char:
            twins.setdefault(folded, [folded]).append(char)
    return {key: tuple(dict.fromkeys(value)) for key, value in twins.items()}


def _word_side(chars: str | None, *, unicode: bool) -> bool | None:
    """True when every one of ``chars`` is a word character for \\b, False when none
    is, None when some are or the characters are not known."""
    if not chars:
        return None
    word = _word_pattern(unicode)
    sides = {word.fullmatch(char) is not None for char in chars}
    return sides.pop() if len(sides) == 1 else None


@functools.cache
def _word_pattern(unicode: bool) -> regex.Pattern[str]:
    return regex.compile(f"[{BOUNDARY_WORD[unicode]}]", FLAGS)


def _boundary_after(kind: str, previous_is_word: bool, *, unicode: bool) -> str:
    """\\b or \\B after a known character: only the next one is to be looked at."""
    word = f"[{BOUNDARY_WORD[unicode]}]"
    next_is_word = previous_is_word != (kind == "b")
    return f"(?={word})" if next_is_word else f"(?!{word})"


def _boundary_before(kind: str, *, next_is_word: bool, unicode: bool) -> str:
    """\\b or \\B before a known character: only the previous one is to be looked at."""
    word = f"[{BOUNDARY_WORD[unicode]}]"
    previous_is_word = next_is_word != (kind == "b")
    return f"(?<={word})" if previous_is_word else f"(?<!{word})"


def _boundary(char: str, *, unicode: bool) -> str:
    word = f"[{BOUNDARY_WORD[unicode]}]"
    if char == "b":
        return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
    return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"


def _property(name: str, *, unicode: bool) -> str:
    if name in POSIX:
        return POSIX[name][unicode]
    category = _CATEGORY.fullmatch(name)
    if category:
        name = category.group(1)
    if name in JAVA_METHODS:
        return JAVA_METHODS[name]
    if name.startswith("java"):
        raise JavaRegexError(f"unsupported construct \\p{{{name}}}: Java-only character class")
    special = {"all": r"\x00-\U0010FFFF", "L1": r"\x00-\xFF", "LD": r"\p{L}\p{Nd}"}
    if name in special:
        return special[name]
    return rf"\p{{{name}}}"
