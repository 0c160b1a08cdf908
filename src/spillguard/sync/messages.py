"""A failed HTTP answer as one readable line: the app's error body, or a short excerpt.

Everything here comes from the network, so it is scrubbed of the credentials
first, then collapsed, shortened and stripped of control characters. Scrubbing
after shortening would let a password with two spaces (collapsed to one) or one
cut in half at the limit through, partly or whole.
"""

from __future__ import annotations

import functools
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
    """``text`` with each secret, in every form a server may echo it, and each
    Authorization value replaced."""
    if any(secrets):
        text = _echoes(tuple(secrets)).sub("****", text)
    return _AUTHORIZATION.sub(r"\1\2****", text)


#: The shortest run of a secret's base64 found on its own: shorter ones are too common.
_BASE64_CORE = 6
_BASE64_END = r"(?:(?:\s*[A-Za-z0-9+/_-]){0,3}(?:\s*=)+)?"


def _base64_forms(secret: str) -> set[str]:
    """The secret's base64 as it reads inside a longer base64 text: at each of the three
    alignments, the characters its bytes alone decide (``Basic`` of ``user:password``
    holds the password's so), in the standard and the URL-safe alphabet."""
    import base64

    data = secret.encode("utf-8")
    forms = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        core = encoded[-(-4 * offset // 3) : 8 * (offset + len(data)) // 6]
        if len(core) >= _BASE64_CORE:
            forms |= {core, core.translate(str.maketrans("+/", "-_"))}
    return forms


@functools.lru_cache(maxsize=4)
def _echoes(secrets: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for every form of the secrets a server may send back: as sent, upper-
    or lower-cased, percent-encoded, JSON- or HTML-escaped, in base64, with blank space
    (a line break of wrapped base64, a collapsed double space) anywhere inside."""
    import html
    import json
    from urllib.parse import quote, quote_plus

    forms: set[str] = set()
    for secret in filter(None, secrets):
        escaped = json.dumps(secret)[1:-1]
        forms |= {secret, quote(secret, safe=""), quote_plus(secret), quote(secret), escaped,
                  escaped.replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1],
                  html.escape(secret)}  # fmt: skip
        forms |= _base64_forms(secret)
    spelled = [r"\s*".join(map(re.escape, form)) for form in sorted(forms, key=len, reverse=True)]
    # Base64 ends in a character its last bytes share with the padding: taken with it.
    return re.compile(f"(?:{'|'.join(spelled)}){_BASE64_END}", re.IGNORECASE)


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
    from spillguard.sync.limits import load_json

    try:
        data: Any = load_json(body, "utf-8-sig", "the error body")
    except (UnicodeDecodeError, ValueError):  # a LimitError too: shown as an excerpt
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
