"""Lines as their readers see them (``detection.decoded``), and the property that ties
every form to its plain one: random text with a token, in each encoding a checkout
writes (with and without a byte order mark) and in each escape form a consumer
decodes, is judged as its UTF-8 form is: the same rules on the same lines."""

from __future__ import annotations

import base64
import random
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spillguard.configuration.rules import builtin_rules
from spillguard.core.decode import readings, wide_encoding
from spillguard.core.models import Fragment, Rule, RuleSet
from spillguard.detection.decoded import View, _decoded, may_decode, views
from spillguard.detection.engine import Scanner
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable

KEY = expand("AKIA{rand:A2:16}", "decoded")


def decoded(text: str) -> list[tuple[int, str]]:
    return [(view.line, view.text) for view in views(text)]


def json_escaped(text: str) -> str:
    return "".join(f"\\u{ord(character):04x}" for character in text)


def html_decimal(text: str) -> str:
    return "".join(f"&#{ord(character)};" for character in text)


def html_hexadecimal(text: str) -> str:
    return "".join(f"&#x{ord(character):X};" for character in text)


def percent(text: str) -> str:
    return "".join(f"%{ord(character):02X}" for character in text)


def zero_width(text: str) -> str:
    return "\u200b".join(text)


def escaped_bytes(text: str) -> str:
    return "".join(f"\\x{ord(character):02x}" for character in text)


#: Each escape form a consumer decodes, applied to a piece of a line.
ESCAPES: dict[str, Callable[[str], str]] = {
    "json": json_escaped,
    "bytes": escaped_bytes,
    "html": html_decimal,
    "html-hex": html_hexadecimal,
    "percent": percent,
    "zero-width": zero_width,
    "percent-of-json": lambda text: percent(json_escaped(text)),
}


@pytest.mark.parametrize("form", ESCAPES)
def test_each_escape_form_reads_as_its_plain_text(form: str) -> None:
    line = f'aws_key = "{ESCAPES[form](KEY)}"'
    assert may_decode(line)
    assert decoded(f"first\n{line}\nlast\n") == [(1, f'aws_key = "{KEY}"')]


def test_a_numeric_reference_may_lack_its_semicolon() -> None:
    """As HTML5 reads it: up to the first character that is no digit."""
    assert decoded("<a title='&#103hp_x&#x41'>\n") == [(0, "<a title='ghp_xA'>")]


def test_quoted_printable_is_decoded_where_the_text_says_it_is() -> None:
    mail = f"Content-Transfer-Encoding: quoted-printable\n\naws_key=3D{KEY[:9]}=\n{KEY[9:]}\n"
    assert decoded(mail) == [(2, f"aws_key={KEY}")]
    # an assignment with nothing after it is no soft line break in other text
    assert decoded("PASSWORD=\nUSER=admin\n") == []


def test_what_would_end_a_line_or_control_it_stays_escaped() -> None:
    assert decoded("a = '\\u000a\\u0000%0A&#10;\\x1b'\n") == []
    assert decoded("pair = '\\ud83d\\ude00 \\ud83d'\n") == [(0, "pair = '\U0001f600 \\ud83d'")]


def test_plain_text_has_no_views() -> None:
    text = "printf('%s', name);\nif (a && b) { x = y \\\n z; }\ncafé = 'naïve'\n"
    assert may_decode(text)  # outside ASCII: the invisible characters are looked for
    assert views(text) == []
    assert not may_decode("x = 1\ny = 2\n")
    # Code's backslashes, && and %s are no escapes, a translation's letters nothing
    # a decoder reads: such fragments are not decoded.
    assert not may_decode(text.replace("café = 'naïve'", "cafe = 'naive'"))
    assert not may_decode('msgstr "Пароль: %s"\nmsgstr "密码"\n')


def test_quoted_printable_alone_is_decoded() -> None:
    """A mail that says it is quoted-printable, with none of the other forms' marks."""
    mail = f"Content-Transfer-Encoding: quoted-printable\n\ntoken: {KEY[:4]}=5F{KEY[4:]}\n"
    assert may_decode(mail)
    assert decoded(mail) == [(2, f"token: {KEY[:4]}_{KEY[4:]}")]


#: Pieces of text that hold, or nearly hold, what a decoder reads.
_PIECES = (
    "\\u0067",
    "\\x41",
    "\\/",
    "\\",
    "&#103;",
    "&#x41",
    "&amp;",
    "&&",
    "%41",
    "%s",
    "%",
    "=3D",
    "=41",
    "=",
    "quoted-printable",
    "BEGIN ",
    "é",
    "\u200b",
    "д",
    "中",
    "\x85",
    "ghp_".encode("cp037").decode("latin-1"),
    "a",
    " ",
    "\n",
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_every_line_a_decoder_changes_has_its_view(pieces: list[str]) -> None:
    """``may_decode`` is the engine's gate to ``views``, and ``views`` looks only at
    the lines it finds something on: neither may keep a line that decoding changes
    (each line decoded on its own is the oracle) from its view."""
    text = "".join(pieces)
    printable = "=3D" in text or "quoted-printable" in text
    changed = [
        index
        for index, line in enumerate(text.split("\n"))
        if _decoded(line, printable=printable) != line and not line.rstrip("\r").endswith("=")
    ]
    if changed:
        assert may_decode(text)
        assert set(changed) <= {view.line for view in views(text)}


def test_ebcdic_text_reads_as_the_ascii_it_holds() -> None:
    text = f"# settings\naws_key = {KEY}\n".encode("cp037").decode("latin-1")
    assert decoded(text) == [(0, f"# settings\naws_key = {KEY}\n")]
    # Latin-1 text is not EBCDIC: its letters are ASCII
    assert decoded("Grüße aus München, schöne Grüße\n") == []


def key_body(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_key_block_is_read_as_a_decoder_reads_it() -> None:
    body = key_body(b"\x30\x82\x04\xa4" + bytes(range(200)))
    spaced = "\n".join(" ".join(body[at : at + 4] for at in range(0, 64, 4)) for _ in range(1))
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{spaced}{body[64:]}\n-----END RSA PRIVATE KEY-----\n"
    (view,) = views(text)
    assert view.line == 0
    assert view.first_only
    lines = view.text.splitlines()
    assert lines[0] == "-----BEGIN RSA PRIVATE KEY-----"
    assert "".join(lines[1:-1]) == body
    assert all(len(line) <= 64 for line in lines[1:-1])


@pytest.mark.parametrize(
    "body",
    [
        "Paste the contents of your private key file here between these two lines please",
        key_body(b"\x04" + bytes(200)),  # base64, but no DER
        key_body(b"\x30\x82"),  # too short to be a key
    ],
)
def test_a_block_a_decoder_would_refuse_has_no_view(body: str) -> None:
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
    assert views(text) == []


def test_a_key_without_its_end_line_has_no_view() -> None:
    """openssl and ssh-keygen refuse it too."""
    body = key_body(b"\x30\x82\x04\xa4" + bytes(200))
    assert views(f"-----BEGIN PRIVATE KEY-----\n{' '.join(body)}\n") == []


# The property ----------------------------------------------------------------------------

#: Lines of ordinary text around the token: code, prose, other scripts.
AROUND = [
    "def main() -> None:",
    "    return compute(x, y)",
    "# Grüße aus München",
    "名前 = 'テスト'",
    "Ελληνικά κείμενα εδώ",
    "",
    "    items = [1, 2, 3]",
    "SELECT name FROM users WHERE id = 1;",
    "<p>Bonjour, ça va ?</p>",
    "- step: build",
]
LATIN = [line for line in AROUND if line.encode("latin-1", "ignore").decode("latin-1") == line]
#: Token lines a rule blocks, as templates.
TOKENS = [
    "aws_key = {rand:A2:16}",
    "token = 'ghp_{rand:Aa0:30}{crc32}'",
    'slack = "xoxb-{rand:0:11}-{rand:0:12}-{rand:Aa0:24}"',
    'password = "{rand:Aa0:18}"',
]


def token_line(rng: random.Random) -> str:
    template = rng.choice(TOKENS).replace("{rand:A2:16}", "AKIA{rand:A2:16}", 1)
    return expand(template, rng.random())


def random_text(rng: random.Random, pool: list[str]) -> tuple[list[str], int]:
    """Lines of ``pool`` with a token line among them, and its index."""
    lines = [rng.choice(pool) for _ in range(rng.randint(0, 12))]
    at = rng.randint(0, len(lines))
    lines.insert(at, token_line(rng))
    return lines, at


SCANNER = Scanner(RuleSet(rules=builtin_rules()))


def verdict(*texts: str) -> set[tuple[int, str, bool]]:
    """The findings of a blob judged as each of ``texts``: line, rule, blocking."""
    found = set()
    for text in texts:
        for finding in SCANNER.scan(Fragment(path="notes.txt", text=text)):
            found.add((finding.line, finding.rule, finding.blocking))
    return found


def escaped_token_line(line: str, escape: Callable[[str], str], rng: random.Random) -> str:
    """The line with its value (after ``=``), or a piece of it, or all of it, escaped."""
    name, _, value = line.partition("= ")
    piece = rng.choice(["value", "middle", "line"])
    if piece == "line":
        return escape(line)
    if piece == "middle":
        start = rng.randint(1, len(value) // 2)
        return f"{name}= {value[:start]}{escape(value[start : start + 6])}{value[start + 6 :]}"
    return f"{name}= {escape(value)}"


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("form", ESCAPES)
def test_every_escape_form_is_judged_as_its_plain_text(form: str, seed: int) -> None:
    rng = random.Random(f"{form}-{seed}")  # noqa: S311 - reproducible cases
    lines, at = random_text(rng, AROUND)
    plain = "\n".join(lines) + "\n"
    expected = verdict(plain)
    assert any(blocking for _, _, blocking in expected), plain
    lines[at] = escaped_token_line(lines[at], ESCAPES[form], rng)
    assert verdict("\n".join(lines) + "\n") == expected


@pytest.mark.parametrize("seed", range(12))
def test_quoted_printable_is_judged_as_its_plain_text(seed: int) -> None:
    rng = random.Random(f"qp-{seed}")  # noqa: S311 - reproducible cases
    lines, at = random_text(rng, [line for line in AROUND if line.isascii()])
    expected = verdict("\n".join(lines) + "\n")
    line = lines[at].replace("=", "=3D")
    cut = rng.randint(len(line) // 2, len(line) - 1)
    lines[at : at + 1] = [f"{line[:cut]}=", line[cut:]]
    lines.insert(0, "Content-Transfer-Encoding: quoted-printable")
    shifted = {(number + 1, rule, blocking) for number, rule, blocking in expected}
    assert verdict("\n".join(lines) + "\n") == shifted


#: (codec, byte order mark) of each encoding a checkout may write.
ENCODINGS = [
    ("utf-16-le", b"\xff\xfe"),
    ("utf-16-be", b"\xfe\xff"),
    ("utf-32-le", b"\xff\xfe\x00\x00"),
    ("utf-32-be", b"\x00\x00\xfe\xff"),
]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("marked", [True, False], ids=["mark", "no-mark"])
@pytest.mark.parametrize(("codec", "mark"), ENCODINGS, ids=[codec for codec, _ in ENCODINGS])
def test_every_encoding_is_judged_as_its_utf8_form(
    codec: str, mark: bytes, seed: int, *, marked: bool
) -> None:
    rng = random.Random(f"{codec}-{seed}")  # noqa: S311 - reproducible cases
    lines, _ = random_text(rng, AROUND)
    plain = "\n".join(lines) + "\n"
    data = (mark if marked else b"") + plain.encode(codec)
    assert wide_encoding(data) is not None
    assert verdict(*readings(data)) == verdict(plain)


@pytest.mark.parametrize("seed", range(10))
def test_ebcdic_is_judged_as_its_ascii_form(seed: int) -> None:
    rng = random.Random(f"ebcdic-{seed}")  # noqa: S311 - reproducible cases
    lines, _ = random_text(rng, LATIN)
    plain = "\n".join(lines) + "\n"
    assert verdict(*readings(plain.encode("cp037"))) == verdict(plain)


def test_a_view_never_hides_what_the_stored_line_blocks() -> None:
    """The decoded form's first rule takes the line only if it blocks as much."""
    warn = Rule(name="WARN", kind="custom", regexp=r"warn_[a-z]+", blocking=False)
    block = Rule(name="BLOCK", kind="custom", regexp=r"tok_[a-z]+")
    scanner = Scanner(RuleSet(rules=(warn, block)))

    def judged(text: str) -> list[tuple[str, str]]:
        return [(f.rule, f.text) for f in scanner.scan(Fragment(path="a.txt", text=text))]

    assert judged("tok_abc %77arn_abc\n") == [("BLOCK", "tok_abc %77arn_abc")]
    assert judged("warn_abc %74ok_abc\n") == [("WARN", "warn_abc tok_abc")]
    assert judged("x %74ok_abc\n") == [("BLOCK", "x tok_abc")]


def test_views_are_the_lines_decoded() -> None:
    assert views("a\n%41%42\n") == [View(1, "AB")]
