"""Java patterns and inputs for the differential test against a real java.util.regex.

``generated(seed, count)`` draws patterns from a grammar over every construct
docs/configuration.md claims for custom rules, each with inputs built from its own
pieces and from text across scripts (Latin, Greek, CJK, astral, combining marks,
CRLF and the Unicode line terminators), seeded and deterministic. ``fixed()`` adds
the patterns people write: the documentation's, secret rules in the shape of the
built-in ones, and the hand-written table of tests/test_javaregex.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Sequence

_T = TypeVar("_T")

# Characters whose case, category or word-ness is a trap: dotted and dotless i,
# the Kelvin and Angstrom signs, long s, sharp s and its capital, a titlecase
# digraph, micro sign, y with diaeresis, final sigma, ohm sign, Deseret (astral
# letters with case), combining marks, digits of other scripts, joiners.
LATIN = (
    "aAbBcCiIkKsSzZ\xe9\xc9\xdf\u1e9e\u017f\u212a\u212b\u0130\u0131"
    "\u01c5\u01c4\u01c6\xb5\xff\u0178\xe5\xc5"
)
GREEK = "\u03c3\u03c2\u03a3\u03c9\u03a9\u2126\u03bc\u039c\u0390\u03b2"
CJK = "\u4e2d\u6587\u306e\u30a2\ud55c"
ASTRAL = "\U00010400\U00010428\U0001f600\U0001d400\U00020000"
MARKS = "\u0301\u0308\u20dd\u0903"
DIGITS = "0123456789\u0663\uff10\uff21\uff41"
SPACES = " \t\xa0\u3000\u2007\u200b\u200c\u200d"
TERMINATORS = ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c"]
PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\xab\xbb\u2010"
CONTROLS = "\x00\x01\x7f\x9f"
ALPHABET = LATIN + GREEK + CJK + ASTRAL + MARKS + DIGITS + SPACES + PUNCT + CONTROLS + "xyz"

# Java 8's property names (java.util.regex.Pattern, UnicodeProp, Character.UnicodeScript
# and UnicodeBlock), with and without the prefixes Java allows, and names it refuses.
PROPERTIES = [
    "L",
    "Lu",
    "Ll",
    "Lt",
    "Lm",
    "Lo",
    "LC",
    "LD",
    "L1",
    "M",
    "Mn",
    "Mc",
    "Me",
    "N",
    "Nd",
    "Nl",
    "No",
    "P",
    "Pc",
    "Pd",
    "Ps",
    "Pe",
    "Pi",
    "Pf",
    "Po",
    "S",
    "Sm",
    "Sc",
    "Sk",
    "So",
    "Z",
    "Zs",
    "Zl",
    "Zp",
    "C",
    "Cc",
    "Cf",
    "Co",
    "Cn",
    "all",
    "ASCII",
    "Alnum",
    "Alpha",
    "Blank",
    "Cntrl",
    "Digit",
    "Graph",
    "Lower",
    "Print",
    "Punct",
    "Space",
    "Upper",
    "XDigit",
    "alpha",
    "lower",
    "IsL",
    "IsLu",
    "IsLl",
    "IsN",
    "IsP",
    "IsS",
    "IsC",
    "IsLC",
    "IsLD",
    "IsL1",
    "IsAlpha",
    "IsLetter",
    "IsDigit",
    "IsPunctuation",
    "IsControl",
    "IsASCII",
    "IsTitlecase",
    "IsAlphabetic",
    "IsIdeographic",
    "IsLowercase",
    "IsUppercase",
    "IsWhite_Space",
    "IsWhiteSpace",
    "IsHexDigit",
    "IsHex_Digit",
    "IsAssigned",
    "IsNoncharacterCodePoint",
    "IsJoinControl",
    "IsAlnum",
    "IsBlank",
    "IsGraph",
    "IsPrint",
    "IsWord",
    "IsLower",
    "IsSpace",
    "Isletter",
    "IsLETTER",
    "IsLatin",
    "IsGreek",
    "IsHan",
    "IsCommon",
    "IsInherited",
    "IsDeseret",
    "Islatin",
    "IsLatn",
    "IsGrek",
    "IsOld_Italic",
    "InGreek",
    "InBasicLatin",
    "InBasic_Latin",
    "InLatin-1 Supplement",
    "InCJKUnifiedIdeographs",
    "InCombiningDiacriticalMarks",
    "InDeseret",
    "InEmoticons",
    "InGREEK_AND_COPTIC",
    "sc=Latin",
    "script=Greek",
    "blk=Greek",
    "block=BasicLatin",
    "gc=Lu",
    "general_category=L",
    "javaLowerCase",
    "javaUpperCase",
    "javaTitleCase",
    "javaDigit",
    "javaLetter",
    "javaLetterOrDigit",
    "javaAlphabetic",
    "javaIdeographic",
    "javaSpaceChar",
    "javaWhitespace",
    "javaISOControl",
    "javaDefined",
    "javaMirrored",
    "javaJavaIdentifierStart",
    "javaJavaIdentifierPart",
    "javaUnicodeIdentifierStart",
    "javaUnicodeIdentifierPart",
    "javaIdentifierIgnorable",
    # refused by Java 8
    "Latin",
    "Greek",
    "L&",
    "White_Space",
    "Alphabetic",
    "IsFoo",
    "InNoSuchBlock",
    "Letter",
    "Is",
    "In",
    "gc=Latin",
    "foo=bar",
    "IsL&",
    "javaFoo",
    "Lowercase",
]
SINGLE_LETTER = ["L", "N", "P", "S", "Z", "C", "M", "+", "]", "{", "l", "Lu"]
FLAGS = "idmsuxU"
CASE_RANGES = [
    "a-z",
    "A-Z",
    "a-f",
    "K-k",
    "\xc0-\xff",
    "\u03b1-\u03c9",
    "\u0391-\u03a9",
    "\U00010400-\U00010427",
    "\u0100-\u017f",
    "h-j",
    "H-J",
    "0-9",
    "!-/",
    "\u2100-\u2130",
]


@dataclass
class Case:
    """A pattern and the inputs to search with it."""

    pattern: str
    inputs: list[str] = field(default_factory=list)


class _Grammar:
    """Random patterns, each with a few strings its pieces match."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.comments = False
        self.groups = 0
        self.names: list[str] = []

    def pick(self, items: Sequence[_T]) -> _T:
        return items[self.rng.randrange(len(items))]

    def char(self) -> tuple[str, str]:
        """(pattern, sample) for one literal character."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.55:
            char = self.pick("abckKsSiIxyz_019" + LATIN + GREEK)
            return char, char
        if roll < 0.7:
            char = self.pick(CJK + ASTRAL + MARKS + DIGITS + "-=:\"'@/ ")
            return (char, char) if char != " " or not self.comments else ("\\ ", " ")
        if roll < 0.8:
            char = self.pick(".[]{}()*+?^$|\\&-#")
            return "\\" + char, char
        escapes = [
            ("\\t", "\t"),
            ("\\n", "\n"),
            ("\\r", "\r"),
            ("\\x41", "A"),
            ("\\x{1F600}", "\U0001f600"),
            ("\\u00e9", "\xe9"),
            ("\\u00C9", "\xc9"),
            ("\\0101", "A"),
            ("\\011", "\t"),
            ("\\cA", "\x01"),
            ("\\e", "\x1b"),
            ("\\a", "\x07"),
            ("\\f", "\x0c"),
            ("\\x{10400}", "\U00010400"),
            ("\\uD801\\uDC00", "\U00010400"),
            ("\\u0130", "\u0130"),
            ("\\u212A", "\u212a"),
        ]
        return self.pick(escapes)

    def class_item(self, depth: int) -> tuple[str, str]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            text, sample = self.char()
            return text, sample
        if roll < 0.55:
            span = self.pick(CASE_RANGES)
            low, high = span[0], span[-1]
            return span, chr(rng.randint(ord(low), ord(high)))
        if roll < 0.7:
            return self.pick(
                [
                    ("\\d", "5"),
                    ("\\w", "w"),
                    ("\\s", " "),
                    ("\\D", "x"),
                    ("\\W", "!"),
                    ("\\S", "x"),
                    ("\\h", "\xa0"),
                    ("\\v", "\x0b"),
                    ("\\H", "h"),
                    ("\\V", "v"),
                ]
            )
        if roll < 0.8:
            return self.property(), ""
        if roll < 0.9 and depth < 2:
            return self.char_class(depth + 1)
        return self.pick(
            [
                ("&&", ""),
                ("&", "&"),
                ("-", "-"),
                ("^", "^"),
                ("[", "["),
                ("&&&", ""),
                ("\\Q]-\\E", "]"),
                ("a-", "a"),
                ("\\\\", "\\"),
                ("\\[", "["),
            ]
        )

    def char_class(self, depth: int = 0) -> tuple[str, str]:
        rng = self.rng
        negated = rng.random() < 0.25
        items = [self.class_item(depth) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.2:
            items.insert(rng.randrange(len(items) + 1), ("&&", ""))
        space = " " if self.comments and rng.random() < 0.5 else ""
        text = "[" + ("^" if negated else "") + space.join(t for t, _ in items) + "]"
        samples = [s for _, s in items if s]
        return text, (self.pick(samples) if samples and not negated else self.pick(ALPHABET))

    def property(self) -> str:
        rng = self.rng
        upper = "P" if rng.random() < 0.25 else "p"
        if rng.random() < 0.15:
            return f"\\{upper}{self.pick(SINGLE_LETTER)}"
        return f"\\{upper}{{{self.pick(PROPERTIES)}}}"

    def quantifier(self) -> str:
        rng = self.rng
        base = self.pick(
            ["*", "+", "?", "{2}", "{0}", "{1,3}", "{2,}", "{0,1}", "{,3}", "{3,1}", "{1"]
        )
        if self.comments and base.startswith("{") and rng.random() < 0.5:
            base = base.replace(",", " , ")
        suffix = self.pick(["", "", "", "?", "+"])
        gap = " " if self.comments and rng.random() < 0.5 else ""
        return base + gap + suffix

    def atom(self, depth: int) -> tuple[str, str]:  # noqa: C901, PLR0911 - one kind a branch
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return self.char()
        if roll < 0.38:
            run = [self.char() for _ in range(rng.randint(2, 4))]
            return "".join(t for t, _ in run), "".join(s for _, s in run)
        if roll < 0.5:
            return self.char_class()
        if roll < 0.56:
            return self.pick(
                [
                    (".", "x"),
                    ("\\d", "7"),
                    ("\\w", "q"),
                    ("\\s", "\t"),
                    ("\\D", "-"),
                    ("\\W", "\xe9"),
                    ("\\S", "\xe9"),
                    ("\\h", " "),
                    ("\\v", "\u2028"),
                    ("\\R", "\r\n"),
                    ("\\H", "x"),
                    ("\\V", "x"),
                ]
            )
        if roll < 0.62:
            return self.property(), self.pick(ALPHABET)
        if roll < 0.72:
            return self.pick(
                [
                    ("^", ""),
                    ("$", ""),
                    ("\\b", ""),
                    ("\\B", ""),
                    ("\\A", ""),
                    ("\\z", ""),
                    ("\\Z", ""),
                    ("\\G", ""),
                ]
            )
        if roll < 0.76:
            return self.pick(
                [
                    ("\\Qa.b\\E", "a.b"),
                    ("\\Q(?i)\\E", "(?i)"),
                    ("\\Q1\\E", "1"),
                    ("\\Q\\\\E", "\\"),
                    ("\\Qa b#\\E", "a b#"),
                    ("\\Q", ""),
                ]
            )
        if roll < 0.8 and self.groups:
            if self.names and rng.random() < 0.4:
                return f"\\k<{self.pick(self.names)}>", ""
            return f"\\{rng.randint(1, self.groups + 1)}", ""
        if roll < 0.82:
            return self.pick(
                [
                    ("\\k<n>", ""),
                    ("\\k<zz>", ""),
                    ("\\y", "y"),
                    ("\\X", "a"),
                    ("\\N{LATIN SMALL LETTER A}", "a"),
                    ("\\b{g}", ""),
                    ("{2}", ""),
                    ("\\8", ""),
                    ("\\c", ""),
                    ("\\x{110000}", ""),
                    ("\\u12", ""),
                ]
            )
        if depth < 3:
            return self.group(depth + 1)
        return self.char()

    def group(self, depth: int) -> tuple[str, str]:
        rng = self.rng
        kind = self.pick(
            ["(", "(", "(?:", "(?:", "(?<n{}>", "(?=", "(?!", "(?<=", "(?<!", "(?>", "flags:"]
        )
        if kind == "(" or kind.startswith("(?<n"):
            self.groups += 1
        if kind.startswith("(?<n"):
            name = f"n{self.groups}"
            kind = f"(?<{name}>"
        elif kind == "flags:":
            kind = "(?" + self.flags() + ":"
        saved = self.comments
        body, sample = self.alternation(depth)
        self.comments = saved
        if kind.startswith("(?<n"):
            self.names.append(kind[3:-1])
        if kind in ("(?=", "(?!", "(?<=", "(?<!"):
            sample = ""
        space = " " if self.comments and rng.random() < 0.3 else ""
        return f"{kind}{space}{body}{space})", sample

    def flags(self) -> str:
        rng = self.rng
        on = "".join(f for f in FLAGS if rng.random() < 0.2)
        off = "".join(f for f in FLAGS if rng.random() < 0.08)
        if "x" in on:
            self.comments = True
        if "x" in off:
            self.comments = False
        return on + ("-" + off if off else "")

    def sequence(self, depth: int) -> tuple[str, str]:
        rng = self.rng
        parts: list[str] = []
        samples: list[str] = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.08:
                flags = self.flags()
                parts.append(f"(?{flags})")
                continue
            text, sample = self.atom(depth)
            if rng.random() < 0.25:
                quantifier = self.quantifier()
                text += quantifier
                if quantifier.startswith(("*", "?", "{0")):
                    sample = sample if rng.random() < 0.5 else ""
                elif quantifier[:2] in ("{2", "+"):
                    sample = sample * 2
            parts.append(text)
            samples.append(sample)
            if self.comments and rng.random() < 0.3:
                parts.append(self.pick([" ", "\t", " # note\n", "\n"]))
        return "".join(parts), "".join(samples)

    def alternation(self, depth: int) -> tuple[str, str]:
        text, sample = self.sequence(depth)
        while self.rng.random() < 0.2:
            other, other_sample = self.sequence(depth)
            text += "|" + other
            sample = self.pick([sample, other_sample])
        return text, sample

    def pattern(self) -> tuple[str, str]:
        prefix = ""
        if self.rng.random() < 0.45:
            prefix = f"(?{self.flags()})"
        body, sample = self.alternation(0)
        return prefix + body, sample


def _mutations(rng: random.Random, sample: str) -> list[str]:
    """Text around and inside a matching sample: other cases, terminators, marks."""
    terminator = TERMINATORS[rng.randrange(len(TERMINATORS))]
    noise = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6)))
    swapped = "".join(c.swapcase() if rng.random() < 0.5 else c for c in sample)
    folded = sample.translate(
        {
            ord("k"): "\u212a",
            ord("i"): "\u0131",
            ord("I"): "\u0130",
            ord("s"): "\u017f",
            ord("\xdf"): "\u1e9e",
            ord("\u03c3"): "\u03c2",
        }
    )
    return [
        sample,
        noise + sample + terminator,
        swapped + terminator + sample,
        folded,
        rng.choice(MARKS) + sample + rng.choice(MARKS),
        "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 10))) + rng.choice(TERMINATORS),
    ]


def generated(seed: int, count: int) -> list[Case]:
    """``count`` patterns from the grammar, each with inputs it should see."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        grammar = _Grammar(rng)
        pattern, sample = grammar.pattern()
        cases.append(Case(pattern, _mutations(rng, sample)))
    return cases


# Secret rules as people write them for the server app (the shapes of gitleaks'
# and the app's own rules), in Java's dialect.
SECRET_RULES = [
    r"AKIA[0-9A-Z]{16}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"(?i)aws(.{0,20})?(?-i)['\"][0-9a-zA-Z/+]{40}['\"]",
    r"(?i)(?:password|passwd|pwd)\s*[:=]\s*['\"]?[^\s'\"]{8,}",
    r"ghp_[0-9a-zA-Z]{36}",
    r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36,255}",
    r"xox[baprs]-([0-9a-zA-Z]{10,48})",
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----",
    r"(?i)api[_-]?key\s*[:=]\s*['\"]([a-z0-9]{32,45})['\"]",
    r"sk_live_[0-9a-zA-Z]{24}",
    r"AIza[0-9A-Za-z\-_]{35}",
    r"[a-zA-Z0-9_-]*:[a-zA-Z0-9_\-]+@github\.com*",
    r"(?i)\b(?:secret|token)\b\s*=\s*\"[^\"]+\"",
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9._-]{10,}",
    r"(?m)^\s*db_pass(?:word)?\s*=\s*\S+$",
    r"https?://[^\s:@/]+:[^\s:@/]+@[\w.-]+",
    r"\b[0-9a-f]{32}\b",
    r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
    r"\p{Alnum}{20,}",
    r"(?U)\bclave\s*[:=]\s*\w{6,}",
    r"(?iu)contrase\u00f1a\s*=\s*\S+",
    r"(?x) tok_ [a-z0-9]{8}  # a token",
    r"\$\{?[A-Z_]+\}?",
    r"[\w.+-]+@[\w-]+\.[\w.]+",
    r"(?s)BEGIN.*?END",
    r"\d{3}-\d{2}-\d{4}",
    r"sq0atp-[0-9A-Za-z\-_]{22}",
    r"\bSG\.[\w-]{22}\.[\w-]{43}\b",
    r"[^\p{ASCII}]+",
    r"\p{IsLatin}{3,}\d",
]
SECRET_INPUTS = [
    "aws_access_key_id = AKIAABCDEFGHIJKLMNOP",
    "\u0301AKIAABCDEFGHIJKLMNOP",
    "id: AKIAABCDEFGHIJKLMNOP\u00e9",
    "PASSWORD = '" + expand("{rand:Aa0:14}", "java-oracle") + "'\r\n",
    "token = ghp_" + "a1B2" * 9,
    'const key = "xoxb-1234567890-abcdefghij"',
    "-----BEGIN RSA PRIVATE KEY-----",
    "API_KEY: 'abcdefabcdefabcdefabcdefabcdef12'",
    "url = https://user:pa55@example.com/x",
    "contrase\u00d1a = s3cr3t\u2028next",
    "clave: \u00e1rbol99",
    "tok_abcd1234 and TOK_ABCD1234",
    "BEGIN\nsecret\nEND",
    '\u4e2d\u6587 secret = "\u00e9t\u00e9"',
    "e\u0301AKIAABCDEFGHIJKLMNOP",
    "\U0001f600AKIAABCDEFGHIJKLMNOP\U0001f600",
]


def fixed(doc_patterns: list[str], table: list[tuple[str, str]]) -> list[Case]:
    """The documentation's patterns, secret rules and the hand-written table's rows."""
    rng = random.Random(8)
    cases = [Case(rule, list(SECRET_INPUTS)) for rule in SECRET_RULES]
    cases += [Case(p, [*SECRET_INPUTS[:6], *_mutations(rng, p)]) for p in doc_patterns]
    cases += [Case(p, [t, t.swapcase(), t + "\r\n", "\u0301" + t]) for p, t in table]
    return cases
