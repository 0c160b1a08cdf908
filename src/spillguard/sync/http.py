"""One HTTP request to the scanning app, with bounded retries and readable errors.

urllib only (no new dependency), imported lazily: hooks never load this module.
Redirects are refused rather than followed, so credentials are sent to the
configured server and nowhere else, and a login page behind a redirect reads as
an error instead of as data.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from spillguard.core.errors import SyncError, UsageError
from spillguard.sync.messages import describe_http_error

if TYPE_CHECKING:
    import urllib.request
    from collections.abc import Callable

    from spillguard.sync.deadline import Deadline

#: Retried with backoff (the server or a proxy in front of it is briefly unavailable).
RETRY_STATUSES = frozenset({502, 503, 504})
TOO_MANY_REQUESTS = 429
#: The largest answer read; a reviewed-lines export is far smaller.
MAX_BODY = 64 * 1024 * 1024
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClientSettings:
    server: str
    #: The Authorization header's value; never printed.
    authorization: str = dataclasses.field(repr=False)
    #: Strings scrubbed from every message (the password or key itself).
    secrets: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    #: Where the credentials came from and how to fix them, for a 401.
    auth_hint: str = ""
    xsrf_header: str | None = "X-Host-Token"
    ca_bundle: str | None = None
    timeout: float = 10.0
    max_tries: int = 4
    #: The longest Retry-After honoured; a longer one fails at once.
    max_wait: float = 60.0
    backoff: float = 1.0


@dataclasses.dataclass(frozen=True, slots=True)
class Response:
    status: int
    content_type: str
    body: bytes = dataclasses.field(repr=False)
    #: The Content-Type's charset parameter, when the server names one.
    charset: str | None = None


def encoding_of(data: bytes, charset: str | None) -> str:
    """How to decode a body: its byte order mark, else the declared charset, else UTF-8."""
    import codecs

    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if not charset or data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        named = codecs.lookup(charset).name
    except LookupError:
        return "utf-8-sig"  # a charset Python does not know: UTF-8 is the likeliest
    return "utf-8-sig" if named == "utf-8" else named


class StatusError(SyncError):
    """The server answered with an error status (after any retries)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Retry(Exception):  # noqa: N818 - a signal, not an error
    def __init__(self, message: str, delay: float) -> None:
        super().__init__(message)
        self.delay = delay


def check_server_url(server: str) -> None:
    """Only https, or http to this machine: credentials never cross a network in clear.

    A refused URL is a usage or configuration error (exit 2), not a failed sync.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # Not echoed: a mistyped URL may hold a password (user:pass@host).
        raise UsageError("the server is not an http(s) URL such as https://scm.example.com")
    if parts.username or parts.password:
        raise UsageError("the server URL must not carry credentials")
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
        raise UsageError(f"refusing to send credentials over plain http to {parts.hostname}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One operation of the API: what to send, and the permission it needs (for a 403)."""

    method: str
    path: str
    body: Any = None
    accept: str = "application/json"
    permission: str = ""

    @property
    def where(self) -> str:
        return f"{self.method} {self.path}"


def request(
    settings: ClientSettings, call: Call, *, sleep: Callable[[float], None] = time.sleep
) -> Response:
    """Send one request, retrying 429 (per Retry-After) and 502/503/504 (with backoff)."""
    check_server_url(settings.server)
    attempt = 1
    while True:
        retry = _attempt(settings, call, attempt)
        if isinstance(retry, Response):
            return retry
        if attempt >= settings.max_tries:
            raise SyncError(f"{retry} (gave up after {attempt} tries)")
        if retry.delay > settings.max_wait:
            raise SyncError(f"{retry}: the server asks to wait {retry.delay:.0f} s")
        sleep(retry.delay)
        attempt += 1


def _attempt(settings: ClientSettings, call: Call, attempt: int) -> Response | _Retry:
    try:
        return _send(settings, call, attempt)
    except _Retry as retry:
        return retry


def _build(settings: ClientSettings, call: Call) -> urllib.request.Request:
    import json
    import urllib.request

    url = settings.server.rstrip("/") + call.path
    data = None if call.body is None else json.dumps(call.body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=call.method)  # noqa: S310 - checked
    req.add_header("Accept", call.accept)
    req.add_header("User-Agent", "spillguard-sync")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if settings.xsrf_header:
        req.add_header(settings.xsrf_header, "no-check")
    # Unredirected: never forwarded, even if a redirect were followed.
    req.add_unredirected_header("Authorization", settings.authorization)
    return req


def _opener(settings: ClientSettings, deadline: Deadline) -> urllib.request.OpenerDirector:
    import ssl
    import urllib.request

    from spillguard.sync.deadline import handlers

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_: object) -> None:
            return None

    try:
        context = ssl.create_default_context(cafile=settings.ca_bundle)
    except (OSError, ssl.SSLError) as error:
        raise SyncError(f"CA bundle {settings.ca_bundle}: cannot load: {error}") from None
    return urllib.request.build_opener(_NoRedirect(), *handlers(deadline, context))


def _send(settings: ClientSettings, call: Call, attempt: int) -> Response:
    """One exchange, all of it (connecting, the headers, the body) within the timeout."""
    from spillguard.sync.deadline import Deadline

    deadline = Deadline(settings.timeout)
    try:
        return _exchange(settings, call, attempt, deadline)
    except (SyncError, _Retry):
        if deadline.passed:
            raise SyncError(_late(call, settings)) from None
        raise
    finally:
        deadline.cancel()


def _late(call: Call, settings: ClientSettings) -> str:
    return f"{call.where}: no complete answer within {settings.timeout:g} s"


def _exchange(settings: ClientSettings, call: Call, attempt: int, deadline: Deadline) -> Response:
    import http.client
    import urllib.error

    req = _build(settings, call)
    where = call.where
    try:
        with _opener(settings, deadline).open(req, timeout=settings.timeout) as answer:
            content = answer.read(MAX_BODY + 1)
            if deadline.passed:  # the body was cut where the deadline shut the socket
                raise SyncError(_late(call, settings))
            if len(content) > MAX_BODY:
                raise SyncError(f"{where}: the answer is larger than {MAX_BODY} bytes")
            headers = answer.headers
            return Response(
                answer.status, headers.get_content_type(), content, headers.get_content_charset()
            )
    except urllib.error.HTTPError as error:
        _raise_for_status(settings, error, call, attempt)
    except TimeoutError:
        raise SyncError(_late(call, settings)) from None
    except urllib.error.URLError as error:
        raise SyncError(f"{where}: cannot reach the server: {_reason(error.reason)}") from None
    except (OSError, http.client.HTTPException) as error:
        raise SyncError(f"{where}: connection failed: {_reason(error)}") from None
    except ValueError:
        # http.client quotes a refused header value, credentials included: say less.
        raise SyncError(f"{where}: the request could not be sent (a header is invalid)") from None
    raise AssertionError("unreachable")  # pragma: no cover - _raise_for_status raises


def _reason(reason: object) -> str:
    import ssl

    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"{reason.verify_message}: the server's TLS certificate is not trusted (ca_bundle)"
    if isinstance(reason, TimeoutError):
        return "timed out"
    return str(getattr(reason, "strerror", None) or reason)


def _raise_for_status(settings: ClientSettings, error: Any, call: Call, attempt: int) -> None:
    status = int(error.code)
    try:
        content = error.read(64 * 1024)
    except (OSError, TimeoutError):
        content = b""
    finally:
        error.close()
    message = describe_http_error(
        status=status,
        reason=str(error.reason or ""),
        body=content,
        where=call.where,
        permission=call.permission,
        auth_hint=settings.auth_hint,
        xsrf_header=settings.xsrf_header,
        location=error.headers.get("Location") if error.headers else None,
        secrets=settings.secrets,
    )
    delay = _retry_after(error.headers.get("Retry-After") if error.headers else None)
    if status == TOO_MANY_REQUESTS:
        raise _Retry(message, settings.backoff if delay is None else delay)
    if status in RETRY_STATUSES:
        raise _Retry(message, settings.backoff * 2 ** (attempt - 1) if delay is None else delay)
    raise StatusError(message, status)


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: a number of seconds, or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
