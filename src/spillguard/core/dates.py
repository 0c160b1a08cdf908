"""ISO 8601 dates on the command line (``--since``/``--until``), read as UTC when no offset."""

from __future__ import annotations

import datetime as dt

from spillguard.core.errors import UsageError


def parse_instant(text: str, option: str) -> float:
    """Seconds since the epoch for ``2024-05-01``, ``2024-05-01T12:00:00Z`` or with an offset.

    A date alone is its midnight; a time without an offset is UTC, like the
    server's export filters.
    """
    value = text.strip()
    if value[-1:] in {"Z", "z"}:
        value = value[:-1] + "+00:00"  # fromisoformat reads "Z" only from Python 3.11
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"{option} {text!r}: not an ISO 8601 date (like 2024-05-01 or 2024-05-01T12:00:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()
