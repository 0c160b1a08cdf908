"""Lines as their readers see them: what a consumer decodes, for the engine to judge too.

A JSON parser turns ``\\u0067hp_`` into ``ghp_``, a browser ``&#103;`` into ``g``, a
URL parser ``%67`` into ``g``, a mail reader quoted-printable ``=67`` into ``g``; an
editor shows nothing of a zero-width space inside a token; a mainframe reads EBCDIC
bytes as text; openssl and ssh-keygen read a private key whatever whitespace its body
holds. Each line is judged as stored and, where it differs, as decoded (``View``).

Every decoder runs only where the text holds what it decodes (``may_decode``: a few
searches in C), so the text of a commit that holds none costs nothing more. A decoded
character that would end a line or is a control character stays escaped: a view has
the lines of its text.
"""

from __future__ import annotations

import functools
import re


class View:
    """A line of a text as its reader sees it (a plain class: a NamedTuple would cost
    a hook's start-up more to define)."""

    __slots__ = ("first_only", "line", "text")

    def __init__(self, line: int, text: str, *, first_only: bool = False) -> None:
        #: The line's index in the text (0 for its first line).
        self.line = line
        #: The line decoded; it may hold newlines (EBCDIC text's own line ends, a key's
        #: body put under its header).
        self.text = text
        #: Only the first line of ``text`` stands for the line: the rest is context that
        #: rules reading past their line see (a key's body), not lines of the text.
        self.first_only = first_only

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, View):
            return NotImplemented
        return (self.line, self.text, self.first_only) == (other.line, other.text, other.first_only)

    def __hash__(self) -> int:
        return hash((self.line, self.text, self.first_only))

    def __repr__(self) -> str:
        return f"View({self.line!r}, {self.text!r}, first_only={self.first_only!r})"


#: The forms decoded, each named as docs/configuration.md lists them.
FORMS = (
    "JSON and JavaScript escapes",
    "HTML character references",
    "percent-encoding",
    "quoted-printable",
    "invisible characters",
    "EBCDIC",
    "private key armour",
)

#: Passes over a line: ``%5Cu0067`` is a percent-encoded JSON escape.
_ROUNDS = 3
#: A key body longer than this is not a key (a 16384-bit RSA key is about 13,000).
_MAX_BODY = 1 << 16
#: The fewest bytes a key's body decodes to (an ed25519 key in PKCS #8 has 48).
_MIN_KEY_BYTES = 32
#: How many lines a quoted-printable soft break may join into one.
_MAX_JOINED = 16
#: An EBCDIC line: mostly bytes outside ASCII, and printable ASCII (but this share)
#: once decoded.
_EBCDIC_SHARE = 0.95


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """Each pattern compiled on first use: most text never needs one."""
    return re.compile(pattern)


def may_decode(text: str) -> bool:
    """Whether some line of ``text`` reads otherwise decoded, as far as ``views`` can
    tell without decoding: what a decoder reads is in it (an escape, a reference, a
    percent-encoded byte, quoted-printable text, a key's armour, an invisible character,
    a byte EBCDIC may have written). A few searches in C: code is full of backslashes,
    ``&&`` and ``%s``, translations of letters outside ASCII, and none of those costs a
    fragment its decoding."""
    if "BEGIN " in text:
        return True
    if not text.isascii() and _compiled(_DECODABLE_OUTSIDE_ASCII).search(text):
        return True
    if ("\\" in text or "&" in text or "%" in text) and _compiled(_ESCAPE).search(text):
        return True
    return _quoted_printable(text) and _compiled(_SOFT_BREAK).search(text) is not None


def views(text: str) -> list[View]:
    """The lines of ``text`` whose decoded form differs from it, in order (a line may
    have two: its escapes decoded, and a key it opens as openssl reads it). Only the
    lines that hold something to decode are looked at."""
    printable = _quoted_printable(text)
    found: list[View] = []
    index = counted = 0
    for start, end in _lines_to_decode(text, printable=printable):
        index += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        if printable and line.rstrip("\r").endswith("="):
            line = _joined(text, start)
        decoded = _decoded(line, printable=printable)
        if decoded != text[start:end]:
            found.append(View(index, decoded))
    if "BEGIN " in text:
        found.extend(_key_views(text))
        found.sort(key=lambda view: view.line)
    return found


#: Where an escape, a reference or a percent-encoded byte may start (one search in C).
_ESCAPE = r"\\[ux/]|&#|&[A-Za-z][A-Za-z0-9]{1,31};|%[0-9A-Fa-f]{2}"


#: Quoted-printable's encoded bytes and soft line breaks.
_SOFT_BREAK = r"(?m)=[0-9A-F]{2}|=\r?$"


def _lines_to_decode(text: str, *, printable: bool) -> list[tuple[int, int]]:
    """The (start, end) of each line that holds something a decoder reads, in order."""
    searches = [_compiled(_ESCAPE)]
    if printable:
        searches.append(_compiled(_SOFT_BREAK))
    if not text.isascii():
        searches.append(_compiled(_DECODABLE_OUTSIDE_ASCII))
    lines: set[tuple[int, int]] = set()
    for search in searches:
        position = 0
        while (found := search.search(text, position)) is not None:
            start = text.rfind("\n", 0, found.start()) + 1
            end = text.find("\n", found.start())
            end = len(text) if end == -1 else end
            lines.add((start, end))
            position = end + 1
    return sorted(lines)


def _quoted_printable(text: str) -> bool:
    """Whether the text says it is quoted-printable: the encoding of ``=`` itself (any
    assignment has one), or the MIME header's name."""
    return "=3D" in text or "uoted-printable" in text or "UOTED-PRINTABLE" in text


def _joined(text: str, start: int) -> str:
    """The line at ``start`` and those its soft line breaks (``=`` at the end) join to it."""
    parts = []
    for written in text[start:].split("\n", _MAX_JOINED)[:_MAX_JOINED]:
        line = written.rstrip("\r")
        if not line.endswith("="):
            parts.append(line)
            break
        parts.append(line[:-1])
    return "".join(parts)


def _decoded(line: str, *, printable: bool) -> str:
    """The line with every form decoded, over a few passes (one form may hold another)."""
    line = _ebcdic(line)
    for _ in range(_ROUNDS):
        new = line
        if "\\" in new:
            new = _compiled(_BACKSLASH).sub(_unescape, new)
        if "&" in new:
            new = _compiled(_REFERENCE).sub(_dereference, new)
        if "%" in new:
            new = _compiled(_PERCENT).sub(_unpercent, new)
        if printable and "=" in new:
            new = _compiled(_PRINTABLE).sub(_unpercent, new)
        if not new.isascii():
            new = _compiled(_INVISIBLE).sub("", new)
        if new == line:
            break
        line = new
    return line


#: \uXXXX (with its low surrogate when it is a high one), \xXX, and \/ (PHP's
#: json_encode writes every / so).
_BACKSLASH = (
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\(/)"
)


def _unescape(match: re.Match[str]) -> str:
    high, low, unit, byte, slash = match.groups()
    if slash:
        return slash
    if high:
        code = 0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00)
    else:
        code = int(unit or byte, 16)
    return _character(code, match.group())


def _character(code: int, written: str) -> str:
    """The character ``code``; ``written`` where it would end the line, be a control
    character or is no character (a lone surrogate)."""
    if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code > 0x10FFFF:
        return written
    if code in (0x2028, 0x2029):
        return written
    return chr(code)


#: Numeric references may lack their semicolon (HTML5 reads &#103hp as ghp);
#: named ones need it.
_REFERENCE = r"&#([0-9]{1,7});?|&#[xX]([0-9a-fA-F]{1,6});?|&[A-Za-z][A-Za-z0-9]{1,31};"


def _dereference(match: re.Match[str]) -> str:
    decimal, hexadecimal = match.groups()
    if decimal is None and hexadecimal is None:
        import html  # here: its table of 2,000 names costs a hook's start-up

        named = html.unescape(match.group())
        return named if len(named) == 1 and named.isprintable() else match.group()
    return _character(int(decimal or hexadecimal, 10 if decimal else 16), match.group())


_PERCENT = r"%([0-9A-Fa-f]{2})"


#: quoted-printable writes its hexadecimal digits in upper case
_PRINTABLE = r"=([0-9A-F]{2})"


def _unpercent(match: re.Match[str]) -> str:
    """A byte written in hexadecimal, if it is printable ASCII (a byte of a longer
    UTF-8 character is left as written)."""
    code = int(match.group(1), 16)
    return chr(code) if 0x20 <= code < 0x7F else match.group()


#: Unicode's default-ignorable characters: zero-width spaces and joiners, the soft
#: hyphen, bidirectional controls, variation selectors, tags. No editor shows them.
_INVISIBLE = (
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)

#: What outside ASCII a decoder reads: an invisible character (``_INVISIBLE``), or a
#: byte that is no ASCII read as Latin-1 (``_ebcdic`` reads only lines of such bytes).
#: Letters of other scripts (a translation's Cyrillic or Chinese) are neither.
_DECODABLE_OUTSIDE_ASCII = f"{_INVISIBLE[:-1]}\x80-\xff]"


#: The ASCII control characters but tab, newline and carriage return: with every
#: character outside ASCII, what is not printable text.
_CONTROLS = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def _ebcdic(line: str) -> str:
    """The line read as EBCDIC (code page 037: the letters, digits and punctuation of
    every EBCDIC page but a few signs) when that reads as ASCII text and the line as
    stored does not; else the line. Its NEL and LF bytes end lines."""
    if line.isascii() or len(line.encode("ascii", "ignore")) * 2 > len(line):
        return line
    try:
        raw = line.encode("latin-1")  # how bytes that are not UTF-8 were read
    except UnicodeEncodeError:
        return line
    decoded = raw.decode("cp037").replace("\x85", "\n")
    printable = len(decoded.encode("ascii", "ignore").translate(None, _CONTROLS))
    if len(decoded) - printable > (1 - _EBCDIC_SHARE) * len(decoded):
        return line
    return decoded


# Private keys -------------------------------------------------------------------------

#: The armours of private keys: PEM's (RFC 7468, OpenSSH's and PGP's too) and SSH2's
#: (RFC 4716), each as BEGIN line, body, END line (both decoders need the END line).
_ARMOURS = (
    ("-----BEGIN {}-----", "-----END {}-----", r"[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?"),
    ("---- BEGIN {} ----", "---- END {} ----", r"SSH2 ENCRYPTED PRIVATE KEY"),
)


@functools.cache
def _armour(index: int) -> re.Pattern[str]:
    begin, end, label = _ARMOURS[index]
    return re.compile(
        re.escape(begin).replace(r"\{\}", f"(?P<label>{label})")
        + rf"(?P<body>[\s\S]{{1,{_MAX_BODY}}}?)"
        + re.escape(end).replace(r"\{\}", "(?P=label)")
    )


#: A header of the armour's body (RFC 1421's Proc-Type, PGP's Version, SSH2's
#: Comment), with its continuation lines (ending in a backslash).
_HEADER = r"[ \t]*[A-Za-z][A-Za-z0-9-]*:[^\n]*(?:\\\n[^\n]*)*\n"


_BLANKS = r"\s+|\\[rn]"


#: A PGP armour's checksum, after its body.
_PGP_CHECKSUM = r"=[A-Za-z0-9+/]{4}$"


_WIDTH = 64


def _key_views(text: str) -> list[View]:
    """Each key block as openssl and ssh-keygen read it, under the line its BEGIN is
    on: whitespace anywhere in its body, lines of any length, escaped newlines."""
    found = []
    for index, (begin, end, _) in enumerate(_ARMOURS):
        for match in _armour(index).finditer(text):
            label = match.group("label")
            canonical = _canonical_body(label, match.group("body"))
            if canonical is None:
                continue
            line_start = text.rfind("\n", 0, match.start()) + 1
            block = (
                f"{text[line_start : match.start()]}{begin.format(label)}\n"
                f"{canonical}{end.format(label)}"
            )
            if block != text[line_start : match.end()]:
                found.append(View(text.count("\n", 0, line_start), block, first_only=True))
    return found


def _canonical_body(label: str, body: str) -> str | None:
    """The body as a decoder reads it, its headers first, base64 in lines of 64 and a
    newline after each; None when it does not decode to a key of its kind."""
    body = body.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\r", "")
    body = body.lstrip("\n")
    headers = []
    while (header := _compiled(_HEADER).match(body)) is not None:
        headers.append(header.group().strip())
        body = body[header.end() :]
    data = _compiled(_BLANKS).sub("", body)
    checksum = ""
    if "PGP" in label and (found := _compiled(_PGP_CHECKSUM).search(data)) is not None:
        data, checksum = data[: found.start()], found.group()
    if not _decodes_as_key(label, data, encrypted=any("ENCRYPTED" in h for h in headers)):
        return None
    lines = [data[at : at + _WIDTH] for at in range(0, len(data), _WIDTH)]
    head = "".join(f"{header}\n" for header in headers)
    if headers or "PGP" in label:
        head += "\n"
    return head + "".join(f"{line}\n" for line in lines) + (f"{checksum}\n" if checksum else "")


def _decodes_as_key(label: str, data: str, *, encrypted: bool) -> bool:
    """Whether ``data`` is base64 that decodes to the start of a key of its kind: DER's
    SEQUENCE, OpenSSH's and SSH2's magic, an OpenPGP packet; any bytes when an RFC 1421
    header says the key is encrypted."""
    import base64  # here, as html: only a key's armour needs it
    import binascii

    try:
        raw = base64.b64decode(data + "=" * (-len(data) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(raw) < _MIN_KEY_BYTES:
        return False
    if encrypted:
        return True
    if "PGP" in label:
        return bool(raw[0] & 0x80)  # a packet's tag byte
    return raw.startswith(_MAGIC.get(label, b"\x30"))  # DER's SEQUENCE by default


#: How the keys that are not DER begin, by their armour's label.
_MAGIC = {
    "OPENSSH PRIVATE KEY": b"openssh-key-v1\0",
    "SSH2 ENCRYPTED PRIVATE KEY": b"\x3f\x6f\xf9\xeb",
}
