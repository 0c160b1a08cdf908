"""Java 8's predefined and POSIX character classes, as ``regex`` set contents.

Each value goes inside ``[...]`` (``regex``'s V1 sets, which nest). Without
``UNICODE_CHARACTER_CLASS`` (``(?U)``) Java's ``\\d \\w \\s`` and POSIX classes
are ASCII; with it they are Unicode properties (``java.util.regex.Pattern``'s
table). ``\\h`` and ``\\v`` are the same either way.
"""

from __future__ import annotations

_PUNCT = r"""!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"""
#: ``\p{Name}`` POSIX classes: (ASCII contents, contents under (?U)).
POSIX: dict[str, tuple[str, str]] = {
    "Lower": ("a-z", r"\p{Lowercase}"),
    "Upper": ("A-Z", r"\p{Uppercase}"),
    "ASCII": (r"\x00-\x7F", r"\x00-\x7F"),
    "Alpha": ("a-zA-Z", r"\p{Alphabetic}"),
    "Digit": ("0-9", r"\p{Nd}"),
    "Alnum": ("a-zA-Z0-9", r"\p{Alphabetic}\p{Nd}"),
    "Punct": (_PUNCT, r"\p{P}"),
    "Graph": ("a-zA-Z0-9" + _PUNCT, r"[^\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cs}\p{Cn}]"),
    "Print": (
        " a-zA-Z0-9" + _PUNCT,
        r"[[^\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cs}\p{Cn}]\p{Zs}\t--\p{Cc}]",
    ),
    "Blank": (r" \t", r"\p{Zs}\t"),
    "Cntrl": (r"\x00-\x1F\x7F", r"\p{Cc}"),
    "XDigit": ("0-9a-fA-F", r"\p{Nd}\p{Hex_Digit}"),
    "Space": (r" \t\n\x0B\f\r", r"\p{White_Space}"),
}

_WORD_UNICODE = r"\p{Alphabetic}\p{Mn}\p{Me}\p{Mc}\p{Nd}\p{Pc}\p{Join_Control}"
#: ``\d \w \s`` (the upper-case escapes are their complements): (ASCII, under (?U)).
SHORTHAND: dict[str, tuple[str, str]] = {
    "d": ("0-9", r"\p{Nd}"),
    "w": ("a-zA-Z_0-9", _WORD_UNICODE),
    "s": (r" \t\n\x0B\f\r", r"\p{White_Space}"),
}
#: ``\h`` and ``\v`` (Java 8's horizontal and vertical whitespace), with or without (?U).
WHITESPACE = {
    "h": r" \t\xA0\u1680\u180E\u2000-\u200A\u202F\u205F\u3000",
    "v": r"\n\x0B\f\r\x85\u2028\u2029",
}
#: Java 8's ``\b``: a word character is a letter or digit (``Character.isLetterOrDigit``,
#: Unicode even without (?U)), ``_``, or a non-spacing mark; under (?U), ``\w``'s set.
BOUNDARY_WORD = (r"\p{L}\p{Nd}_\p{Mn}", _WORD_UNICODE)
#: Java's line terminators, for ``.``, ``^``, ``$`` and ``\Z`` (UNIX_LINES: ``\n`` only).
LINE_TERMINATORS = r"\n\r\x85\u2028\u2029"
#: ``\p{javaXxx}`` classes (``Character.isXxx``) that have a Unicode-property spelling.
JAVA_METHODS = {
    "javaLowerCase": r"\p{Lowercase}",
    "javaUpperCase": r"\p{Uppercase}",
    "javaTitleCase": r"\p{Lt}",
    "javaDigit": r"\p{Nd}",
    "javaLetter": r"\p{L}",
    "javaLetterOrDigit": r"\p{L}\p{Nd}",
    "javaAlphabetic": r"\p{Alphabetic}",
    "javaSpaceChar": r"\p{Zs}\p{Zl}\p{Zp}",
    "javaWhitespace": r"[\p{Zs}\p{Zl}\p{Zp}--\xA0\u2007\u202F]\t\n\x0B\f\r\x1C-\x1F",
    "javaISOControl": r"\x00-\x1F\x7F-\x9F",
    "javaDefined": r"\P{Cn}",
}
