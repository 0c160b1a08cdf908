"""Masking of matched secrets: reports never show a full secret unless asked.

Only a recognised token-type marker (``AKIA``, ``ghp_``, ``xoxb-``...) stays
readable: it says which kind of credential to rotate and nothing of its value.
Any other secret, generic passwords and keys alike, is masked from its first
character. The machine-readable reports keep the masked text's length, since
their offsets index into it (the server's schema); the terminal report shows a
fixed mask, ``FIXED_MASK``, which gives away no length.
"""

from __future__ import annotations

MASK = "*"

#: What the terminal report shows in place of a secret (after any known marker).
FIXED_MASK = "********"

#: Token-type markers that providers publish as the fixed start of every token of
#: a kind; shown only ahead of a body of at least ``_MIN_BODY`` characters.
KNOWN_PREFIXES = (
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk_live_",
    "rk_live_",
    "sk-ant-",
    "sk-proj-",
    "npm_",
    "pypi-",
    "hf_",
)
_MIN_BODY = 8


def unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` without the quotes around it: a rule's secret group may take
    a quoted value whole, but the value is what a user knows and what is masked."""
    if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


def visible_prefix(secret: str) -> int:
    """How many leading characters stay readable: a known marker's, else none."""
    for prefix in KNOWN_PREFIXES:
        if secret.startswith(prefix) and len(secret) >= len(prefix) + _MIN_BODY:
            return len(prefix)
    return 0


def mask(secret: str) -> str:
    """``AKIA`` + 16 characters becomes ``AKIA****************``: the length is kept."""
    keep = visible_prefix(secret)
    return secret[:keep] + MASK * (len(secret) - keep)


def fixed_mask(secret: str) -> str:
    """``AKIA********`` whatever the secret's length; ``********`` for an unknown kind."""
    return secret[: visible_prefix(secret)] + FIXED_MASK


def mask_span(text: str, start: int, end: int) -> str:
    """``text`` with ``text[start:end]`` masked; offsets stay valid."""
    return text[:start] + mask(text[start:end]) + text[end:]


def mask_match(match_text: str, secret_start: int = 0, secret_end: int = -1) -> str:
    """The match with only its secret part masked (all of it when no part is known)."""
    if secret_end < 0:
        return mask(match_text)
    return mask_span(match_text, secret_start, secret_end)
