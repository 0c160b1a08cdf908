"""Stable identities: a finding's fingerprint and a reviewed string's digest.

hashlib is imported on first use: loading OpenSSL costs ~3 ms, and a commit hook
with no finding and no reviewed string needs neither.
"""

from __future__ import annotations


def finding_fingerprint(rule: str, match_text: str, path: str) -> str:
    """SHA-256 of rule, secret and path: stable when the line moves or the commit changes."""
    import hashlib

    data = f"{rule}\x00{match_text}\x00{path}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def reviewed_digest(text: str, salt: str) -> str:
    """The salted SHA-256 under which a reviewed string is stored instead of its plaintext."""
    import hashlib

    return hashlib.sha256((salt + "\0" + text).encode("utf-8", "surrogatepass")).hexdigest()
