"""Multi-line secrets: a commit that touches a PEM block is judged on the whole block.

A private key spans lines: its header names it, its body is the secret. Judging only
the lines a commit adds would miss a body written into a skeleton (``BEGIN`` and
``END`` around a placeholder) that an earlier commit added, or a header put around a
body an earlier commit added. So when a commit adds or changes any line inside a
block (``-----BEGIN ...-----`` to ``-----END ...-----``, the SSH2 ``---- BEGIN``
form, or a PuTTY key file from its first line to ``Private-MAC``) of the file's new
version, every line of that block is judged with the lines it adds.

Finding the blocks needs the whole new file; reading it for every file a history
changes would cost more than the rest of the scan, so it is read only when an added
line could be part of a block: a marker, or a line that is nothing but base64 (and
blanks, in a line of 16 characters or more: openssl and ssh-keygen skip blanks
anywhere in a body) with a digit, ``+`` or ``/`` in it (``end``, ``else``, ``DONE`` are base64
too). A body line of random base64 lacks all three about once in 600,000 lines of
64 columns.
"""

from __future__ import annotations

import bisect
import re

from spillguard.core.decode import as_utf8
from spillguard.sources.diffparse import lines_by_number

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: What a line that opens or closes a block holds (``-----BEGIN ``, ``---- END ``...),
#: or a PuTTY key's private part: four searches in C, cheaper than one for all.
_MARKERS = (b"BEGIN ", b"END ", b"PuTTY-User-Key-File-", b"Private-")
#: A line of base64 (and blanks) alone with a digit, ``+`` or ``/`` in it (``end``,
#: ``else`` or ``DONE`` are base64 too, and not worth reading a file for). It starts
#: with a newline: a literal first byte lets the search skip ahead in C to each line.
#: Every quantifier is possessive, as nothing that follows one could continue it: a
#: line of code fails once, where backtracking over its letters and blanks took a
#: tenth of a history scan (``tests/test_pem_blocks`` holds the plain form to it).
_BASE64_LINE = re.compile(
    rb"\n(?:[ \t]*+[A-Za-z]*+[0-9+/][A-Za-z0-9+/]*+=*+[ \t]*+\r?\n"
    rb"|(?=[^\n]{16})[A-Za-z \t]*+[0-9+/][A-Za-z0-9+/ \t]*+=*+[ \t]*+\r?\n)"
)
_OPENING = (b"-----BEGIN ", b"---- BEGIN ", b"PuTTY-User-Key-File-")
_CLOSING = (b"-----END ", b"---- END ", b"Private-MAC:")
#: An unterminated block ends at the next block, the end of the file, or after this
#: many lines (a 4096-bit key wrapped at 8 columns has about 400).
_MAX_BLOCK_LINES = 1000


def may_touch_block(added: Mapping[int, bytes]) -> bool:
    """Whether an added line could lie inside a block (then the file is worth reading)."""
    if not added:
        return False
    text = b"".join(added.values())
    if any(marker in text for marker in _MARKERS):
        return True
    return _BASE64_LINE.search(b"\n" + text + b"\n") is not None


def with_touched_blocks(
    added: dict[int, bytes], data: bytes, removed_after: Sequence[int] = ()
) -> dict[int, bytes]:
    """``added`` and every line of each block of ``data`` (the file's new content) that
    an added line lies in, or a removal inside it (after a line of the block but its
    last): removing what kept a header from its body completes a key too."""
    if not any(opening in data for opening in _OPENING):
        return added
    text = as_utf8(data)  # lines split where a diff splits them (``lines_by_number``)
    numbers, removals = sorted(added), sorted(removed_after)
    touched = [
        (first, last)
        for first, last in _blocks(text)
        if _any_within(numbers, first, last) or _any_within(removals, first, last - 1)
    ]
    if not touched:
        return dict(sorted(added.items()))
    lines = lines_by_number(text)
    extended = dict(added)
    for first, last in touched:
        for number in range(first, last + 1):
            extended.setdefault(number, lines[number])
    return dict(sorted(extended.items()))


def _any_within(numbers: Sequence[int], first: int, last: int) -> bool:
    """Whether a number of the sorted ``numbers`` is in ``first..last``: by bisection,
    where trying every (block, line) pair of a file of many blocks (a test suite's
    keys) and many added lines took psf/requests' history 1.07 million tries."""
    at = bisect.bisect_left(numbers, first)
    return at < len(numbers) and numbers[at] <= last


#: A marker that opens or closes a block, found in C over the whole file: a key file
#: has a few, a test suite's source a few dozen, among thousands of lines.
_MARKER = re.compile(b"|".join(re.escape(marker) for marker in (*_OPENING, *_CLOSING)))


def _blocks(text: bytes) -> list[tuple[int, int]]:
    """The (first, last) line numbers of each block.

    A line with an opening marker opens a block (ending the one before on the line
    above it); else a line with a closing marker ends the open block, as does its
    ``_MAX_BLOCK_LINES``-th line after the opening, or the end of the file.
    """
    blocks: list[tuple[int, int]] = []
    first: int | None = None
    number, counted = 1, 0  # the line number at byte ``counted``
    marker = _MARKER.search(text)
    while marker is not None:
        number += text.count(b"\n", counted, marker.start())
        counted = marker.start()
        end = text.find(b"\n", counted)
        end = len(text) if end < 0 else end
        if first is not None and number - first > _MAX_BLOCK_LINES:
            blocks.append((first, first + _MAX_BLOCK_LINES))
            first = None
        line = text[counted:end]  # from the line's first marker on
        if any(opening in line for opening in _OPENING):
            if first is not None:
                blocks.append((first, number - 1))
            first = number
        elif first is not None:
            blocks.append((first, number))
            first = None
        marker = _MARKER.search(text, end)
    if first is not None:
        total = text.count(b"\n") + (not text.endswith(b"\n"))
        blocks.append((first, min(total, first + _MAX_BLOCK_LINES)))
    return blocks
