"""Java regular expressions (the server app's dialect) for the ``regex`` package.

``regex`` already understands most of Java's syntax: possessive quantifiers,
atomic groups, ``\\p{...}`` classes, ``(?<name>...)`` groups, inline flags and,
in its V1 mode, Java's nested character-class set operations. This module
translates the few constructs it spells differently and names the ones it
cannot express, so the error can say which construct a rule uses.
"""

from __future__ import annotations

import regex

# Constructs with no equivalent, each with the reason shown to the user.
_UNSUPPORTED = (
    (regex.compile(r"\\p\{java\w+\}"), "Java-only character class"),
    (regex.compile(r"\\p\{Is(?:Ideographic|JoinControl)\}"), "Java-only Unicode property"),
    (regex.compile(r"\(\?[a-zA-Z]*[c][a-zA-Z]*[):]"), "CANON_EQ inline flag (?c)"),
)
_QUOTED = regex.compile(r"\\Q(.*?)(?:\\E|$)", regex.DOTALL)
_BACKREF = regex.compile(r"\\k<([A-Za-z][A-Za-z0-9]*)>")
# Java-only inline flags: U (Unicode classes, always on here) and d (Unix lines).
_JAVA_FLAGS = regex.compile(r"\(\?([idmsuxUd]*)(-[idmsuxUd]*)?([):])")

FLAGS = regex.V1


class JavaRegexError(ValueError):
    """The pattern uses a construct that cannot be used; the message names it."""


def _drop_java_flags(match: regex.Match[str]) -> str:
    on = match.group(1).replace("U", "").replace("d", "")
    off = (match.group(2) or "").replace("U", "").replace("d", "")
    if not on and off in ("", "-") and match.group(3) == ")":
        return ""
    if off == "-":
        off = ""
    return f"(?{on}{off}{match.group(3)}"


def translate(pattern: str) -> str:
    """The ``regex`` spelling of a Java pattern; raises JavaRegexError for what has none."""
    for detector, reason in _UNSUPPORTED:
        found = detector.search(pattern)
        if found:
            raise JavaRegexError(f"unsupported construct {found.group(0)!r}: {reason}")
    translated = _QUOTED.sub(lambda m: regex.escape(m.group(1)), pattern)
    translated = _BACKREF.sub(r"(?P=\1)", translated)
    return _JAVA_FLAGS.sub(_drop_java_flags, translated)


def compile_java(pattern: str) -> regex.Pattern[str]:
    """Compile a Java pattern; errors name the construct or the position."""
    translated = translate(pattern)
    try:
        return regex.compile(translated, FLAGS)
    except regex.error as error:
        raise JavaRegexError(f"does not compile: {error}") from None
