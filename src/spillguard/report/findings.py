"""A finding as the report schema's dict, masked unless plaintext is asked for."""

from __future__ import annotations

import functools
import re

from spillguard.detection.redact import mask_match, mask_span, unquoted

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from typing import Any

    from spillguard.core.models import Finding, ScanResult


def shown_text(finding: Finding, *, plaintext: bool) -> str:
    return "".join(shown_parts(finding, plaintext=plaintext))


def shown_parts(finding: Finding, *, plaintext: bool) -> tuple[str, str, str]:
    """The line as (before the match, the match, after it), the match masked unless plaintext."""
    start, end = finding.line_offset_start, finding.line_offset_end
    text = finding.text
    if not plaintext:
        for other_start, other_end in finding.hidden:
            text = mask_span(text, other_start, other_end)
    return text[:start], shown_match(finding, plaintext=plaintext), text[end:]


def utf16_length(text: str) -> int:
    """``len(text)`` as Java counts it: a character beyond U+FFFF is two UTF-16 code units."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def utf16_offsets(finding: Finding) -> tuple[int, int]:
    """The match's (start, end) within ``text`` in UTF-16 code units, as the server's
    ``lineOffsetStart``/``lineOffsetEnd`` (Java strings); the finding keeps code points."""
    start = utf16_length(finding.text[: finding.line_offset_start])
    match = finding.text[finding.line_offset_start : finding.line_offset_end]
    return start, start + utf16_length(match)


def shown_match(finding: Finding, *, plaintext: bool) -> str:
    if plaintext:
        return finding.match_text
    if finding.secret_end < 0:
        return mask_match(finding.match_text)
    # A quoted value keeps its quotes: only the value is the secret.
    start, end = unquoted(finding.match_text, finding.secret_start, finding.secret_end)
    return mask_match(finding.match_text, start, end)


@functools.cache
def _not_utf8() -> re.Pattern[str]:
    """Python's stand-ins (U+DC80..U+DCFF) for the bytes of a file name that is not
    UTF-8; compiled on first use (an ASCII name has none, and a hook reports no JSON)."""
    return re.compile("[\udc80-\udcff]")


def path_fields(path: str) -> dict[str, str]:
    """``{"path": ...}`` for a JSON report, which every JSON reader keeps.

    A name that is not UTF-8 cannot be JSON text (a lone surrogate is dropped or
    refused by most readers), so ``path`` shows each such byte as ``\\xNN`` (as the
    terminal report does) and ``pathBytes`` holds the name's exact bytes in base64.
    """
    if path.isascii() or not _not_utf8().search(path):
        return {"path": path}
    import base64

    shown = _not_utf8().sub(lambda byte: f"\\x{ord(byte.group(0)) - 0xDC00:02x}", path)
    raw = path.encode("utf-8", "surrogateescape")
    return {"path": shown, "pathBytes": base64.b64encode(raw).decode("ascii")}


def finding_dict(finding: Finding, *, plaintext: bool) -> dict[str, Any]:
    commit = finding.commit
    start, end = utf16_offsets(finding)
    data: dict[str, Any] = {
        "rule": finding.rule,
        "blocking": finding.blocking,
        **path_fields(finding.path),
        "line": finding.line,
        "commit": commit.id if commit else None,
        "author": commit.author if commit else None,
        "date": commit.date if commit else None,
        "text": shown_text(finding, plaintext=plaintext),
        "lineOffsetStart": start,
        "lineOffsetEnd": end,
        "truncated": finding.truncated,
        "matchText": shown_match(finding, plaintext=plaintext),
        "fingerprint": finding.fingerprint,
    }
    if finding.ref is not None:
        data["ref"] = finding.ref
    if finding.allowlisted:
        data["allowlisted"] = True
    if finding.reviewed:
        data["reviewed"] = True
    return data


def summary_dict(result: ScanResult) -> dict[str, Any]:
    stats = result.stats
    return {
        "commits": stats.commits,
        "files": stats.files,
        "bytes": stats.bytes,
        "findings": len(result.findings),
        "blocking": sum(1 for f in result.findings if f.blocking and not f.allowlisted),
        "skipped": len(result.skipped),
        "silenced": {
            "pragma": result.silenced.pragma,
            "allowlist_paths": result.silenced.path,
            "reviewed": result.silenced.reviewed,
        },
        "seconds": round(stats.seconds, 3),
    }
