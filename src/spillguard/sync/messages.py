"""A failed HTTP answer as one readable line: the app's error body, or a short excerpt.

Everything here comes from the network, so it is scrubbed of the credentials
first, then collapsed, shortened and stripped of control characters. Scrubbing
after shortening would let a password with two spaces (collapsed to one) or one
cut in half at the limit through, partly or whole.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from spillguard.report.sanitize import clean

if TYPE_CHECKING:
    from collections.abc import Sequence

#: How much of a body without the app's error shape (a proxy's HTML page) is shown.
EXCERPT_CHARS = 120
DETAIL_CHARS = 400
_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.DOTALL | re.IGNORECASE)
_SPACE = re.compile(r"\s+")
#: An Authorization header a proxy echoes back (in a page, a JSON body or a header
#: dump): its value is hidden even when it is not the credential this client sent.
_AUTHORIZATION = re.compile(
    r"""\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)"""
    r"""(?:(?:basic|bearer|token|digest|negotiate)\s+)?[^\s"'<>,;&]+""",
    re.IGNORECASE,
)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every credential replaced and every control character made visible."""
    return clean(_without_credentials(text, secrets))


def scrub_cut(text: str, limit: int, secrets: Sequence[str] = ()) -> str:
    """Server text for a message, at most ``limit`` characters: the credentials out
    first (and any echoed Authorization value), then collapsed, cut and made visible."""
    return clean(_shorten(_without_credentials(text, secrets), limit))


def _without_credentials(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each secret (longest first) and each Authorization value replaced."""
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, "****")
    return _AUTHORIZATION.sub(r"\1\2****", text)


def _shorten(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _other_shape(data: dict[str, Any]) -> str | None:
    """Error bodies the self-managed documents do not show: ``errors[].message`` (the host
    platform's own) or a ``message``."""
    errors = data.get("errors")
    found = [
        item["message"]
        for item in (errors if isinstance(errors, list) else ())
        if isinstance(item, dict) and isinstance(item.get("message"), str) and item["message"]
    ]
    if not found and isinstance(data.get("message"), str) and data["message"]:
        found = [data["message"]]
    return "; ".join(found) or None


def error_body_detail(body: bytes) -> str | None:
    """The app's error body (restErrorTitle, restErrorDescription, violations) as text."""
    import json

    try:
        data: Any = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if not isinstance(data.get("restErrorTitle"), str):
        return _other_shape(data)
    parts = [data["restErrorTitle"]]
    if isinstance(data.get("restErrorDescription"), str) and data["restErrorDescription"]:
        parts.append(data["restErrorDescription"])
    violations = data.get("violations")
    if isinstance(violations, list):
        parts.extend(
            f"{item.get('fieldName') or '?'}: {item.get('message') or ''}"
            for item in violations
            if isinstance(item, dict)
        )
    return "; ".join(str(part) for part in parts)


def excerpt(body: bytes, secrets: Sequence[str] = ()) -> str:
    """The start of a body that is not the app's error shape, credentials, tags and
    blank space removed (the credentials before, and again once entities are read)."""
    import html

    text = _without_credentials(body[: 16 * 1024].decode("utf-8", "replace"), secrets)
    text = html.unescape(_TAG.sub(" ", text))
    return _shorten(_without_credentials(text, secrets), EXCERPT_CHARS)


def describe_http_error(  # noqa: PLR0913 - every part of the message is a keyword
    *,
    status: int,
    reason: str,
    body: bytes,
    where: str,
    permission: str,
    auth_hint: str,
    xsrf_header: str | None,
    location: str | None,
    secrets: Sequence[str],
) -> str:
    """One line for a non-2xx answer, saying what to do where the status says it."""
    detail = error_body_detail(body)
    if detail is None:
        shown = excerpt(body, secrets)
        detail = f"(no error body) {shown}" if shown else "(no error body)"
    else:  # JSON escapes are read by now: a credential shows as sent
        detail = _without_credentials(detail, secrets)
    message = f"{where}: HTTP {status} {reason}: {_shorten(detail, DETAIL_CHARS)}"
    if status == 401:
        message += f"; the credentials were refused: {auth_hint}"
    elif status == 403:
        message += f"; missing permission: {permission or 'not documented by the API'}"
        if xsrf_header:
            message += f" (or the server refuses remote calls despite the {xsrf_header} header)"
    elif 300 <= status < 400 and location:
        shown = _shorten(_without_credentials(location, secrets), 80)
        message += f"; redirected to {shown} (check the server URL)"
    return scrub(message, secrets)
