"""Custom rules: Java syntax accepted where ``regex`` understands it, bad rules refused by name."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest
import regex

from spillguard.cli import main
from spillguard.configuration.rules import builtin_rules
from spillguard.detection.engine import compiled, pattern_of
from spillguard.detection.redos import attack_strings
from spillguard.detection.rulecheck import RuleValidationError, compile_custom, long_lines
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"itk_[A-Za-z0-9]{8}+", "x = itk_Ab3dEf9h"),  # possessive quantifier
        (r"\p{Lu}{3}_\p{Alnum}{6}", "KEY_ab12cd"),  # \p{...} classes
        (r"(?<prefix>itk)_(?<body>\d{4})", "itk_1234"),  # Java named groups
        (r"(?i)ITK_[a-z]{4}", "itk_abcd"),  # inline flag
        (r"\QTOKEN=\E[a-f0-9]{8}", "TOKEN=deadbeef"),  # quoting
        (r"(?<t>tk)_\k<t>\d{3}", "tk_tk123"),  # named back-reference
        (r"(?>itk|itk_)\d{4}", "itk1234"),  # atomic group
    ],
)
def test_java_constructs_are_accepted(pattern: str, text: str) -> None:
    assert compile_custom("MY_RULE", pattern).search(text) is not None


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"tok_(", "does not compile"),
        (r"tok_\p{Latin}{8}", r"unknown character property name \{Latin\}"),
        (r"tok_[a-z]{,8}", "illegal repetition"),  # Java refuses {,n}
        (r"\k<n>(?<n>tok)", "named capturing group <n> does not exist"),
        (r"x*", "matches the empty string"),
        (r"[a-z]+", "too broad"),
        (r"\w", "too broad"),
    ],
)
def test_bad_custom_rules_are_refused_naming_rule_and_reason(pattern: str, reason: str) -> None:
    with pytest.raises(RuleValidationError, match=reason) as raised:
        compile_custom("MY_RULE", pattern)
    assert "custom rule MY_RULE" in str(raised.value)


def test_invalid_custom_rule_in_config_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    config = tmp_path / "admin.toml"
    config.write_text("[custom_rules]\nBROKEN = 'tok_('\n")
    assert main(["scan", "--files", str(tmp_path), "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "BROKEN" in err[0]
    assert err[0].startswith("spillguard: error:")


def test_catastrophic_custom_rule_is_a_rule_error_and_the_scan_goes_on(
    tmp_path: Path, capsys
) -> None:
    config = tmp_path / "admin.toml"
    # Slow on a repeated two-character unit of \p{..} classes, which the load-time
    # probes cannot build: only the rule's time budget stops it.
    config.write_text("max_rule_timeout = 0.5\n[custom_rules]\nSLOW = '((?:\\p{Lu}\\p{Ll})+)+$'\n")
    files = tmp_path / "src"
    files.mkdir()
    (files / "a.txt").write_text("Ab" * 25_000 + "!\n" + "Ab" * 25_000 + "!\n")
    key = expand("AKIA{rand:A2:16}", "slow")
    (files / "b.txt").write_text(f"aws_key = {key}\n")
    code = main(["scan", "--files", str(files), "--config", str(config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [finding["rule"] for finding in report["findings"]] == ["AWS_CLIENT_ID"]
    (error,) = report["errors"]
    assert error["rule"] == "SLOW"
    assert "time budget" in error["message"]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+$",
        r"(\w+)*@",
        r"(\d+\s?)+x",
        r"(\s*)*;",
        r"(a|aa)+$",
        r"(x|x)+y",
        # overlapping alternatives under a quantifier, behind a prefix
        r"tok_(ab|a|b)+$",
        r"((ab)+)+$",
        r"id_(?:[a-z]|[a-f0-9])+!",
        # a Java \b, translated into classes Python's parser does not know
        r"\btok_(ab|a|b)+$",
    ],
)
def test_catastrophic_custom_rule_is_refused_at_load_naming_it(
    tmp_path: Path, capsys, pattern: str
) -> None:
    # Refused before any scan: under the default 20 s budget a scan would stall.
    config = tmp_path / "admin.toml"
    config.write_text(f"[custom_rules]\nCATA = '{pattern}'\n")
    (tmp_path / "a.txt").write_text("a" * 100_000 + "\n")
    assert main(["scan", "--files", str(tmp_path / "a.txt"), "--config", str(config)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("spillguard: error: ")
    assert "custom rule CATA: regexp backtracks catastrophically" in err[0]


@pytest.mark.parametrize(
    "pattern",
    [
        r"itk_[A-Za-z0-9]{32}",
        r"password\s*=\s*\S{8,}",
        r"-----BEGIN [A-Z ]+-----",
        r"tok_(?:ab|cd){1,64}$",  # alternatives that cannot match the same text
        r"(?:[a-z]{1,63}\.){1,8}[a-z]{2,}:[0-9]{4,}",
        r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,255}\.[A-Za-z]{2,}",
        r"key.{0,64}secret",
        r'"(?:[^"\\]|\\.)*"\s*:\s*"sk_[a-z0-9]{20}"',
        r"(?i)(?:api|secret)[_-]?key\s*[:=]\s*['\"]?[A-Za-z0-9]{16,}",
        r"\b[13][a-km-zA-HJ-NP-Z1-9]{25,34}\b",
    ],
)
def test_ordinary_custom_rules_pass_the_backtracking_probe(pattern: str) -> None:
    assert compile_custom("MY_RULE", pattern) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        "Q+Z",  # no keyword: every position of a line of Q runs the repeat to its end
        r"\w+@\w+\.com",
        r"x[a-z]+y",  # on a line of x
        r"key.*secret",  # on keyakeyakeya...
        r"(?:ab)+c",
        # regex gives a repeated group back one repetition at a time, each in time
        # growing with the repeats before it: from one start, on tok_abab... (Java's
        # $ is an alternation here, as c is above)
        r"tok_(?:ab|cd)+$",
        r"(?:[a-z]+\.)+[a-z]{2,}:[0-9]{4,}",  # on a.a.a.a...
        r"\p{Alpha}+Z",  # regex-only syntax: runs of common characters probe it
        r"key\s*[:=]?\s*tok_[a-z0-9]{8}",  # two repeats splitting one run of blanks
    ],
)
def test_a_rule_quadratic_on_long_lines_is_refused_at_load_naming_it(
    tmp_path: Path, capsys, pattern: str
) -> None:
    """Two 150,000-character lines held ``Q+Z`` for 34 to 83 s (20 s a line under the
    default budget): validation probes long lines, so such a rule never runs."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".spillguard.toml").write_text(f"[custom_rules]\nSLOW = '{pattern}'\n")
    (repo / "long.txt").write_text(("Q" * 150_000 + "\n") * 2)
    assert main(["scan", "--files", str(repo / "long.txt"), "--repo", str(repo)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert "custom rule SLOW: regexp takes time growing with the square of a line's" in err[0]


def test_every_built_in_rule_survives_the_attack_strings() -> None:
    """The probes refuse what backtracks; none of the built-in rules does."""
    slow = [
        rule.name
        for rule in builtin_rules()
        for attack in attack_strings(compiled(rule).pattern)
        if not finishes(compiled(rule), attack)
    ]
    assert slow == []


def finishes(pattern: regex.Pattern[str], text: str) -> bool:
    try:
        pattern.search(text, timeout=5)
    except TimeoutError:
        return False
    return True


# -- built-in patterns and long lines --------------------------------------------------------

#: Built-in patterns are timed on the custom-rule check's long-line probes at two lengths:
#: a search linear in its line takes four times as long on a line four times as long, a
#: quadratic one sixteen. Eight, between the two, leaves noise a factor of two each way.
_SHORT, _LONG = 1_000, 4_000
_SUPERLINEAR = 8.0
#: CPU seconds on the long probes under which a pattern is too fast to judge (or to hurt).
_MEASURABLE = 0.001


def _built_in_patterns() -> Iterator[tuple[str, str, regex.Pattern[str]]]:
    """Every pattern a built-in rule runs over text a pusher writes: the line's, the lines'
    before (``previous_line``), the path's and its allowlist's (run on what it matched)."""
    for rule in builtin_rules():
        yield rule.name, rule.regexp, compiled(rule)
        for source in (rule.previous_line, rule.path, *(rule.allow or ())):
            if source is not None:
                yield rule.name, source, pattern_of(source)


def _cpu(pattern: regex.Pattern[str], lines: list[str], runs: int) -> float:
    """The least CPU time of this thread, over ``runs``, to search every line: a thread's
    own CPU time, so the load of the machine and the process's other threads count little."""
    best = float("inf")
    for _ in range(runs):
        started = time.thread_time()
        for line in lines:
            pattern.search(line)
        best = min(best, time.thread_time() - started)
    return best


def test_no_built_in_pattern_takes_time_growing_faster_than_its_line() -> None:
    """A pushed line made of a pattern's own repeats ("awssessiontoken=A" 1,176 times held
    AWS_SESSION_TOKEN for over 5 CPU-s on 20,000 characters) makes a quadratic rule spend
    its budget and fail a server's hook closed: every built-in pattern stays linear. A
    ratio of times, not a time: what the machine's load changes cancels out; a pattern
    over the ratio is timed again, five times, before it is named."""
    superlinear = []
    for name, source, pattern in _built_in_patterns():
        long = long_lines(pattern, source, _LONG)
        # The same lines cut short, before what ends each (a pumped line is periodic).
        short = [line[:_SHORT] + line[line.rindex("\x01") :] for line in long]
        for runs in (1, 5):
            times = _cpu(pattern, short, runs), _cpu(pattern, long, runs)
            if times[1] < _MEASURABLE or times[1] < _SUPERLINEAR * times[0]:
                break
        else:
            superlinear.append(f"{name} {source[:50]!r}: {times[0]:.4f} s -> {times[1]:.4f} s")
    assert not superlinear, "quadratic or worse on long lines:\n" + "\n".join(superlinear)


@pytest.mark.parametrize("pattern", ["Q++Z", "(?>Q+)Z", "x(?:[a-z]++y)"])
def test_possessive_and_atomic_repeats_are_probed_on_long_lines(pattern: str) -> None:
    """A possessive repeat gives nothing back, but still runs to the end of the run from
    every position that reaches it: quadratic as ``Q+Z`` is, only faster."""
    lines = long_lines(regex.compile(pattern), pattern, 1_000)
    assert any(line.startswith(("Q" * 1_000, "x" * 1_000)) for line in lines)


def test_a_long_line_probe_holds_no_line_break() -> None:
    """A scan judges one line at a time: a probe pumping a line break would be a line no
    scan ever sees (and would refuse a custom rule for text it never meets)."""
    lines = long_lines(regex.compile(r"[a-z]+\n[0-9]+Z"), r"[a-z]+\n[0-9]+Z", 1_000)
    assert lines
    assert not any("\n" in line for line in lines)
