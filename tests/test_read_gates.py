"""The gates that decide whether a file is read whole take the lines their plain form takes.

A history scan reads a file's whole new version only when an added line could be half
of a two-line entry (``sources.context``) or part of a PEM block
(``sources.pemblocks``). Those searches are written for speed (possessive quantifiers,
one searched in the reversed text); a gate that says no where its plain form says yes
would hide a secret, one that says yes where it says no would only cost a read. So
each is held to the plain form, written here as first written, over text made of the
pieces those forms look at.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from spillguard.sources.context import may_need_context
from spillguard.sources.pemblocks import may_touch_block

#: The forms the gates had before they were made fast: the oracle.
PLAIN_VALUE = re.compile(
    rb"\n[ \t]*(?:-[ \t]+)?(?:[\"']?(?:value|default|Default)[\"']?[ \t]*[:=]|<string>)"
    rb"|\n[ \t]+[A-Za-z0-9+/=_.~!@#%^&*-]{16,256}[ \t]*\r?\n"
)
PLAIN_NAMES = (
    re.compile(
        rb"(?:pass|pwd|secret|token|key|credential|auth)[\w.-]*[\"']?[ \t]*"
        rb"(?::[ \t]*(?:[|>][-+]?)?|\{|</key>)[ \t]*\r?\n"
    ),
    re.compile(
        rb"\n[ \t]*(?:-[ \t]+)?[\"']?(?:name|key)[\"']?[ \t]*:[ \t]*[\"']?[\w.-]*"
        rb"(?:pass|pwd|secret|token|key|credential|auth)[\w.-]*[\"']?[ \t]*,?[ \t]*\r?\n"
    ),
)
PLAIN_BASE64_LINE = re.compile(
    rb"\n(?:[ \t]*[A-Za-z]*[0-9+/][A-Za-z0-9+/]*=*[ \t]*\r?\n"
    rb"|(?=[^\n]{16})[ \t]*[A-Za-z \t]*[0-9+/][A-Za-z0-9+/ \t]*=*[ \t]*\r?\n)"
)
PEM_MARKERS = (b"BEGIN ", b"END ", b"PuTTY-User-Key-File-", b"Private-")

#: What the forms look at: their words (in both cases), the bytes around a value, and
#: runs of letters, digits and base64 that make a line long.
PIECES = st.sampled_from(
    [
        *(
            word
            for name in (
                "pass",
                "pwd",
                "secret",
                "token",
                "key",
                "credential",
                "auth",
                "name",
                "value",
                "default",
            )
            for word in (name, name.upper(), name.title())
        ),
        "<string>",
        "</key>",
        "Private-",
        "BEGIN ",
        "END ",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "-",
        "- ",
        ":",
        "=",
        "{",
        "|",
        ">",
        "+",
        "'",
        '"',
        ",",
        ".",
        "_",
        "/",
        "==",
        "(",
        "é",
        "x",
        "Zm9v",
        "A1",
        "9",
        "abcdefghijklmnop",
        "QUJDREVGR0hJSktMTU5PUFFS0123",
    ]
)
TEXTS = st.lists(PIECES, max_size=40).map(lambda pieces: "".join(pieces).encode())
ADDED = st.lists(TEXTS, min_size=1, max_size=4).map(lambda lines: dict(enumerate(lines, start=1)))
PROPERTY = settings(max_examples=600, deadline=None, database=None)


def plain_need_context(added: dict[int, bytes]) -> bool:
    text = b"\n" + b"".join(added.values())
    if not text.endswith(b"\n"):
        text += b"\n"
    lowered = text.lower()
    return bool(PLAIN_VALUE.search(text)) or any(name.search(lowered) for name in PLAIN_NAMES)


def plain_touch_block(added: dict[int, bytes]) -> bool:
    text = b"".join(added.values())
    if any(marker in text for marker in PEM_MARKERS):
        return True
    return PLAIN_BASE64_LINE.search(b"\n" + text + b"\n") is not None


@PROPERTY
@given(added=ADDED)
def test_the_context_gate_reads_a_file_where_its_plain_form_would(
    added: dict[int, bytes],
) -> None:
    assert may_need_context(added) == plain_need_context(added)


@PROPERTY
@given(added=ADDED)
def test_the_block_gate_reads_a_file_where_its_plain_form_would(added: dict[int, bytes]) -> None:
    assert may_touch_block(added) == plain_touch_block(added)


def test_the_gates_take_the_lines_they_were_made_for_and_leave_code() -> None:
    made_for = [
        b"  db_password: |-\n",
        b"<key>apiToken</key>\r\n",
        b'  "auth_key" :  >+ \n',
        b"    Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5\n",
    ]
    assert all(may_need_context({1: line}) == plain_need_context({1: line}) for line in made_for)
    assert may_need_context({1: b"  db_password: |-\n"})
    assert may_need_context({1: b"<key>apiToken</key>\r\n"})
    assert may_touch_block({1: b"  MIIEvQIBADANBgkqhkiG9w0BAQEF  \n"})
    code = {1: b"        if self.auth_token is None:\n", 2: b"    return x\n"}
    assert not may_need_context(code)
    assert not may_touch_block(code)
