"""Stable identities: a finding's fingerprint and a reviewed string's digest."""

from __future__ import annotations

import hashlib


def finding_fingerprint(rule: str, match_text: str, path: str) -> str:
    """SHA-256 of rule, secret and path: stable when the line moves or the commit changes."""
    data = f"{rule}\x00{match_text}\x00{path}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def reviewed_digest(text: str, salt: str) -> str:
    """The salted SHA-256 under which a reviewed string is stored instead of its plaintext."""
    return hashlib.sha256((salt + "\0" + text).encode("utf-8", "surrogatepass")).hexdigest()
