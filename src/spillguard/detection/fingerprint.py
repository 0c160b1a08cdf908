"""Stable identities: a finding's fingerprint and a reviewed string's digest.

A finding's fingerprint says *where* it is, never *what* it is: the rule, the path,
the commit, the line and the column, hashed. An unsalted hash of the secret beside
its masked form in a report would let anyone recover a short secret by trying
candidates (a 10-character password took under a minute); a location gives nothing
away and is as stable from run to run, as gitleaks' ``commit:path:rule:line`` is.

hashlib is imported on first use: loading OpenSSL costs ~3 ms, and a commit hook
with no finding and no reviewed string needs neither.
"""

from __future__ import annotations


def finding_fingerprint(*, rule: str, path: str, commit: str | None, line: int, column: int) -> str:
    """SHA-256 (hex) of the finding's location: rule, path, commit id ("" for staged
    changes and plain files), 1-based line and 0-based column of the match in its line.

    A message finding's ``path`` names the message, and its commit the commit or tag.
    """
    import hashlib

    fields = (rule, path, commit or "", str(line), str(column))
    data = "\x00".join(fields).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def reviewed_digest(text: str, salt: str) -> str:
    """The salted SHA-256 under which a reviewed string is stored instead of its plaintext."""
    import hashlib

    return hashlib.sha256((salt + "\0" + text).encode("utf-8", "surrogatepass")).hexdigest()
