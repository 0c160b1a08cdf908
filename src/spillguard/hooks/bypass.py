"""The commit-message bypass: a commit whose message holds one of the administrator's
tokens is not scanned by the hooks, and each hook says so in its verdict."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence


def bypass_token_in(message: str, tokens: Sequence[str]) -> str | None:
    """The first of ``tokens`` that the commit message contains, or None."""
    return next((token for token in tokens if token and token in message), None)


def not_scanned(count: int) -> str:
    """``1 commit not scanned (bypass token)``, for a verdict line."""
    return f"{count} commit{'s' if count != 1 else ''} not scanned (bypass token)"
