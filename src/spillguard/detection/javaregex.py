"""Java 8 regular expressions (the server app's dialect), translated for ``regex``.

Custom and synced rules are ``java.util.regex`` patterns, and a different match
is a different ``matchText`` (reviewed lines stop working), so the translation
keeps Java's meaning, not only its syntax. The pattern is read as Java 8's
``Pattern`` reads it (the same recursive descent, the same whitespace and comment
skipping under ``(?x)``, ``\\Q...\\E`` removed first, a quantifier on anything,
zero-width items and a leading ``{2}`` included), so what Java refuses is refused
and what it accepts is accepted; the result is a small tree written out in
``regex``'s V1 syntax with every flag-dependent construct spelt explicitly:

- ``\\d \\w \\s`` and POSIX classes are ASCII unless ``(?U)``; ``\\p{...}`` names as
  Java resolves them (javaclasses.family);
- ``(?i)`` folds ASCII letters only, unless ``(?u)``; then characters compare by
  ``toLowerCase(toUpperCase(c))`` (I, i, U+0130 and U+0131 are one letter), a class
  member below U+0100 adds only its own two cases, a range adds every character
  whose upper or folded case is in it;
- classes combine as Java 8 combines them: ``[^a[b]]`` is ``[^a]`` or ``[b]``,
  ``[^a&&b]`` is ``[^a]`` and ``[b]`` (Java 9 changed both, JDK-6609854);
- ``\\b`` is Java 8's: letters and digits of any script and ``_`` are word
  characters, and so is a non-spacing mark after one; under ``(?U)``, ``\\w``'s set;
- ``.``, ``^``, ``$`` and ``\\Z`` know Java's line terminators, ``(?d)``, ``(?s)``, ``(?m)``;
- a look-behind must have an obvious maximum length, measured as Java measures it.
"""

from __future__ import annotations

import dataclasses
import functools

import regex

from spillguard.detection.javaclasses import (
    LINE_TERMINATORS,
    SHORTHAND,
    SHORTHAND_CHARS,
    UNICODE_PROPS,
    WHITESPACE,
    UnknownPropertyError,
    family,
    fold,
    folded_together,
    lower,
    upper,
)
from spillguard.detection.javaclasses import cased as cased_characters

#: The translation uses nested sets and set operations: regex's version 1.
FLAGS = regex.V1

_UNIX_LINES = 0x01
_CASE_INSENSITIVE = 0x02
_COMMENTS = 0x04
_MULTILINE = 0x08
_DOTALL = 0x20
_UNICODE_CASE = 0x40
_CANON_EQ = 0x80
_UNICODE_CHARACTER_CLASS = 0x100
_FLAG_BITS = {
    "i": _CASE_INSENSITIVE,
    "m": _MULTILINE,
    "s": _DOTALL,
    "d": _UNIX_LINES,
    "u": _UNICODE_CASE,
    # CANON_EQ is read and ignored: Java 8 applies it only when passed to compile().
    "c": _CANON_EQ,
    "x": _COMMENTS,
    "U": _UNICODE_CHARACTER_CLASS | _UNICODE_CASE,
}
_MAX_REPS = 0x7FFFFFFF
#: Below U+0100 a class keeps a bit per character, except these under (?iu), whose
#: other case lies above it (or, for I, i, S, s, K, k and the A-rings, is three).
_SINGLE_UNDER_UNICODE_CASE = frozenset("\xff\xb5IiSsKk\xc5\xe5")
#: A class's characters are tracked (for \b beside it) up to this many.
_KNOWN_LIMIT = 256


class JavaRegexError(ValueError):
    """The pattern is not a Java regexp, or uses a construct that cannot be used."""


def translate(pattern: str) -> str:
    """The ``regex`` (V1) spelling of a Java pattern; JavaRegexError when it has none."""
    return _Parser(pattern).run()


def differences(pattern: str) -> tuple[str, ...]:
    """Where this pattern may match otherwise than on the server (the known
    differences of docs/configuration.md); () when nowhere, or when it does not compile."""
    parser = _Parser(pattern)
    try:
        parser.run()
    except JavaRegexError:
        return ()
    return tuple(dict.fromkeys(parser.notes))


#: The known differences, as config check names them.
CASE_INSENSITIVE_BACKREFERENCE = (
    "a (?i) back-reference without (?u) compares letters beyond ASCII by their case "
    "here, not on the server"
)
BLOCK_NAME = (
    "a Unicode block name: Java 8 knows Unicode 6.2's blocks; a later block compiles "
    "here and is refused on the server"
)


def compile_java(pattern: str) -> regex.Pattern[str]:
    """Compile a Java pattern; errors name the construct or the position."""
    translated = translate(pattern)
    try:
        return regex.compile(translated, FLAGS)
    except regex.error as error:
        raise JavaRegexError(f"does not compile: {error}") from None


# --- character sets --------------------------------------------------------------


class _Bits:
    """A class's characters below U+0100, shared by every part of the class that
    names it: Java's BitClass, which later members still add to."""

    def __init__(self) -> None:
        self.chars: set[str] = set()


@dataclasses.dataclass(frozen=True, slots=True)
class _Items:
    """Set contents: ``text`` goes inside ``[...]``; ``chars`` lists what it holds
    when that is a few known characters."""

    text: str
    chars: frozenset[str] | None = None
    #: ``text`` is one whole set (``[^...]``), good on its own outside a class too.
    whole: bool = False


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class _Op:
    """A set operation of Java's class syntax: union, intersection, difference, not."""

    kind: str
    left: _Set
    right: _Set | None = None


_Set = _Bits | _Items | _Op


def _chars_items(chars: frozenset[str]) -> _Items:
    return _Items("".join(_escape(char) for char in sorted(chars)), chars)


def _set_text(item: _Set) -> str:
    """The contents of a regex set for ``item``."""
    if isinstance(item, _Bits):
        return "".join(_escape(char) for char in sorted(item.chars)) or r"[^\x00-\U0010ffff]"
    if isinstance(item, _Items):
        return item.text
    left = _set_text(item.left)
    if item.kind == "not":
        return f"[^{left}]"
    right = _set_text(item.right)  # type: ignore[arg-type]
    if item.kind == "or":
        return left + right
    operator = "&&" if item.kind == "and" else "--"
    return f"[[{left}]{operator}[{right}]]"


def _set_chars(item: _Set) -> frozenset[str] | None:
    if isinstance(item, _Bits):
        return frozenset(item.chars)
    if isinstance(item, _Items):
        return item.chars
    if item.kind == "or":
        left, right = _set_chars(item.left), _set_chars(item.right)  # type: ignore[arg-type]
        if left is not None and right is not None and len(left | right) <= _KNOWN_LIMIT:
            return left | right
    return None


# --- the tree ----------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Node:
    """A piece of the pattern: ``text`` is its regex spelling once ``render``ed."""

    def render(self) -> str:
        raise NotImplementedError

    def atomic(self) -> str:
        """The spelling as one item a quantifier can follow."""
        return f"(?:{self.render()})"


@dataclasses.dataclass(eq=False)
class _Chars(_Node):
    """One character of a set (Java's CharProperty)."""

    items: _Set

    def render(self) -> str:
        items = self.items
        chars = _set_chars(items)
        if chars is not None and len(chars) == 1:
            return _escape(next(iter(chars)))
        if isinstance(items, _Op) and items.kind == "not":
            return f"[^{_set_text(items.left)}]"
        if isinstance(items, _Items) and items.whole:
            return items.text
        return f"[{_set_text(items)}]"

    def atomic(self) -> str:
        return self.render()


@dataclasses.dataclass(eq=False)
class _Raw(_Node):
    """Fixed text: an anchor, a back-reference, \\R; ``width`` is (min, max) or None
    for a back-reference (no obvious maximum)."""

    text: str
    width: tuple[int, int] | None = (0, 0)

    def render(self) -> str:
        return self.text


@dataclasses.dataclass(eq=False)
class _Bound(_Node):
    """\\b (``kind`` "b") or \\B; its spelling depends on its neighbours."""

    kind: str
    unicode: bool
    before: frozenset[str] | None = None
    after: frozenset[str] | None = None

    def render(self) -> str:
        return _boundary(self)


@dataclasses.dataclass(eq=False)
class _Group(_Node):
    """``opener`` is "(", "(?:", "(?=", "(?P<name>" and so on."""

    opener: str
    body: _Node

    def render(self) -> str:
        return f"{self.opener}{self.body.render()})"

    def atomic(self) -> str:
        return self.render()


@dataclasses.dataclass(eq=False)
class _Quantified(_Node):
    atom: _Node
    low: int
    high: int
    mode: str  # "", "?" (lazy), "+" (possessive)
    #: Java's Curly (``*``, ``+``, ``{n,m}``), not its Ques (``?``).
    curly: bool = True
    #: A group repeated as Java's Loop (its body is not of one width): no maximum.
    loop: bool = False

    def render(self) -> str:
        if isinstance(self.atom, _Empty):
            return ""
        low, high = self.low, self.high
        if high == _MAX_REPS:
            count = {0: "*", 1: "+"}.get(low, f"{{{low},}}")
        elif (low, high) == (0, 1):
            count = "?"
        else:
            count = f"{{{low}}}" if low == high else f"{{{low},{high}}}"
        return self.atom.atomic() + count + self.mode


@dataclasses.dataclass(eq=False)
class _Sequence(_Node):
    nodes: list[_Node]

    def render(self) -> str:
        for index, node in enumerate(self.nodes):
            if isinstance(node, _Bound):
                node.before = _last_chars(self.nodes[index - 1]) if index else None
                after = self.nodes[index + 1] if index + 1 < len(self.nodes) else None
                node.after = _first_chars(after) if after is not None else None
        return "".join(node.render() for node in self.nodes)


@dataclasses.dataclass(eq=False)
class _Alternation(_Node):
    branches: list[_Node]

    def render(self) -> str:
        return "|".join(branch.render() for branch in self.branches)


@dataclasses.dataclass(eq=False)
class _Empty(_Node):
    """Java's empty Slice: what a leading ``{2}`` repeats."""

    def render(self) -> str:
        return ""


def _first_chars(node: _Node) -> frozenset[str] | None:
    if isinstance(node, _Chars):
        return _set_chars(node.items)
    if isinstance(node, _Quantified) and node.low > 0:
        return _first_chars(node.atom)
    return None


def _last_chars(node: _Node) -> frozenset[str] | None:
    return _first_chars(node)


# --- Java's measure of a look-behind (Pattern.TreeInfo) ----------------------------


@dataclasses.dataclass
class _Info:
    low: int = 0
    high: int = 0
    bounded: bool = True
    deterministic: bool = True


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _study(node: _Node, info: _Info) -> bool:
    """Add ``node``'s length to ``info`` as Java's ``study`` does; False where Java
    stops measuring (a Loop)."""
    if isinstance(node, _Chars):
        info.low, info.high = info.low + 1, info.high + 1
    elif isinstance(node, _Raw):
        if node.width is None:
            info.bounded = False
        else:
            info.low, info.high = info.low + node.width[0], info.high + node.width[1]
    elif isinstance(node, _Sequence):
        return all(_study(item, info) for item in node.nodes)
    elif isinstance(node, _Alternation):
        _study_branches(node.branches, info)
    elif isinstance(node, _Group):
        if node.opener in ("(", "(?:", "(?>") or node.opener.startswith("(?P<"):
            return _study(node.body, info)
    elif isinstance(node, _Quantified):
        return _study_quantified(node, info)
    return True


def _study_branches(branches: list[_Node], info: _Info) -> None:
    low, high, bounded = info.low, info.high, info.bounded
    lows, highs = [], []
    for branch in branches:
        each = _Info()
        _study(branch, each)
        lows.append(each.low)
        highs.append(each.high)
        bounded = bounded and each.bounded
    info.low, info.high = low + min(lows), high + max(highs)
    info.bounded, info.deterministic = bounded, False


def _study_quantified(node: _Quantified, info: _Info) -> bool:
    if node.loop:
        info.bounded = info.deterministic = False
        return False
    if not node.curly and node.mode != "+":  # Java makes x? a Branch of x and nothing
        _study_branches([node.atom, _Sequence([])], info)
        return True
    low, high, bounded, deterministic = info.low, info.high, info.bounded, info.deterministic
    inner = _Info()
    _study(node.atom, inner)
    total = _int32(_int32(inner.low * node.low) + low)
    info.low = total if total >= low else 0xFFFFFFF
    if bounded and inner.bounded:
        info.high = _int32(_int32(inner.high * node.high) + high)
        info.bounded = info.high >= high
    else:
        info.bounded = False
    info.deterministic = deterministic if inner.deterministic and node.low == node.high else False
    return True


# --- the parser --------------------------------------------------------------------


def _remove_quoting(pattern: str) -> list[int]:  # noqa: C901, PLR0912 - Java's RemoveQEQuoting
    """The pattern's code points with ``\\Q...\\E`` spelt as escapes, as Java does
    before it parses (a quoted digit after ``\\Q`` becomes ``\\x3N``)."""
    temp = [ord(char) for char in pattern]
    length = len(temp)
    start = 0
    while start < length - 1:
        if temp[start] != 0x5C:
            start += 1
        elif temp[start + 1] != ord("Q"):
            start += 2
        else:
            break
    if start >= length - 1:
        return temp
    out = temp[:start]
    index = start + 2
    quoting = beginning = True
    backslash = 0x5C

    def at(position: int) -> int:
        return temp[position] if position < length else 0

    while index < length:
        code = temp[index]
        index += 1
        char = chr(code)
        if not char.isascii() or char.isalpha():
            out.append(code)
        elif char.isdigit():
            if beginning:
                out.extend(map(ord, "\\x3"))
            out.append(code)
        elif code != backslash:
            if quoting:
                out.append(backslash)
            out.append(code)
        elif quoting:
            if at(index) == ord("E"):
                index += 1
                quoting = False
            else:
                out.extend((backslash, backslash))
        elif at(index) == ord("Q"):
            index += 1
            quoting = beginning = True
            continue
        else:
            out.append(code)
            if index != length:
                out.append(temp[index])
                index += 1
        beginning = False
    return out


def _is_space(code: int) -> bool:
    return code in (0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D)


def _is_hex(code: int) -> bool:
    return chr(code) in "0123456789abcdefABCDEF"


def _is_digit(code: int) -> bool:
    return 0x30 <= code <= 0x39


def _is_ascii_letter(code: int) -> bool:
    return 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A


class _Parser:
    """``java.util.regex.Pattern``'s reading of a pattern (Java 8), building a tree."""

    def __init__(self, pattern: str) -> None:
        self.temp = _remove_quoting(pattern)
        self.length = len(self.temp)
        self.temp.extend((0, 0))
        self.cursor = 0
        self.flags = 0
        self.groups = 1  # Java's capturingGroupCount
        self.names: dict[str, int] = {}
        self.root: _Node | _Set | None = None
        self.backrefs: list[tuple[_Raw, int]] = []
        self.notes: list[str] = []

    def run(self) -> str:
        tree = self.expr()
        if self.cursor != self.length:
            if self.peek() == ord(")"):
                raise self.error("unmatched closing ')'")
            raise self.error("unexpected character")
        for node, number in self.backrefs:
            if number >= self.groups:  # Java compiles it; it never matches
                node.text = "(?!)"
        return tree.render()

    # --- reading, as Pattern reads -------------------------------------------------

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    def at(self, index: int) -> int:
        return self.temp[index] if index < len(self.temp) else 0

    def error(self, message: str) -> JavaRegexError:
        return JavaRegexError(f"does not compile: {message} near index {max(self.cursor - 1, 0)}")

    def peek(self) -> int:
        code = self.at(self.cursor)
        return self.peek_past_whitespace(code) if self.has(_COMMENTS) else code

    def read(self) -> int:
        code = self.at(self.cursor)
        self.cursor += 1
        return self.parse_past_whitespace(code) if self.has(_COMMENTS) else code

    def next(self) -> int:
        self.cursor += 1
        code = self.at(self.cursor)
        return self.peek_past_whitespace(code) if self.has(_COMMENTS) else code

    def next_escaped(self) -> int:
        self.cursor += 1
        return self.at(self.cursor)

    def skip(self) -> int:
        code = self.at(self.cursor + 1)
        self.cursor += 2
        return code

    def unread(self) -> None:
        self.cursor -= 1

    def accept(self, code: int, message: str) -> None:
        if self.read() != code:
            raise self.error(message)

    def peek_past_whitespace(self, code: int) -> int:
        while _is_space(code) or code == ord("#"):
            while _is_space(code):
                self.cursor += 1
                code = self.at(self.cursor)
            if code == ord("#"):
                self.cursor += 1
                code = self.at(self.cursor)
                while code != 0 and not self.line_separator(code):
                    self.cursor += 1
                    code = self.at(self.cursor)
        return code

    def parse_past_whitespace(self, code: int) -> int:
        while _is_space(code) or code == ord("#"):
            while _is_space(code):
                code = self.at(self.cursor)
                self.cursor += 1
            if code == ord("#"):
                code = self.at(self.cursor)
                self.cursor += 1
                while code != 0 and not self.line_separator(code):
                    code = self.at(self.cursor)
                    self.cursor += 1
        return code

    def line_separator(self, code: int) -> bool:
        if self.has(_UNIX_LINES):
            return code == 0x0A
        return code in (0x0A, 0x0D, 0x85, 0x2028, 0x2029)

    # --- structure -----------------------------------------------------------------

    def expr(self) -> _Node:
        branches = [self.sequence()]
        while self.peek() == ord("|"):
            self.next()
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else _Alternation(list(branches))

    def sequence(self) -> _Sequence:  # noqa: C901, PLR0912 - one branch per Java case
        nodes: list[_Node] = []
        while True:
            code = self.peek()
            char = chr(code)
            node: _Node
            if char == "(":
                group = self.group0()
                if group is not None:
                    nodes.append(group)
                continue
            if char == "[":
                node = _Chars(self.clazz(consume=True))
            elif char == "\\":
                escaped = self.next_escaped()
                if escaped in (ord("p"), ord("P")):
                    node = _Chars(self.property_after_p(escaped))
                else:
                    self.unread()
                    node = self.atom()
            elif char == "^":
                self.next()
                node = _Raw(self.caret())
            elif char == "$":
                self.next()
                node = _Raw(self.dollar(multiline=self.has(_MULTILINE)))
            elif char == ".":
                self.next()
                node = _Chars(_Items(self.dot(), whole=not self.has(_DOTALL)))
            elif char in "|)":
                break
            elif char in "?*+":
                self.next()
                raise self.error(f"dangling meta character {char!r}")
            elif code == 0 and self.cursor >= self.length:
                break
            else:
                node = self.atom()
            node = self.closure(node)
            if isinstance(node, _Sequence):
                nodes.extend(node.nodes)  # a slice's characters
            else:
                nodes.append(node)
        return _Sequence(nodes)

    def atom(self) -> _Node:  # noqa: C901 - Java's atom()
        """A run of literal characters (Java's Slice), or one escape."""
        chars: list[int] = []
        previous = -1
        code = self.peek()
        while True:
            char = chr(code)
            if char in "*+?{":
                if len(chars) > 1:
                    self.cursor = previous  # the quantifier takes the last one alone
                    chars.pop()
                break
            if char in "$.^([|)":
                break
            if char == "\\":
                escaped = self.next_escaped()
                if escaped in (ord("p"), ord("P")):
                    if chars:
                        self.unread()
                        break
                    return _Chars(self.property_after_p(escaped))
                self.unread()
                previous = self.cursor
                value = self.escape(inclass=False, create=not chars, isrange=False)
                if value >= 0:
                    chars.append(value)
                    code = self.peek()
                    continue
                if not chars:
                    root = self.root
                    return root if isinstance(root, _Node) else _Chars(root)  # type: ignore[arg-type]
                self.cursor = previous
                break
            if code == 0 and self.cursor >= self.length:
                break
            previous = self.cursor
            chars.append(code)
            code = self.next()
        if len(chars) == 1:
            return _Chars(self.single(chars[0]))
        if not chars:
            return _Empty()
        return _Sequence([_Chars(self.slice_char(code)) for code in chars])

    def closure(self, node: _Node) -> _Node:  # noqa: C901, PLR0912 - Java's closure()
        code = self.peek()
        char = chr(code)
        if char in "?*+":
            low, high = {"?": (0, 1), "*": (0, _MAX_REPS), "+": (1, _MAX_REPS)}[char]
            mode = chr(self.next())
            if mode in "?+":
                self.next()
            else:
                mode = ""
            return _Quantified(node, low, high, mode, curly=char != "?")
        if char != "{":
            return node
        code = self.at(self.cursor + 1)
        if not _is_digit(code):
            raise self.error("illegal repetition")
        self.skip()
        low = 0
        while True:
            low = _int32(low * 10 + code - 0x30)
            code = self.read()
            if not _is_digit(code):
                break
        high = low
        if code == ord(","):
            code = self.read()
            high = _MAX_REPS
            if code != ord("}"):
                high = 0
                while _is_digit(code):
                    high = _int32(high * 10 + code - 0x30)
                    code = self.read()
        if code != ord("}"):
            raise self.error("unclosed counted closure")
        if low < 0 or high < 0 or _int32(high - low) < 0:
            raise self.error("illegal repetition range")
        mode = chr(self.peek())
        if mode in "?+":
            self.next()
        else:
            mode = ""
        return _Quantified(node, low, high, mode)

    def group0(self) -> _Node | None:  # noqa: C901, PLR0912 - one branch per group kind
        saved = self.flags
        code = self.next()
        if code == ord("?"):
            kind = chr(self.skip())
            if kind in ":=!>":
                opener = {":": "(?:", "=": "(?=", "!": "(?!", ">": "(?>"}[kind]
                group = _Group(opener, self.expr())
            elif kind == "<":
                code = self.read()
                if _is_ascii_letter(code):
                    name = self.groupname(code)
                    if name in self.names:
                        raise self.error(f"named capturing group <{name}> is already defined")
                    self.names[name] = self.groups
                    self.groups += 1
                    group = _Group(f"(?P<{name}>", self.expr())
                else:
                    body = self.expr()
                    info = _Info()
                    _study(body, info)
                    if not info.bounded:
                        raise self.error(
                            "look-behind group does not have an obvious maximum length"
                        )
                    if code not in (ord("="), ord("!")):
                        raise self.error("unknown look-behind group")
                    group = _Group("(?<=" if code == ord("=") else "(?<!", body)
            elif kind in "$@":
                raise self.error("unknown group type")
            else:
                self.unread()
                self.add_flags()
                code = self.read()
                if code == ord(")"):
                    return None  # (?i): to the end of the enclosing group
                if code != ord(":"):
                    raise self.error("unknown inline modifier")
                group = _Group("(?:", self.expr())
        else:
            self.groups += 1
            group = _Group("(", self.expr())
        self.accept(ord(")"), "unclosed group")
        self.flags = saved
        node = self.closure(group)
        plain = group.opener in ("(", "(?:") or group.opener.startswith("(?P<")
        if isinstance(node, _Quantified) and node.curly and node.mode != "+" and plain:
            # Java repeats a group of one width as a GroupCurly, any other as a Loop.
            info = _Info()
            _study(group.body, info)
            node.loop = not info.deterministic
        return node

    def add_flags(self) -> None:
        code = self.peek()
        while True:
            char = chr(code)
            if char == "-":
                self.next()
                self.sub_flags()
                return
            if char not in _FLAG_BITS:
                return
            self.flags |= _FLAG_BITS[char]
            code = self.next()

    def sub_flags(self) -> None:
        code = self.peek()
        while True:
            char = chr(code)
            if char not in _FLAG_BITS:
                return
            self.flags &= ~_FLAG_BITS[char]
            if char == "U":
                return  # Java stops after (?-U)
            code = self.next()

    def groupname(self, code: int) -> str:
        name = [chr(code)]
        while True:
            code = self.read()
            if not (_is_ascii_letter(code) or _is_digit(code)):
                break
            name.append(chr(code))
        if code != ord(">"):
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(name)

    # --- escapes -------------------------------------------------------------------

    def escape(self, *, inclass: bool, create: bool, isrange: bool) -> int:  # noqa: C901, PLR0911, PLR0912
        """A character (>= 0), or -1 with ``self.root`` the construct when ``create``."""
        char = chr(self.skip())
        unicode = self.has(_UNICODE_CHARACTER_CLASS)
        node: _Node | _Set | None = None
        if char == "0":
            return self.octal()
        if char in "123456789" and not inclass:
            node = self.backreference(int(char)) if create else None
        elif char in "dDsSwW":
            items = SHORTHAND[char.lower()][unicode]
            chars = None if unicode else frozenset(SHORTHAND_CHARS[char.lower()])
            node = _Items(items, chars) if char.islower() else _Items(f"[^{items}]", whole=True)
        elif char in "hH":
            node = (
                _Items(WHITESPACE["h"])
                if char == "h"
                else _Items(f"[^{WHITESPACE['h']}]", whole=True)
            )
        elif char == "v":
            if isrange:
                return 0x0B
            node = _Items(WHITESPACE["v"])
        elif char == "V":
            node = _Items(f"[^{WHITESPACE['v']}]", whole=True)
        elif char in "ABGRZbkz" and not inclass:
            node = self.anchor(char)
        elif char in "aefnrt":
            return ord({"a": "\a", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}[char])
        elif char == "c":
            if self.cursor < self.length:
                return self.read() ^ 64
            raise self.error("illegal control escape sequence")
        elif char == "u":
            return self.unicode_escape()
        elif char == "x":
            return self.hex_escape()
        elif char.isascii() and char.isalnum():
            raise self.error(f"illegal/unsupported escape sequence \\{char}")
        else:
            return ord(char)
        if create:
            self.root = node
        return -1

    def anchor(self, char: str) -> _Node:  # noqa: PLR0911 - one return per escape
        if char == "A":
            return _Raw(r"(?<![\s\S])")
        if char == "G":
            return _Raw(r"\G")
        if char == "z":
            return _Raw(r"\Z")
        if char == "Z":
            return _Raw(self.dollar(multiline=False))
        if char == "R":
            return _Raw(rf"(?>\r\n|[{WHITESPACE['v']}])", (1, 2))
        if char in "bB":
            return _Bound(char, self.has(_UNICODE_CHARACTER_CLASS))
        # \k<name>: the group must be defined before it
        if self.read() != ord("<"):
            raise self.error("\\k is not followed by '<' for named capturing group")
        name = self.groupname(self.read())
        if name not in self.names:
            raise self.error(f"named capturing group <{name}> does not exist")
        return self.backreference_node(self.names[name])

    def backreference(self, number: int) -> _Node:
        # Java takes more digits only while they still name an existing group.
        while _is_digit(self.peek()):
            longer = number * 10 + self.peek() - 0x30
            if self.groups - 1 < longer:
                break
            number = longer
            self.read()
        return self.backreference_node(number)

    def backreference_node(self, number: int) -> _Node:
        text = f"(?:\\g<{number}>)"
        if self.has(_CASE_INSENSITIVE):
            # regex compares Unicode case here; Java without (?u) ASCII only.
            text = f"(?i-f:{text})"
            if not self.has(_UNICODE_CASE):
                self.notes.append(CASE_INSENSITIVE_BACKREFERENCE)
        node = _Raw(text, None)
        self.backrefs.append((node, number))
        return node

    def octal(self) -> int:
        first = self.read()
        if not 0x30 <= first <= 0x37:
            raise self.error("illegal octal escape sequence")
        second = self.read()
        if not 0x30 <= second <= 0x37:
            self.unread()
            return first - 0x30
        third = self.read()
        if 0x30 <= third <= 0x37 and first <= 0x33:
            return (first - 0x30) * 64 + (second - 0x30) * 8 + third - 0x30
        self.unread()
        return (first - 0x30) * 8 + second - 0x30

    def hex_escape(self) -> int:
        first = self.read()
        if _is_hex(first):
            second = self.read()
            if _is_hex(second):
                return int(chr(first) + chr(second), 16)
        elif first == ord("{") and _is_hex(self.peek()):
            value = 0
            while True:
                code = self.read()
                if not _is_hex(code):
                    break
                value = value * 16 + int(chr(code), 16)
                if value > 0x10FFFF:
                    raise self.error("hexadecimal codepoint is too big")
            if code != ord("}"):
                raise self.error("unclosed hexadecimal escape sequence")
            return value
        raise self.error("illegal hexadecimal escape sequence")

    def four_hex(self) -> int:
        value = 0
        for _ in range(4):
            code = self.read()
            if not _is_hex(code):
                raise self.error("illegal Unicode escape sequence")
            value = value * 16 + int(chr(code), 16)
        return value

    def unicode_escape(self) -> int:
        value = self.four_hex()
        if 0xD800 <= value < 0xDC00:  # a surrogate pair written as two escapes
            saved = self.cursor
            if self.read() == 0x5C and self.read() == ord("u"):
                low = self.four_hex()
                if 0xDC00 <= low < 0xE000:
                    return 0x10000 + ((value - 0xD800) << 10) + low - 0xDC00
            self.cursor = saved
        return value

    # --- properties ------------------------------------------------------------------

    def property_after_p(self, letter: int) -> _Set:
        """``\\p`` or ``\\P`` (the cursor on the letter): ``\\pL`` or ``\\p{...}``."""
        single = self.next() != ord("{")
        if single:
            self.unread()
        self.next()
        if single:
            name = chr(self.at(self.cursor))
            self.read()
        else:
            start = self.cursor
            self.temp[self.length] = ord("}")
            while self.read() != ord("}"):
                pass
            self.temp[self.length] = 0
            end = self.cursor
            if end > self.length:
                raise self.error("unclosed character family")
            if start + 1 >= end:
                raise self.error("empty character family")
            name = "".join(map(chr, self.temp[start : end - 1]))
        if name.startswith("In") or name.lower().startswith(("blk=", "block=")):
            self.notes.append(BLOCK_NAME)
        try:
            items = _Items(family(name, unicode=self.has(_UNICODE_CHARACTER_CLASS)))
        except UnknownPropertyError as error:
            raise self.error(str(error)) from None
        return _Op("not", items) if letter == ord("P") else items

    # --- line terminators ----------------------------------------------------------

    def terminators(self) -> str:
        return r"\n" if self.has(_UNIX_LINES) else LINE_TERMINATORS

    def dot(self) -> str:
        if self.has(_DOTALL):
            return r"\x00-\U0010ffff"
        return f"[^{self.terminators()}]"

    def caret(self) -> str:
        if not self.has(_MULTILINE):
            return r"(?<![\s\S])"
        if self.has(_UNIX_LINES):
            return r"(?=[\s\S])(?:(?<![\s\S])|(?<=\n))"
        # After a line terminator (not between \r and \n), never at the very end.
        return rf"(?=[\s\S])(?:(?<![\s\S])|(?<=[{LINE_TERMINATORS}])(?!(?<=\r)\n))"

    def dollar(self, *, multiline: bool) -> str:
        if self.has(_UNIX_LINES):
            return r"(?=\n|\Z)" if multiline else r"(?=\n?\Z)"
        if multiline:
            return rf"(?=[{LINE_TERMINATORS}]|\Z)(?!(?<=\r)\n)"
        # At the end, or before one final line terminator (\r\n counts as one).
        return rf"(?:\Z|(?=\r\n\Z)|(?!(?<=\r)\n)(?=[{LINE_TERMINATORS}]\Z))"

    # --- literal characters ----------------------------------------------------------

    def single(self, code: int) -> _Set:
        """Java's newSingle: one character as the flags compare it."""
        char = chr(code)
        if self.has(_CASE_INSENSITIVE):
            if self.has(_UNICODE_CASE):
                folded = upper(char)
                if folded != lower(folded):
                    return _chars_items(_folded_with(lower(folded)))
            elif char.isascii() and char.isalpha():
                return _chars_items(frozenset((char.lower(), char.upper())))
        return _chars_items(frozenset(char))

    def slice_char(self, code: int) -> _Set:
        """One character of a run of literals (Java's SliceU/SliceI)."""
        char = chr(code)
        if self.has(_CASE_INSENSITIVE):
            if self.has(_UNICODE_CASE):
                return _chars_items(_folded_with(fold(char)))
            if char.isascii() and char.isalpha():
                return _chars_items(frozenset((char.lower(), char.upper())))
        return _chars_items(frozenset(char))

    # --- classes ---------------------------------------------------------------------

    def clazz(self, *, consume: bool) -> _Set:  # noqa: C901, PLR0912, PLR0915 - Java's clazz()
        previous: _Set | None = None
        node: _Set | None = None
        bits = _Bits()
        include = True
        first = True
        code = self.next()
        while True:
            char = chr(code)
            if char == "^" and first and self.at(self.cursor - 1) == ord("["):
                code = self.next()
                include = not include
                continue
            if char == "[":
                first = False
                node = self.clazz(consume=True)
                previous = node if previous is None else _Op("or", previous, node)
                code = self.peek()
                continue
            if char == "&":
                first = False
                code = self.next()
                if code == ord("&"):
                    code = self.next()
                    right: _Set | None = None
                    while code not in (ord("]"), ord("&")):
                        if code == ord("["):
                            nested = self.clazz(consume=True)
                            right = nested if right is None else _Op("or", right, nested)
                        else:  # abc&&def
                            self.unread()
                            right = self.clazz(consume=False)
                        code = self.peek()
                    if right is not None:
                        node = right
                    if previous is None:
                        if right is None:
                            raise self.error("bad class syntax")
                        previous = right
                    else:
                        previous = _Op("and", previous, node)
                    continue
                self.unread()
            elif code == 0 and self.cursor >= self.length:
                raise self.error("unclosed character class")
            elif char == "]":
                first = False
                if previous is not None:
                    if consume:
                        self.next()
                    return previous
            first = False
            node = self.range(bits)
            if include:
                if previous is None:
                    previous = node
                elif previous is not node:
                    previous = _Op("or", previous, node)
            elif previous is None:
                previous = _Op("not", node)
            elif previous is not node:
                previous = _simplified_difference(previous, node)
            code = self.peek()

    def range(self, bits: _Bits) -> _Set:
        code = self.peek()
        if code == 0x5C:
            escaped = self.next_escaped()
            if escaped in (ord("p"), ord("P")):
                return self.property_after_p(escaped)
            isrange = self.at(self.cursor + 1) == ord("-")
            self.unread()
            code = self.escape(inclass=True, create=True, isrange=isrange)
            if code == -1:
                return self.root  # type: ignore[return-value]
        else:
            self.next()
        if self.peek() == ord("-"):
            end = self.at(self.cursor + 1)
            if end == ord("["):
                return self.bits_or_single(bits, code)
            if end != ord("]"):
                self.next()
                high = self.peek()
                if high == 0x5C:
                    high = self.escape(inclass=True, create=False, isrange=True)
                else:
                    self.next()
                if high < code:
                    raise self.error("illegal character range")
                return self.range_items(code, high)
        return self.bits_or_single(bits, code)

    def bits_or_single(self, bits: _Bits, code: int) -> _Set:
        char = chr(code)
        unicode_case = self.has(_CASE_INSENSITIVE) and self.has(_UNICODE_CASE)
        if code >= 0x100 or (unicode_case and char in _SINGLE_UNDER_UNICODE_CASE):
            return self.single(code)
        if self.has(_CASE_INSENSITIVE):
            if char.isascii():
                if char.isalpha():
                    bits.chars.update((char.lower(), char.upper()))
            elif self.has(_UNICODE_CASE):
                bits.chars.update(c for c in (lower(char), upper(char)) if ord(c) < 0x100)
        bits.chars.add(char)
        return bits

    def range_items(self, low: int, high: int) -> _Items:
        text = f"{_escape(chr(low))}-{_escape(chr(high))}"
        known = frozenset(map(chr, range(low, high + 1))) if high - low < _KNOWN_LIMIT else None
        if not self.has(_CASE_INSENSITIVE):
            return _Items(text, known)
        if self.has(_UNICODE_CASE):
            extra = _unicode_range_twins(low, high)
        else:
            extra = frozenset(
                twin
                for code in range(max(low, 0x41), min(high, 0x7A) + 1)
                if chr(code).isalpha()
                for twin in (chr(code).lower(), chr(code).upper())
            )
        extra = frozenset(char for char in extra if not low <= ord(char) <= high)
        chars = None if known is None else known | extra
        return _Items(text + "".join(_escape(char) for char in sorted(extra)), chars)


def _simplified_difference(left: _Set, right: _Set) -> _Set:
    """``[^abc]``: Java takes ``not(bits) minus bits`` for each member; that is ``not(bits)``."""
    if isinstance(left, _Op) and left.kind == "not" and left.left is right:
        return left
    return _Op("minus", left, right)


def _folded_with(key: str) -> frozenset[str]:
    """Every character (?iu) equates with one whose fold is ``key``."""
    return folded_together().get(key, frozenset(key))


@functools.cache
def _unicode_range_twins(low: int, high: int) -> frozenset[str]:
    """Characters whose upper case, or the lower case of that, is in the range."""
    return frozenset(
        char
        for char in cased_characters()
        if low <= ord(upper(char)) <= high or low <= ord(lower(upper(char))) <= high
    )


# --- \b ------------------------------------------------------------------------------

#: Java 8's word characters for \b: ``Character.isLetterOrDigit`` (any script) and _.
_WORD = r"[\p{L}\p{Nd}_]"
#: A non-spacing mark is a word character when a letter or digit comes before its run;
#: Java looks for it one UTF-16 unit at a time, so astral marks and bases never count.
_BMP_MARK = r"[\p{Mn}--[\U00010000-\U0010ffff]]"
_MARK_AFTER_BASE = rf"[[\p{{L}}\p{{Nd}}]--[\U00010000-\U0010ffff]]{_BMP_MARK}+"
_WORD_BEFORE = f"(?<={_WORD}|{_MARK_AFTER_BASE})"
_NO_WORD_BEFORE = f"(?<!{_WORD}|{_MARK_AFTER_BASE})"
_WORD_AFTER = f"(?={_WORD}|{_BMP_MARK}(?<={_MARK_AFTER_BASE}))"
_NO_WORD_AFTER = f"(?!{_WORD}|{_BMP_MARK}(?<={_MARK_AFTER_BASE}))"
_UNICODE_WORD = f"[{UNICODE_PROPS['WORD']}]"


def _word_side(chars: frozenset[str] | None, *, unicode: bool) -> bool | None:
    """True when every one of ``chars`` is a word character for \\b, False when none
    is, None when some are, or when that depends on what precedes (a mark)."""
    if not chars:
        return None
    word = _word_pattern(unicode)
    sides = set()
    for char in chars:
        if not unicode and _mark_pattern().fullmatch(char):
            return None
        sides.add(word.fullmatch(char) is not None)
    return sides.pop() if len(sides) == 1 else None


@functools.cache
def _word_pattern(unicode: bool) -> regex.Pattern[str]:
    return regex.compile(_UNICODE_WORD if unicode else _WORD, FLAGS)


@functools.cache
def _mark_pattern() -> regex.Pattern[str]:
    return regex.compile(r"\p{Mn}", FLAGS)


def _boundary(bound: _Bound) -> str:
    if bound.unicode:
        before, no_before = f"(?<={_UNICODE_WORD})", f"(?<!{_UNICODE_WORD})"
        after, no_after = f"(?={_UNICODE_WORD})", f"(?!{_UNICODE_WORD})"
    else:
        before, no_before, after, no_after = (
            _WORD_BEFORE,
            _NO_WORD_BEFORE,
            _WORD_AFTER,
            _NO_WORD_AFTER,
        )
    differ = bound.kind == "b"
    # Beside a character known to be (or not be) a word character, only the other
    # side is to be looked at, which keeps regex's fast search for that character.
    left = _word_side(bound.before, unicode=bound.unicode)
    if left is not None:
        return no_after if left == differ else after
    right = _word_side(bound.after, unicode=bound.unicode)
    if right is not None:
        return no_before if right == differ else before
    if differ:
        return f"(?:{before}{no_after}|{no_before}{after})"
    return f"(?:{before}{after}|{no_before}{no_after})"


def _escape(char: str) -> str:
    """A character as a regex literal, in a set or out of one."""
    if char.isascii() and char.isalnum():
        return char
    if char.isascii() and char.isprintable():
        return "\\" + char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
