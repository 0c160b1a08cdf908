"""Validation of custom rules before use: compiles, no empty match, not too broad."""

from __future__ import annotations

import functools
import time
from pathlib import Path

from spillguard.detection.compiled import cache_folder, compile_kept, keep, recalled, remember

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    import regex

# Lines of ordinary code and prose in several languages, free of credentials.
# A custom rule that matches many of them would drown real findings in noise.
ORDINARY_LINES = (
    "import os",
    "from collections import defaultdict",
    "def main(argv=None):",
    "    return 0",
    "for (int i = 0; i < n; i++) {",
    "}",
    "if x is None:",
    "    print('hello world')",
    "const express = require('express');",
    "export default function App() {",
    "public static void main(String[] args) {",
    "#include <stdio.h>",
    "SELECT id, name FROM users WHERE id = 1;",
    '<div class="container">',
    "  margin: 0 auto;",
    "README.md",
    "version: 2",
    "    - run: npm test",
    "The quick brown fox jumps over the lazy dog.",
    "// TODO: handle the error",
    "# Configuration",
    'name = "spillguard"',
    "let total = items.reduce((a, b) => a + b, 0);",
    "func (s *Server) Start() error {",
    "    x = y * 2 + 1",
    "fn main() -> Result<(), Box<dyn Error>> {",
    "<?php echo $title; ?>",
    "    end",
    "}, [])",
    "1.2.3",
    "2024-01-01T00:00:00Z",
    "Copyright (c) 2020 The Authors",
)
#: A rule matching this share of ORDINARY_LINES is rejected as too broad.
BROAD_SHARE = 0.2
_PROBE_TIMEOUT = 0.5
#: Nested quantifiers such as ``(a+)+$`` backtrack exponentially on a long run of
#: one character that ends in a mismatch. A run of this many of each character the
#: regexp names (and a few common ones) exposes them at load, so a scan never pays
#: the default 20 s rule budget; a sound regexp takes microseconds per probe.
_RUN_LENGTH = 1000
_RUN_CHARACTERS = "aA0 _-."
#: A long line (a minified file, a base64 blob) on which a search that retries a long
#: repeat from every position takes time growing with the square of its length: a
#: 150,000-character line held ``Q+Z`` for a minute. On this many characters such a
#: search takes a second of CPU, a sound one a few milliseconds at most.
_LONG_LINE = 20_000
#: ``regex`` counts a timeout in CPU seconds: a loaded machine does not change it.
_LONG_LINE_TIMEOUT = 0.25
#: A newer ``regex`` runs some such searches fast enough to finish on ``_LONG_LINE``
#: characters (key.*secret on "keyakeya...": 35 ms, still 0.4 s on four times as many
#: and a minute on a line of a megabyte). A probe that takes this much CPU is tried
#: again on ``_GROWTH`` times as many characters, where a sound search takes about
#: ``_GROWTH`` times as long and one growing with the square ``_GROWTH`` squared: more
#: than twice the sound time is refused.
_SLOW_PROBE = 0.01
_GROWTH = 4


class _Polynomial(Exception):  # noqa: N818 - a signal, not an error
    """A long-line probe ran out of time."""


class RuleValidationError(ValueError):
    """A custom rule cannot be used; the message says why."""


def compile_custom(name: str, pattern: str) -> regex.Pattern[str]:
    """Compile and validate a custom rule's (Java-dialect) regular expression.

    A pattern found sound is remembered in the user's cache (``compiled.remember``)
    with its translation, for this code and this regex: the next process makes it from
    there, without translating it or probing it again (three custom rules cost a
    commit hook four times its instructions: the translator, regex's compiler and the
    probes' long lines). A pattern refused is refused again each time, with its
    reason."""
    folder = cache_folder()
    key = ("custom rule", pattern, _checker())
    known = recalled(key, folder)
    if isinstance(known, tuple) and len(known) == 2:
        return compile_kept(*known, folder)
    compiled = _validated(name, pattern)
    from spillguard.detection.javaregex import FLAGS

    keep(compiled, FLAGS, folder)
    remember(key, (compiled.pattern, int(FLAGS)), folder)
    return compiled


@functools.cache
def _checker() -> str:
    """What decides a custom rule's verdict: the translation's and the checks' code
    (this module and those it calls on), as installed."""
    here = Path(__file__)
    names = ("rulecheck.py", "javaregex.py", "javaclasses.py", "redos.py", "compiled.py")
    found = [(name, here.with_name(name).stat()) for name in names]
    return ":".join(f"{name}:{stat.st_size}:{stat.st_mtime_ns}" for name, stat in found)


def _validated(name: str, pattern: str) -> regex.Pattern[str]:
    """The custom rule's pattern, translated, compiled and probed."""
    from spillguard.detection.javaregex import JavaRegexError, compile_java

    try:
        compiled = compile_java(pattern)
    except JavaRegexError as error:
        raise RuleValidationError(f"custom rule {name}: regexp {error}") from None
    try:
        _check_matches(name, compiled, pattern)
    except _Polynomial:
        raise RuleValidationError(
            f"custom rule {name}: regexp takes time growing with the square of a line's "
            "length: a repeat a long run of text can reach from every position (Q+Z, "
            "\\w+@, key.*secret) is tried again from each; bound it ({1,64}) or anchor "
            "what comes before it (\\b, a literal prefix)"
        ) from None
    except TimeoutError:
        raise RuleValidationError(
            f"custom rule {name}: regexp backtracks catastrophically (nested "
            "quantifiers such as (a+)+, or alternatives that can match the same text "
            "under a quantifier such as (ab|a|b)+, take exponential time on a long line)"
        ) from None
    return compiled


def _check_matches(name: str, compiled: regex.Pattern[str], source: str) -> None:
    if compiled.search("", timeout=_PROBE_TIMEOUT) is not None:
        raise RuleValidationError(f"custom rule {name}: regexp matches the empty string")
    hits = 0
    for line in ORDINARY_LINES:
        match = compiled.search(line, timeout=_PROBE_TIMEOUT)
        if match is None:
            continue
        if not match.group(0):
            raise RuleValidationError(f"custom rule {name}: regexp can match the empty string")
        hits += 1
    if hits >= BROAD_SHARE * len(ORDINARY_LINES):
        raise RuleValidationError(
            f"custom rule {name}: regexp is too broad: it matches {hits} of "
            f"{len(ORDINARY_LINES)} lines of ordinary code"
        )
    named = _named(compiled)
    for character in dict.fromkeys(_RUN_CHARACTERS + named):
        # A control character no regexp expects makes the match fail after the run;
        # the regexp's own characters after it defeat its required-literal shortcut.
        compiled.search(character * _RUN_LENGTH + "\x01" + named, timeout=_PROBE_TIMEOUT)
    # Runs of one character miss what needs a prefix or a pumped sequence
    # (tok_(ab|a|b)+$): strings built from the pattern's own repeats reach them.
    # The Java source too: its translation spells \b and the like with \p{...}
    # classes, which Python's parser (and so attack_strings) does not know.
    from spillguard.detection.redos import attack_strings

    attacks = [*attack_strings(compiled.pattern), *attack_strings(source)]
    for attack in dict.fromkeys(attacks):
        compiled.search(attack + named, timeout=_PROBE_TIMEOUT)
    _check_long_lines(compiled, source)


def _check_long_lines(compiled: regex.Pattern[str], source: str) -> None:
    try:
        slowest = max(
            map(functools.partial(_cpu, compiled), long_lines(compiled, source, _LONG_LINE)),
            default=0.0,
        )
        if slowest >= _SLOW_PROBE:
            timeout = max(_LONG_LINE_TIMEOUT, 2 * _GROWTH * slowest)
            for probe in long_lines(compiled, source, _GROWTH * _LONG_LINE):
                compiled.search(probe, timeout=timeout)
    except TimeoutError:
        raise _Polynomial from None


def _cpu(compiled: regex.Pattern[str], probe: str) -> float:
    """The CPU seconds one search of ``probe`` takes (TimeoutError past the budget)."""
    started = time.process_time()
    compiled.search(probe, timeout=_LONG_LINE_TIMEOUT)
    return time.process_time() - started


def long_lines(compiled: regex.Pattern[str], source: str, length: int) -> list[str]:
    """Lines of about ``length`` characters built from the pattern's unbounded repeats
    (the source's tree, else the compiled translation's; runs of common characters when
    neither parses), each ending in what makes a match fail after it: a search that
    retries a repeat from every position takes time growing with their square."""
    named = _named(compiled)
    candidates = "".join(dict.fromkeys(_RUN_CHARACTERS + named))
    from spillguard.detection.redos import long_line_probes

    probes = long_line_probes(source, candidates, length)
    if probes is None:
        probes = long_line_probes(compiled.pattern, candidates, length)
    if probes is None:
        probes = [character * length for character in _RUN_CHARACTERS]
    return [f"{probe}\x01{named}" for probe in probes]


def _named(compiled: regex.Pattern[str]) -> str:
    """The printable characters the pattern names, once each, in order."""
    return "".join(dict.fromkeys(c for c in compiled.pattern if c.isprintable()))
