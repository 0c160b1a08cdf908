"""Java 8's character classes and case mappings, as ``regex`` set contents.

Each class value goes inside ``[...]`` (``regex``'s V1 sets, which nest). The names
are the ones ``java.util.regex.Pattern`` of Java 8 resolves, with its rules:

- ``\\p{Name}`` without a prefix is one of ``CharPropertyNames`` (general categories,
  ``L1``, ``LD``, ``all``, the ASCII POSIX classes, ``javaXxx``), case-sensitive;
  under ``(?U)`` a POSIX name (any case) is its Unicode property first;
- ``\\p{IsName}`` is a ``UnicodeProp`` (``IsLetter``, ``IsHexDigit``, any case), else
  a ``CharPropertyNames`` entry (``IsLu``, ``IsAlpha``: ASCII), else a script;
- ``\\p{InName}`` is a block; ``\\p{sc=...}``, ``\\p{blk=...}``, ``\\p{gc=...}``.

Anything else (``\\p{Latin}``, ``\\p{L&}``, ``\\p{White_Space}``) is refused, as Java
refuses it.
"""

from __future__ import annotations

import functools

import regex

_PUNCT = r"""!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"""
_GRAPH = r"[^\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cs}\p{Cn}]"
#: ``java.util.regex.UnicodeProp``: ``\p{IsName}`` (any case) and (?U)'s POSIX classes.
UNICODE_PROPS = {
    "ALPHABETIC": r"\p{Alphabetic}",
    "LETTER": r"\p{L}",
    "IDEOGRAPHIC": r"\p{Ideographic}",
    "LOWERCASE": r"\p{Lowercase}",
    "UPPERCASE": r"\p{Uppercase}",
    "TITLECASE": r"\p{Lt}",
    "WHITE_SPACE": r"\p{Zs}\p{Zl}\p{Zp}\t-\r\x85",
    "CONTROL": r"\p{Cc}",
    "PUNCTUATION": r"\p{P}",
    # Every decimal digit, not only the ASCII and full-width hex digits.
    "HEX_DIGIT": r"\p{Nd}0-9A-Fa-f\uff10-\uff19\uff21-\uff26\uff41-\uff46",
    "ASSIGNED": r"\P{Cn}",
    "NONCHARACTER_CODE_POINT": r"\p{Noncharacter_Code_Point}",
    "DIGIT": r"\p{Nd}",
    "ALNUM": r"\p{Alphabetic}\p{Nd}",
    "BLANK": r"\p{Zs}\t",
    "GRAPH": _GRAPH,
    "PRINT": rf"[[{_GRAPH}\p{{Zs}}\t]--\p{{Cc}}]",
    "WORD": r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200c\u200d",
    "JOIN_CONTROL": r"\u200c\u200d",
}
_UNICODE_ALIASES = {
    "WHITESPACE": "WHITE_SPACE",
    "HEXDIGIT": "HEX_DIGIT",
    "NONCHARACTERCODEPOINT": "NONCHARACTER_CODE_POINT",
    "JOINCONTROL": "JOIN_CONTROL",
}
#: (?U)'s reading of the POSIX names (looked up in upper case).
_POSIX_UNICODE = {
    "ALPHA": "ALPHABETIC",
    "LOWER": "LOWERCASE",
    "UPPER": "UPPERCASE",
    "SPACE": "WHITE_SPACE",
    "PUNCT": "PUNCTUATION",
    "XDIGIT": "HEX_DIGIT",
    "ALNUM": "ALNUM",
    "CNTRL": "CONTROL",
    "DIGIT": "DIGIT",
    "BLANK": "BLANK",
    "GRAPH": "GRAPH",
    "PRINT": "PRINT",
}
_IGNORABLE = r"\x00-\x08\x0e-\x1b\x7f-\x9f\p{Cf}"
_CATEGORIES = [
    "Cn",
    "Lu",
    "Ll",
    "Lt",
    "Lm",
    "Lo",
    "Mn",
    "Me",
    "Mc",
    "Nd",
    "Nl",
    "No",
    "Zs",
    "Zl",
    "Zp",
    "Cc",
    "Cf",
    "Co",
    "Cs",
    "Pd",
    "Ps",
    "Pe",
    "Pc",
    "Po",
    "Sm",
    "Sc",
    "Sk",
    "So",
    "Pi",
    "Pf",
    "L",
    "M",
    "N",
    "Z",
    "P",
    "S",
]
#: ``Pattern.CharPropertyNames``: the names ``\p{Name}`` knows, case-sensitive.
CHAR_PROPERTIES = {
    **{name: rf"\p{{{name}}}" for name in _CATEGORIES},
    "C": r"\p{Cc}\p{Cf}\p{Co}\p{Cs}",  # Java's "Other" leaves out the unassigned
    "LC": r"\p{Lu}\p{Ll}\p{Lt}",
    "LD": r"\p{L}\p{Nd}",
    "L1": r"\x00-\xff",
    "all": r"\x00-\U0010ffff",
    "ASCII": r"\x00-\x7f",
    "Alnum": "a-zA-Z0-9",
    "Alpha": "a-zA-Z",
    "Blank": r" \t",
    "Cntrl": r"\x00-\x1f\x7f",
    "Digit": "0-9",
    "Graph": "a-zA-Z0-9" + _PUNCT,
    "Lower": "a-z",
    "Print": r"\x20-\x7e",
    "Punct": _PUNCT,
    "Space": r" \t\n\x0b\f\r",
    "Upper": "A-Z",
    "XDigit": "0-9a-fA-F",
    # Character.isXxx, as Java 8 defines each
    "javaLowerCase": r"\p{Lowercase}",
    "javaUpperCase": r"\p{Uppercase}",
    "javaAlphabetic": r"\p{Alphabetic}",
    "javaIdeographic": r"\p{Ideographic}",
    "javaTitleCase": r"\p{Lt}",
    "javaDigit": r"\p{Nd}",
    "javaDefined": r"\P{Cn}",
    "javaLetter": r"\p{L}",
    "javaLetterOrDigit": r"\p{L}\p{Nd}",
    "javaJavaIdentifierStart": r"\p{L}\p{Nl}\p{Sc}\p{Pc}",
    "javaJavaIdentifierPart": r"\p{L}\p{Sc}\p{Pc}\p{Nd}\p{Nl}\p{Mc}\p{Mn}" + _IGNORABLE,
    "javaUnicodeIdentifierStart": r"\p{L}\p{Nl}",
    "javaUnicodeIdentifierPart": r"\p{L}\p{Pc}\p{Nd}\p{Nl}\p{Mc}\p{Mn}" + _IGNORABLE,
    "javaIdentifierIgnorable": _IGNORABLE,
    "javaSpaceChar": r"\p{Zs}\p{Zl}\p{Zp}",
    "javaWhitespace": r"[\p{Zs}\p{Zl}\p{Zp}--\xa0\u2007\u202f]\t\n\x0b\f\r\x1c-\x1f",
    "javaISOControl": r"\x00-\x1f\x7f-\x9f",
    "javaMirrored": r"\p{Bidi_Mirrored}",
}
#: ``\d \w \s`` (the upper-case escapes are their complements): (ASCII, under (?U)).
SHORTHAND: dict[str, tuple[str, str]] = {
    "d": ("0-9", UNICODE_PROPS["DIGIT"]),
    "w": ("a-zA-Z_0-9", UNICODE_PROPS["WORD"]),
    "s": (r" \t\n\x0b\f\r", UNICODE_PROPS["WHITE_SPACE"]),
}
#: The characters of ASCII \d, \w and \s, for \b next to them.
SHORTHAND_CHARS = {
    "d": "0123456789",
    "w": "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "s": " \t\n\x0b\f\r",
}
#: ``\h`` and ``\v`` (Java 8's horizontal and vertical whitespace), with or without (?U).
WHITESPACE = {
    "h": r" \t\xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000",
    "v": r"\n\x0b\f\r\x85\u2028\u2029",
}
#: Java's line terminators, for ``.``, ``^``, ``$`` and ``\Z`` (UNIX_LINES: ``\n`` only).
LINE_TERMINATORS = r"\n\r\x85\u2028\u2029"

# Character.UnicodeScript of Java 8 (Unicode 6.2), and the ISO 15924 codes it takes.
_SCRIPTS = [
    "COMMON",
    "LATIN",
    "GREEK",
    "CYRILLIC",
    "ARMENIAN",
    "HEBREW",
    "ARABIC",
    "SYRIAC",
    "THAANA",
    "DEVANAGARI",
    "BENGALI",
    "GURMUKHI",
    "GUJARATI",
    "ORIYA",
    "TAMIL",
    "TELUGU",
    "KANNADA",
    "MALAYALAM",
    "SINHALA",
    "THAI",
    "LAO",
    "TIBETAN",
    "MYANMAR",
    "GEORGIAN",
    "HANGUL",
    "ETHIOPIC",
    "CHEROKEE",
    "CANADIAN_ABORIGINAL",
    "OGHAM",
    "RUNIC",
    "KHMER",
    "MONGOLIAN",
    "HIRAGANA",
    "KATAKANA",
    "BOPOMOFO",
    "HAN",
    "YI",
    "OLD_ITALIC",
    "GOTHIC",
    "DESERET",
    "INHERITED",
    "TAGALOG",
    "HANUNOO",
    "BUHID",
    "TAGBANWA",
    "LIMBU",
    "TAI_LE",
    "LINEAR_B",
    "UGARITIC",
    "SHAVIAN",
    "OSMANYA",
    "CYPRIOT",
    "BRAILLE",
    "BUGINESE",
    "COPTIC",
    "NEW_TAI_LUE",
    "GLAGOLITIC",
    "TIFINAGH",
    "SYLOTI_NAGRI",
    "OLD_PERSIAN",
    "KHAROSHTHI",
    "BALINESE",
    "CUNEIFORM",
    "PHOENICIAN",
    "PHAGS_PA",
    "NKO",
    "SUNDANESE",
    "BATAK",
    "LEPCHA",
    "OL_CHIKI",
    "VAI",
    "SAURASHTRA",
    "KAYAH_LI",
    "REJANG",
    "LYCIAN",
    "CARIAN",
    "LYDIAN",
    "CHAM",
    "TAI_THAM",
    "TAI_VIET",
    "AVESTAN",
    "EGYPTIAN_HIEROGLYPHS",
    "SAMARITAN",
    "MANDAIC",
    "LISU",
    "BAMUM",
    "JAVANESE",
    "MEETEI_MAYEK",
    "IMPERIAL_ARAMAIC",
    "OLD_SOUTH_ARABIAN",
    "INSCRIPTIONAL_PARTHIAN",
    "INSCRIPTIONAL_PAHLAVI",
    "OLD_TURKIC",
    "BRAHMI",
    "KAITHI",
    "MEROITIC_HIEROGLYPHS",
    "MEROITIC_CURSIVE",
    "SORA_SOMPENG",
    "CHAKMA",
    "SHARADA",
    "TAKRI",
    "MIAO",
    "UNKNOWN",
]
_SCRIPT_CODES = [
    "ARAB",
    "ARMI",
    "ARMN",
    "AVST",
    "BALI",
    "BAMU",
    "BATK",
    "BENG",
    "BOPO",
    "BRAI",
    "BRAH",
    "BUGI",
    "BUHD",
    "CAKM",
    "CANS",
    "CARI",
    "CHAM",
    "CHER",
    "COPT",
    "CPRT",
    "CYRL",
    "DEVA",
    "DSRT",
    "EGYP",
    "ETHI",
    "GEOR",
    "GLAG",
    "GOTH",
    "GREK",
    "GUJR",
    "GURU",
    "HANG",
    "HANI",
    "HANO",
    "HEBR",
    "HIRA",
    "ITAL",
    "JAVA",
    "KALI",
    "KANA",
    "KHAR",
    "KHMR",
    "KNDA",
    "KTHI",
    "LANA",
    "LAOO",
    "LATN",
    "LEPC",
    "LIMB",
    "LINB",
    "LISU",
    "LYCI",
    "LYDI",
    "MAND",
    "MERC",
    "MERO",
    "MLYM",
    "MONG",
    "MTEI",
    "MYMR",
    "NKOO",
    "OGAM",
    "OLCK",
    "ORKH",
    "ORYA",
    "OSMA",
    "PHAG",
    "PLRD",
    "PHLI",
    "PHNX",
    "PRTI",
    "RJNG",
    "RUNR",
    "SAMR",
    "SARB",
    "SAUR",
    "SHAW",
    "SHRD",
    "SINH",
    "SORA",
    "SUND",
    "SYLO",
    "SYRC",
    "TAGB",
    "TAKR",
    "TALE",
    "TALU",
    "TAML",
    "TAVT",
    "TELU",
    "TFNG",
    "TGLG",
    "THAA",
    "THAI",
    "TIBT",
    "VAII",
    "XPEO",
    "XSUX",
    "YIII",
    "ZINH",
    "ZYYY",
    "ZZZZ",
]


class UnknownPropertyError(ValueError):
    """Java has no class by this name; the message is Java's."""


def family(name: str, *, unicode: bool) -> str:  # noqa: PLR0911 - Java's lookup order
    """The set contents of ``\\p{name}``, as Java 8's ``Pattern.family`` resolves it."""
    if "=" in name:
        key, _, value = name.partition("=")
        key = key.lower()
        if key in ("sc", "script"):
            return _script(value)
        if key in ("blk", "block"):
            return _block(value)
        if key in ("gc", "general_category"):
            return _char_property(value)
        raise UnknownPropertyError(f"unknown Unicode property {{name=<{key}>, value=<{value}>}}")
    if name.startswith("In"):
        return _block(name[2:])
    if name.startswith("Is"):
        name = name[2:]
        upper = name.upper()
        prop = UNICODE_PROPS.get(_UNICODE_ALIASES.get(upper, upper))
        if prop is not None:
            return prop
        if name in CHAR_PROPERTIES:
            return CHAR_PROPERTIES[name]
        return _script(name)
    if unicode and name.upper() in _POSIX_UNICODE:
        return UNICODE_PROPS[_POSIX_UNICODE[name.upper()]]
    return _char_property(name)


def _char_property(name: str) -> str:
    if name not in CHAR_PROPERTIES:
        raise UnknownPropertyError(f"unknown character property name {{{name}}}")
    return CHAR_PROPERTIES[name]


def _script(name: str) -> str:
    upper = name.upper()
    if upper not in _SCRIPTS and upper not in _SCRIPT_CODES:
        raise UnknownPropertyError(f"unknown character script name {{{name}}}")
    return rf"\p{{Script={upper}}}"


#: Blocks whose Java constant is not their name in capitals (GREEK, not GREEK_AND_COPTIC).
_NOT_CONSTANTS = {
    "GREEK_AND_COPTIC",
    "CYRILLIC_SUPPLEMENT",
    "COMBINING_DIACRITICAL_MARKS_FOR_SYMBOLS",
}


def _block(name: str) -> str:
    spelt = rf"\p{{Block={name}}}"
    # Java takes a block's name, its name without spaces and its constant's name, in
    # any case; regex's loose matching takes those too (and Unicode's later blocks).
    known = regex.fullmatch(r"[A-Za-z0-9 _-]+", name) and name.upper() not in _NOT_CONSTANTS
    if not known or not _known_block(spelt):
        raise UnknownPropertyError(f"unknown character block name {{{name}}}")
    return spelt


@functools.cache
def _known_block(spelt: str) -> bool:
    try:
        regex.compile(f"[{spelt}]")
    except regex.error:
        return False
    return True


# --- case: Character.toUpperCase / toLowerCase (simple mappings) ---------------------


def upper(char: str) -> str:
    """``Character.toUpperCase``: the simple mapping (``ß`` stays ``ß``)."""
    mapped = char.upper()
    if len(mapped) == 1:
        return mapped
    title = char.title()  # the simple upper case of "ᾳ" is its title case, "ᾼ"
    return title if len(title) == 1 else char


def lower(char: str) -> str:
    """``Character.toLowerCase``: the simple mapping (``İ`` is ``i``)."""
    if char == "\u0130":
        return "i"
    mapped = char.lower()
    return mapped if len(mapped) == 1 else char


def fold(char: str) -> str:
    """What Java's (?iu) compares: ``toLowerCase(toUpperCase(c))``."""
    return lower(upper(char))


@functools.cache
def cased() -> tuple[str, ...]:
    """Every character a case mapping changes (astral ones too)."""
    every = "".join(chr(code) for code in range(0x20000) if not 0xD800 <= code < 0xE000)
    found = regex.findall(r"\p{Changes_When_Casemapped}", every)
    return tuple(char for char in found if upper(char) != char or lower(char) != char)


@functools.cache
def folded_together() -> dict[str, frozenset[str]]:
    """Characters by what (?iu) compares (``fold``): ``k``: k, K and the Kelvin sign."""
    groups: dict[str, set[str]] = {}
    for char in cased():
        key = fold(char)
        groups.setdefault(key, {key}).add(char)
    return {key: frozenset(chars) for key, chars in groups.items()}
