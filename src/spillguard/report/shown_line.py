"""A finding's line as the terminal shows it: the secret masked, its column, a window.

The line is cut in three around the reported secret (the rule's secret group, not
the whole match: a ``db_password = "..."`` assignment stays readable), every
secret on the line is masked with the fixed mask, so neither characters nor
length show, and a line too wide to read is cut to a window around the secret.
"""

from __future__ import annotations

from spillguard.core.values import Frozen, fill
from spillguard.detection.redact import fixed_mask, unquoted

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from spillguard.core.models import Finding

#: Lines wider than this are shown as a window around the secret.
WIDE = 120
#: Characters kept on each side of the secret in that window.
CONTEXT = 40
ELLIPSIS = "..."


class ShownLine(Frozen):
    """A finding's line as shown: the text around the secret, and the secret masked."""

    __slots__ = ("after", "before", "column", "secret")

    before: str
    secret: str
    after: str
    #: 1-based column of the secret in the line (code points); None when the line
    #: was too long to keep and only the match is known.
    column: int | None

    def __init__(self, before: str, secret: str, after: str, column: int | None) -> None:
        fill(self, locals())


def secret_span(finding: Finding) -> tuple[int, int]:
    """Where the reported secret lies in ``finding.text``."""
    start = finding.line_offset_start
    if finding.text[start : start + len(finding.match_text)] != finding.match_text:
        # offsets counted in another unit (UTF-16): find the match itself
        start = max(finding.text.find(finding.match_text), 0)
    if finding.secret_end < 0:
        return start, start + len(finding.match_text)
    return unquoted(finding.text, start + finding.secret_start, start + finding.secret_end)


def shown_line(finding: Finding, *, plaintext: bool) -> ShownLine:
    """The line in three parts, raw (the caller cleans them for the terminal)."""
    start, end = secret_span(finding)
    text = finding.text
    secret = text[start:end]
    before, after = text[:start], text[end:]
    if not plaintext:
        secret = fixed_mask(secret)
        before = _mask_others(before, finding, 0)
        after = _mask_others(after, finding, end)
    column = None if finding.truncated else start + 1
    return ShownLine(before=before, secret=secret, after=after, column=column)


def shown_match(finding: Finding) -> str:
    """The match alone as the terminal shows it: its secret part with the fixed mask
    (what a pusher reads after ``remote:``, one finding a line)."""
    if finding.secret_end < 0:
        return fixed_mask(finding.match_text)
    start, end = unquoted(finding.match_text, finding.secret_start, finding.secret_end)
    text = finding.match_text
    return text[:start] + fixed_mask(text[start:end]) + text[end:]


def _mask_others(part: str, finding: Finding, offset: int) -> str:
    """``part`` (at ``offset`` in the line) with the line's other secrets masked."""
    pieces: list[str] = []
    position = 0
    for hidden_start, hidden_end in sorted(finding.hidden):
        start, end = max(hidden_start - offset, position), min(hidden_end - offset, len(part))
        if start >= end:
            continue
        pieces += [part[position:start], fixed_mask(part[start:end])]
        position = end
    return "".join([*pieces, part[position:]])


def windowed(before: str, secret: str, after: str) -> tuple[str, str]:
    """``before`` and ``after`` cut to ``CONTEXT`` characters each when the whole is wide."""
    if len(before) + len(secret) + len(after) <= WIDE:
        return before, after
    if len(before) > CONTEXT + len(ELLIPSIS):
        before = ELLIPSIS + before[-CONTEXT:]
    if len(after) > CONTEXT + len(ELLIPSIS):
        after = after[:CONTEXT] + ELLIPSIS
    return before, after
