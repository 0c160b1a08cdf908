"""The blind corpus: secrets of the long tail as people leak them, by people who did not
write the rules (issue 29's evaluation), and hard near-misses beside them.

Written without reading the built-in rules, the shape detector or the other corpora,
from how developers and operators write config, code, command lines, logs, dumps and
notes for hundreds of services with no fixed prefix. Each case is a whole file:

- a positive (``blind_config``, ``blind_code``, ``blind_text``) is
  ``(family, mechanism, path, text)``; ``§`` marks where its secret starts, and its
  line is the secret's line (found: a finding on that line);
- a near-miss (``blind_near``) is ``(family, path, text)``: flagged when its file has
  any finding at all. The family ``documented example`` holds values published as
  examples in vendors' documentation and RFCs.

Values are generated at test time, so the repository holds no credential. Besides
``{rand:CHARSET:N}`` (testing/tokens.py) a template may hold:

    {uuid} {UUID}      a random UUID (lower or upper case)
    {human}            a person's password: a dictionary word with digits or symbols
    {punct:N}          N characters of letters, digits and URL-hostile punctuation
    {django}           a Django-style secret key (50 characters of its alphabet)
    {salt}             a WordPress-style salt (64 printable characters, no quotes)
    {words:N}          N lowercase dictionary words joined by spaces (a seed phrase)
    {wpapp}            a WordPress application password (six groups of four)
    {jwt}              a signed JWT of random claims
    {pem:TYPE}         a PEM block of TYPE, one line per 64 characters
    {pem1:TYPE}        the same block with its line breaks written as ``\\n``
    {b64:TEXT}         TEXT (expanded first) in base64; {b64u:TEXT} in base64url
    {lit:TEXT}         TEXT itself (a near-miss the repository's own scan would report)

The case's label names its mechanism (the shape that makes it a secret) and its
line with every generated value masked (``<hex 32>``), for bench/recall.py --blind.
"""

from __future__ import annotations

import base64
import collections
import json
import random
import string
import uuid

import regex

from testing.recall.blind_code import CODE
from testing.recall.blind_config import CONFIG
from testing.recall.blind_near import DOCUMENTED, NEAR
from testing.recall.blind_text import TEXT
from testing.recall.families import Case
from testing.tokens import expand

MARK = "§"
DOCUMENTED_FAMILY = "documented example"

_WORDS = (
    "sunshine",
    "dragon",
    "monkey",
    "falcon",
    "winter",
    "summer",
    "autumn",
    "coffee",
    "rocket",
    "banana",
    "tiger",
    "football",
    "shadow",
    "hunter",
    "pepper",
    "orange",
    "silver",
    "thunder",
    "maple",
    "ocean",
    "jupiter",
    "phoenix",
    "marina",
    "garden",
    "bluebird",
    "chelsea",
    "liverpool",
    "matrix",
    "viking",
    "panther",
    "lemon",
    "tulip",
    "cobalt",
    "harbor",
    "pirate",
    "castle",
    "meadow",
    "willow",
    "raven",
    "copper",
)
_SYMBOLS = "!@#$%&*?"
_BASE62 = string.ascii_letters + string.digits
_PUNCT = string.ascii_letters + string.digits + ".~!@#$%^&*-_+="
_DJANGO = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"
_SALT = "".join(c for c in string.printable[:94] if c not in "'\"\\`{}")
_NAMES = {
    "h": "hex",
    "H": "HEX",
    "Aa0": "base62",
    "A0": "A-Z0-9",
    "a0": "a-z0-9",
    "b64": "base64",
    "b64u": "base64url",
    "Aa0_-": "base64url",
    "Aa0_": "base62_",
    "Aa0-": "base62-",
    "a0_-": "a-z0-9_-",
    "Aa": "letters",
    "A": "A-Z",
    "a": "a-z",
    "0": "digits",
    "A2": "base32",
    "B58": "base58",
    "B32": "bech32",
}
# ``{lit:TEXT}`` is TEXT as it is: a near-miss the repository's own scan would report
# (the very false flag the corpus measures) is written so, and the scan stays clean.
_LITERAL = regex.compile(r"\{lit:([^{}]*)\}")
_SIMPLE = regex.compile(r"\{(uuid|UUID|human|punct:\d+|django|salt|words:\d+|wpapp|jwt)\}")
_PEM = regex.compile(r"\{(pem1?):([A-Z ]+)\}")
# What is encoded may hold one level of braces (a JSON object, once expanded).
_B64 = regex.compile(r"\{(b64u?):((?:[^{}]|\{[^{}]*\})*)\}")
_MASK = regex.compile(
    r"\{rand:([^:}]+):(\d+)\}|\{(b64u?):(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}|\{([a-z0-9: ]+)\}",
    regex.IGNORECASE,
)


def human_password(rng: random.Random) -> str:
    """A password a person picks: a word, made to pass a policy with digits and symbols."""
    word = rng.choice(_WORDS)
    digits = str(rng.randint(10, 9999))
    symbol = rng.choice(_SYMBOLS)
    shapes = (
        f"{word.capitalize()}{rng.randint(1990, 2025)}{symbol}",
        f"{word}{digits}",
        f"{word.capitalize()}{symbol}{digits}",
        f"{word.capitalize()}{rng.choice(_WORDS).capitalize()}{rng.randint(1, 99)}",
        f"{word[0].upper()}{word[1:].replace('o', '0').replace('e', '3')}{symbol}{digits}",
        f"{word}{symbol}{rng.choice(_WORDS)}{rng.randint(1, 9)}",
    )
    return rng.choice(shapes)


def _chars(alphabet: str, length: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _punctuated(length: int, rng: random.Random) -> str:
    while True:
        value = _chars(_PUNCT, length, rng)
        if sum(c in ".~!@#$%^&*-_+=" for c in value) >= 2 and any(c.isdigit() for c in value):
            return value


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}
    claims = {
        "sub": _chars(string.ascii_lowercase + string.digits, 12, rng),
        "iat": rng.randint(1_600_000_000, 1_700_000_000),
        "role": rng.choice(["service", "admin", "deploy"]),
    }
    signature = _chars(string.ascii_letters + string.digits + "-_", 43, rng)
    parts = (_b64u(json.dumps(header).encode()), _b64u(json.dumps(claims).encode()))
    return ".".join((*parts, signature))


def _pem(kind: str, label: str, rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(rng.randint(600, 900))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    text = "\n".join(["-----BEGIN " + label + "-----", *lines, "-----END " + label + "-----"])
    return text.replace("\n", "\\n") if kind == "pem1" else text


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(bytes=rng.randbytes(16), version=4))


def _simple(name: str, rng: random.Random) -> str:
    kind, _, size = name.partition(":")
    makers = {
        "uuid": lambda: _uuid(rng),
        "UUID": lambda: _uuid(rng).upper(),
        "human": lambda: human_password(rng),
        "punct": lambda: _punctuated(int(size), rng),
        "django": lambda: _chars(_DJANGO, 50, rng),
        "salt": lambda: _chars(_SALT, 64, rng),
        "words": lambda: " ".join(rng.choice(_WORDS) for _ in range(int(size))),
        "wpapp": lambda: " ".join(_chars(_BASE62, 4, rng) for _ in range(6)),
        "jwt": lambda: _jwt(rng),
    }
    return makers[kind]()


def render(template: str, seed: str) -> str:
    """The text of a case: every generated value filled in, reproducibly for a seed."""
    rng = random.Random(seed)
    text = _SIMPLE.sub(lambda m: _simple(m.group(1), rng), template)
    text = _PEM.sub(lambda m: _pem(m.group(1), m.group(2), rng), text)
    text = expand(text, seed)
    text = _B64.sub(
        lambda m: (
            base64.b64encode(m.group(2).encode()).decode()
            if m.group(1) == "b64"
            else _b64u(m.group(2).encode())
        ),
        text,
    )
    return _LITERAL.sub(lambda m: m.group(1), text)


def mask(line: str) -> str:
    """A template line with each generated value named by its shape (``<hex 32>``)."""

    def name(match: regex.Match[str]) -> str:
        if match.group(1):
            return f"<{_NAMES.get(match.group(1), match.group(1))} {match.group(2)}>"
        if match.group(3):
            return f"<{match.group(3)} of ...>"
        return f"<{match.group(4)}>"

    return _MASK.sub(name, _LITERAL.sub(lambda m: m.group(1), line)).replace(MARK, "")


def _label(mechanism: str, path: str, template: str) -> str:
    lines = template.splitlines() or [""]
    marked = next((line for line in lines if MARK in line), lines[0])
    return f"[{mechanism}] {path}: {mask(marked).strip()[:110]}"


def positive_case(family: str, mechanism: str, path: str, template: str, seed: str) -> Case:
    text = render(template, seed)
    before, mark, _ = text.partition(MARK)
    if not mark:
        raise ValueError(f"blind corpus: no {MARK} in the case of {family} at {path}")
    return Case(
        family,
        _label(mechanism, path, template),
        path,
        text.replace(MARK, ""),
        before.count("\n") + 1,
    )


def near_case(family: str, path: str, template: str, seed: str) -> Case:
    lines = [line for line in template.splitlines() if line.strip()]
    label = f"{path}: {mask(lines[0] if lines else '').strip()[:110]}"
    return Case(family, label, path, render(template, seed), None)


def blind_corpus(seed: str) -> list[Case]:
    """Every case of the blind corpus, its values generated from ``seed``.

    A case's values depend on the seed, its family and its path only, so adding a
    case leaves every other case as it was."""
    cases: list[Case] = []
    seen: collections.Counter[str] = collections.Counter()

    def case_seed(family: str, path: str) -> str:
        key = f"{seed}/{family}/{path}"
        seen[key] += 1
        return f"{key}/{seen[key]}"

    for family, mechanism, path, template in (*CONFIG, *CODE, *TEXT):
        cases.append(positive_case(family, mechanism, path, template, case_seed(family, path)))
    for family, path, template in NEAR:
        cases.append(near_case(family, path, template, case_seed(family, path)))
    for path, template in DOCUMENTED:
        cases.append(
            near_case(DOCUMENTED_FAMILY, path, template, case_seed(DOCUMENTED_FAMILY, path))
        )
    return cases
