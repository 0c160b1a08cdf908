"""The lines around an edit, for rules that read a name and its value on two lines.

A Kubernetes env entry names its variable on one line and gives its value on the
next (``- name: DB_PASSWORD`` / ``value: ...``), a Terraform variable its default a
few lines below its name, a YAML key its block or plain scalar on the next line.
A commit that changes only the value line (or only the name line) adds one line of
the two; judged alone, it is no finding, while adding both is. So the fragments of
a file whose added lines could be either half carry the lines around them, from
the file's new version (``Fragment.before``, ``Fragment.after``): the engine judges
them with the added lines and keeps a finding only if it rests on an added line.

Reading the file costs a blob; it is read only when an added line could be such a
half (``may_need_context``): a value line (``value:``, ``default =``, ``Default:``,
``<string>``, an indented line that is one long token) or a name line (a telling
name whose line ends where its value would start, or a ``name:``/``key:`` entry).
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The most lines around a run that a rule reads: a Terraform default stands up to six
#: lines below its variable's name.
CONTEXT_LINES = 6

#: A line that could hold a value whose name stands above it. Each starts after a
#: newline: a literal first byte lets the search skip ahead in C to each line. The
#: quantifiers are possessive where what follows cannot continue what they match, so
#: a line that fails is given up at once (the same lines match; ``tests/test_context``).
_VALUE = (
    rb"\n[ \t]*+(?:-[ \t]+)?(?:[\"']?(?:value|default|Default)[\"']?[ \t]*[:=]|<string>)"
    rb"|\n[ \t]++[A-Za-z0-9+/=_.~!@#%^&*-]{16,256}+[ \t]*+\r?\n"
)
#: A line that could name a value below it, searched in the lowered text: a telling
#: name that ends the line where its value would start (``password:``, ``token: |``,
#: ``variable "db_password" {``, ``<key>apiToken</key>``), or that a name entry gives
#: (``- name: API_TOKEN``), in any case.
#:
#: The first is searched in the text reversed, from each line's end: forwards it has
#: no literal first byte, and is tried at each of the many bytes that start one of its
#: words; backwards it starts with the newline and most lines fail at their last
#: byte. Forwards it is ``(?:pass|...|auth)[\w.-]*["']?[ \t]*(?::[ \t]*(?:[|>][-+]?)?
#: |\{|</key>)[ \t]*\r?\n``: a text holds it exactly when its reverse holds this one.
_REVERSED_NAME = (
    rb"\n\r?[ \t]*+(?:(?:[-+]?[|>])?[ \t]*:|\{|>yek/<)[ \t]*+[\"']?[\w.-]*"
    rb"(?:ssap|dwp|terces|nekot|yek|laitnederc|htua)"
)
_NAME_ENTRY = (
    rb"\n[ \t]*+(?:-[ \t]+)?[\"']?(?:name|key)[\"']?[ \t]*+:[ \t]*+[\"']?[\w.-]*"
    rb"(?:pass|pwd|secret|token|key|credential|auth)[\w.-]*+[\"']?[ \t]*+,?[ \t]*+\r?\n"
)


def may_need_context(added: Mapping[int, bytes]) -> bool:
    """Whether an added line could be the name or the value half of a two-line entry."""
    if not added:
        return False
    text = b"\n" + b"".join(added.values())
    if not text.endswith(b"\n"):
        text += b"\n"
    if _search(_VALUE, text):
        return True
    lowered = text.lower()  # ASCII only, as a bytes pattern's (?i) folds
    return _search(_NAME_ENTRY, lowered) or _search(_REVERSED_NAME, lowered[::-1])


@functools.cache
def _compiled(pattern: bytes) -> re.Pattern[bytes]:
    """Compiled on first use: most commits of a hook never need it."""
    return re.compile(pattern)


def _search(pattern: bytes, text: bytes) -> bool:
    return _compiled(pattern).search(text) is not None


def around(lines: Mapping[int, bytes], first: int, last: int) -> tuple[bytes, bytes]:
    """The (at most ``CONTEXT_LINES``) lines of the file before line ``first`` and after
    line ``last``, each with its newline."""
    before = b"".join(
        lines.get(number, b"") for number in range(max(1, first - CONTEXT_LINES), first)
    )
    after = b"".join(lines.get(number, b"") for number in range(last + 1, last + 1 + CONTEXT_LINES))
    return before, after
