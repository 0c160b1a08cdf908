from __future__ import annotations

import time

import pytest
import regex

from spillguard.core.models import MAX_LINE_LENGTH, Fragment, ReviewedEntry, Rule, RuleSet
from spillguard.detection.engine import OutOfTime, Scanner
from spillguard.detection.fingerprint import reviewed_digest
from spillguard.scanning.run import run_scan


def rule(name: str, pattern: str, **kwargs: object) -> Rule:
    return Rule(name=name, kind="custom", regexp=pattern, pattern=regex.compile(pattern), **kwargs)


def scan(text: str, *rules: Rule, path: str = "f.txt", **settings: object):
    scanner = Scanner(RuleSet(rules=rules, **settings))
    return scanner.scan(Fragment(path=path, text=text, start_line=1))


def test_first_matching_rule_per_line_wins():
    first = rule("FIRST", r"tok_[a-z]+")
    second = rule("SECOND", r"tok_\w+")
    findings = scan("x = tok_abc\n", first, second)
    assert [f.rule for f in findings] == ["FIRST"]
    findings = scan("x = tok_abc\n", second, first)
    assert [f.rule for f in findings] == ["SECOND"]


def test_one_finding_per_line_and_group_zero():
    # The rule has a secret group: the finding is still the whole match, the group
    # only says which part of it is the secret (and is masked).
    secret_rule = rule("T", r"tok_(?P<s>[a-z]+)", secret_group="s")
    findings = scan("a tok_one tok_two\nb\ntok_three", secret_rule)
    assert [(f.line, f.match_text) for f in findings] == [(1, "tok_one"), (3, "tok_three")]
    assert (findings[0].secret_start, findings[0].secret_end) == (4, 7)
    assert findings[0].text == "a tok_one tok_two"
    assert (findings[0].line_offset_start, findings[0].line_offset_end) == (2, 9)


def test_long_line_is_truncated_to_the_match_with_offsets_into_it():
    line = "x" * (MAX_LINE_LENGTH * 50) + "tok_secret;" + "y" * 1000
    (finding,) = scan(f"first\n{line}\n", rule("T", r"tok_[a-z]+"))
    assert finding.truncated
    assert finding.line == 2
    assert finding.text == "tok_secret"
    assert finding.text[finding.line_offset_start : finding.line_offset_end] == "tok_secret"


def test_fingerprint_is_the_location_not_the_secret():
    r = rule("T", r"tok_[a-z]+")
    (a,) = scan("tok_abc", r)
    assert scan("tok_xyz", r)[0].fingerprint == a.fingerprint  # same place, other secret
    moved = scan("\n\n\nsome tok_abc here", r)[0].fingerprint
    other_path = scan("tok_abc", r, path="other.txt")[0].fingerprint
    assert len({a.fingerprint, moved, other_path}) == 3


def test_reviewed_entry_hides_exact_match_optionally_per_rule():
    r = rule("T", r"tok_[a-z]+")
    entry = ReviewedEntry(digest=reviewed_digest("tok_abc", "salt"))
    assert (
        scan("tok_abc\ntok_abcd", r, reviewed=(entry,), reviewed_salt="salt")[0].match_text
        == "tok_abcd"
    )
    bound = ReviewedEntry(digest=reviewed_digest("tok_abc", "s"), rule="OTHER")
    assert len(scan("tok_abc", r, reviewed=(bound,), reviewed_salt="s")) == 1


def test_a_reviewed_string_does_not_hide_a_secret_after_it_on_the_line():
    # Otherwise a reviewed fixture put first on a line would let any secret through.
    first = rule("FIRST", r"tok_[a-z]+")
    second = rule("SECOND", r"key_[a-z]+")
    entry = ReviewedEntry(digest=reviewed_digest("tok_fixture", "s"))
    reviewed = {"reviewed": (entry,), "reviewed_salt": "s"}
    (same_rule,) = scan("x = [tok_fixture, tok_real]", first, **reviewed)
    assert same_rule.match_text == "tok_real"
    (next_rule,) = scan("x = [tok_fixture, key_real]", first, second, **reviewed)
    assert (next_rule.rule, next_rule.match_text) == ("SECOND", "key_real")
    assert scan("x = [tok_fixture]", first, second, **reviewed) == []


def test_a_repository_path_allowlist_does_not_let_a_decoy_hide_a_locked_rule():
    # The first rule's finding is hidden by the repository's allowlist_paths; the
    # locked rule's secret later on the line must still be found, and block.
    decoy = rule("DECOY", r"tok_[a-z]+")
    locked = rule("LOCKED", r"key_[a-z]+")
    settings = {"allowlist_paths": (regex.compile(".*"),), "locked": frozenset({"LOCKED"})}
    (finding,) = scan("x = [tok_decoy, key_real]", decoy, locked, **settings)
    assert (finding.rule, finding.match_text, finding.allowlisted) == ("LOCKED", "key_real", False)
    assert finding.hidden == ((5, 14),)  # the decoy is masked where the line is shown
    assert scan("x = [tok_decoy]", decoy, locked, **settings) == []
    shown = scan("x = [tok_decoy]", decoy, locked, include_allowlisted=True, **settings)
    assert [(f.rule, f.allowlisted) for f in shown] == [("DECOY", True)]


def test_a_warning_does_not_shadow_a_locked_rule_later_on_the_line():
    # A repository's warn mode leaves only the locked rules blocking: a warn-only
    # finding judged first must not let a locked rule's secret on the line through.
    decoy = rule("DECOY", r"tok_[a-z]+", blocking=False)
    locked = rule("LOCKED", r"key_[a-z]+")
    settings = {"locked": frozenset({"LOCKED"})}
    (finding,) = scan("x = [tok_decoy, key_real]", decoy, locked, **settings)
    assert (finding.rule, finding.blocking, finding.hidden) == ("LOCKED", True, ((5, 14),))
    (warning,) = scan("x = [tok_decoy]", decoy, locked, **settings)
    assert warning.rule == "DECOY"
    (first,) = scan("x = [tok_decoy, key_real]", decoy, locked)  # nothing locked: first wins
    assert first.rule == "DECOY"


def test_catastrophic_rule_is_a_rule_error_and_the_scan_goes_on():
    slow = rule("SLOW", r"(a|aa)+$")
    fine = rule("FINE", r"tok_[a-z]+")
    scanner = Scanner(RuleSet(rules=(slow, fine), rule_timeout=0.2))
    text = "\n".join(["a" * 60 + "!"] * 50 + ["tok_abc"])
    findings = scanner.scan(Fragment(path="f", text=text))
    assert [f.rule for f in findings] == ["FINE"]
    assert [e.rule for e in scanner.errors] == ["SLOW"]
    assert "SLOW" in scanner.errors[0].message


def test_the_last_lines_newline_is_not_part_of_its_text():
    findings = scan("a\ntok_abc\r\n", rule("T", r"tok_[a-z]+"))
    assert [(f.line, f.text) for f in findings] == [(2, "tok_abc")]
    (finding,) = scan("tok_abc\n", rule("T", r"tok_\w+$"))
    assert finding.text == "tok_abc"


def test_a_rule_is_tried_only_on_lines_holding_one_of_its_required_strings():
    directive = rule(
        "ENV_SECRET", r"(?i:env)\s+(?P<s>\w{8,})", keywords=("env",), requires=("ENV",)
    )
    findings = scan("env abcdefgh1\nENV abcdefgh2\nEnv abcdefgh3 # ENV\n", directive)
    assert [(f.line, f.match_text) for f in findings] == [
        (2, "ENV abcdefgh2"),
        (3, "Env abcdefgh3"),
    ]


def test_a_line_judged_clean_before_is_judged_the_same_in_any_fragment():
    """Lines without findings are remembered; lines with one are judged every time."""
    scanner = Scanner(RuleSet(rules=(rule("T", r"tok_[a-z]{3}\b", keywords=("tok_",)),)))
    texts = ["a = tok_x\nb = tok_abc\n", "b = tok_abc\na = tok_x\n", "a = tok_x\n"]
    found = [
        [(f.path, f.line) for f in scanner.scan(Fragment(path=f"{n}.py", text=text))]
        for n, text in enumerate(texts)
    ]
    assert found == [[("0.py", 2)], [("1.py", 1)], []]


def test_a_rule_that_looks_past_its_line_is_judged_again_on_a_repeated_line():
    """Its verdict depends on the lines after: "BEGIN" alone is clean, with a body not."""
    pem = rule("PEM", r"BEGIN KEY(?=\n[A-Z]{8})", keywords=("begin",), lookahead=True)
    scanner = Scanner(RuleSet(rules=(pem,)))
    assert scanner.scan(Fragment(path="a", text="BEGIN KEY\nshort\n")) == []
    found = scanner.scan(Fragment(path="b", text="BEGIN KEY\nABCDEFGH\n"))
    assert [(f.path, f.line) for f in found] == [("b", 1)]


def test_a_pragma_never_silences_a_locked_rule_nor_lets_it_be_shadowed():
    locked = rule("LOCKED", r"key_[a-z]+")
    other = rule("OTHER", r"tok_[a-z]+")
    pragma = "  # pragma: allowlist-secret"
    settings = {"locked": frozenset({"LOCKED"})}
    (finding,) = scan(f"k = key_real{pragma}", locked, **settings)
    assert (finding.rule, finding.allowlisted) == ("LOCKED", False)
    (finding,) = scan(f"k = [tok_decoy, key_real]{pragma}", other, locked, **settings)
    assert (finding.rule, finding.allowlisted) == ("LOCKED", False)
    assert scan(f"k = tok_fine{pragma}", other, locked, **settings) == []


def test_the_administrator_can_turn_pragmas_off():
    r = rule("T", r"tok_[a-z]+")
    line = "t = tok_abc  # pragma: allowlist-secret"
    assert scan(line, r) == []
    (finding,) = scan(line, r, allow_pragma=False)
    assert not finding.allowlisted


def test_every_hidden_finding_is_counted_by_what_hid_it():
    r = rule("T", r"tok_[a-z]+")
    entry = ReviewedEntry(digest=reviewed_digest("tok_fixture", "s"))
    scanner = Scanner(
        RuleSet(
            rules=(r,),
            reviewed=(entry,),
            reviewed_salt="s",
            allowlist_paths=(regex.compile("fixtures/.*"),),
            trusted_allowlist_paths=(regex.compile("fixtures/.*"),),
        )
    )
    text = "a = tok_fixture\nb = tok_one  # pragma: allowlist-secret\nc = tok_real\n"
    # twice: a line judged before (a clean line is remembered) is counted again
    found = [scanner.scan(Fragment(path="app.py", text=text)) for _ in range(2)]
    assert [[f.match_text for f in each] for each in found] == [["tok_real"], ["tok_real"]]
    assert scanner.scan(Fragment(path="fixtures/k.py", text="tok_abc\ntok_def\n")) == []
    assert scanner.silenced == {"pragma": 2, "path": 2, "reviewed": 2}


def test_a_line_of_exactly_the_limit_is_whole_and_a_pragma_past_it_counts():
    match = "tok_secret"
    line = "x" * (MAX_LINE_LENGTH - len(match)) + match
    (finding,) = scan(line, rule("T", r"tok_[a-z]+"))
    assert not finding.truncated
    assert finding.text == line
    longer = match + " " + "y" * MAX_LINE_LENGTH + " # pragma: allowlist-secret"
    assert scan(longer, rule("T", r"tok_[a-z]+")) == []
    (shown,) = scan(longer, rule("T", r"tok_[a-z]+"), include_allowlisted=True)
    assert (shown.truncated, shown.allowlisted) == (True, True)


def test_the_deadline_bounds_a_rule_inside_a_line_and_keeps_what_was_found():
    """A push's deadline is checked between lines and bounds each regular expression:
    a line that would take a rule forever ends at the deadline, not at the rule's
    own budget (no rule error), and the findings before it are kept."""
    slow = rule("SLOW", r"((?:\p{Lu}\p{Ll})+)+$")
    fine = rule("FINE", r"tok_[a-z]+")
    scanner = Scanner(
        RuleSet(rules=(fine, slow), rule_timeout=600), deadline=time.monotonic() + 0.3
    )
    text = "tok_first\n" + "Ab" * 5000 + "!\ntok_never\n"
    with pytest.raises(OutOfTime) as stopped:
        scanner.scan(Fragment(path="f", text=text))
    assert [f.match_text for f in stopped.value.findings] == ["tok_first"]
    assert scanner.errors == []
    late = Scanner(RuleSet(rules=(fine,)), deadline=time.monotonic() - 1)
    with pytest.raises(OutOfTime):
        late.scan(Fragment(path="f", text="tok_abc\n"))


class _StoppedClock:
    """The engine's clock, stopped: between lines the deadline never passes, so only
    a rule's own regular expression, given the time left (real seconds), runs out."""

    @staticmethod
    def monotonic() -> float:
        return 1000.0


def test_a_batch_past_its_deadline_keeps_what_it_found_and_counts_what_it_reached(
    monkeypatch: pytest.MonkeyPatch,
):
    """Fragments judged a batch at a time stop at the deadline as one by one would: the
    findings before it stand, and the fragments up to the one it stopped in count.

    The deadline can pass only inside the slow line (the clock between lines stands
    still), however loaded the machine: the fragments before it always count."""
    monkeypatch.setattr("spillguard.detection.engine.time", _StoppedClock)
    slow = rule("SLOW", r"((?:\p{Lu}\p{Ll})+)+$", keywords=("ab",))
    fine = rule("FINE", r"tok_[a-z]+", keywords=("tok_",))
    texts = ["tok_first\n", "nothing\n", "Ab" * 5000 + "!\n", "tok_never\n"]
    fragments = [Fragment(path=f"f{number}", text=text) for number, text in enumerate(texts)]
    ruleset = RuleSet(rules=(fine, slow), rule_timeout=600)
    result = run_scan(fragments, ruleset, deadline=_StoppedClock.monotonic() + 1.0)
    assert result.out_of_time
    assert [f.match_text for f in result.findings] == ["tok_first"]
    assert (result.stats.files, result.stats.bytes) == (3, len("".join(texts[:3])))


NAME_THEN_VALUE = rule(
    "BLOCK",
    r"(?m)^token: \|[ \t]*(?=\n[ \t]+(?P<s>[A-Za-z0-9]{16,}))",
    secret_group="s",
    lookahead=True,
)


def test_a_secret_on_the_line_after_its_name_is_reported_on_its_own_line():
    findings = scan("x: 1\ntoken: |\n  Zq8Wm3Lp0Rt6Yv2Nb9Xc\n", NAME_THEN_VALUE)
    assert [(f.line, f.text, f.match_text) for f in findings] == [
        (3, "  Zq8Wm3Lp0Rt6Yv2Nb9Xc", "Zq8Wm3Lp0Rt6Yv2Nb9Xc")
    ]
    found = findings[0]
    assert found.text[found.line_offset_start : found.line_offset_end] == found.match_text


def test_a_secret_below_its_name_is_one_finding_and_a_pragma_on_either_line_silences_it():
    value = rule("VALUE", r"[A-Za-z0-9]{20}")
    text = "token: |\n  Zq8Wm3Lp0Rt6Yv2Nb9Xc\n"
    assert [(f.rule, f.line) for f in scan(text, NAME_THEN_VALUE, value)] == [("BLOCK", 2)]
    marked = "token: |  # pragma: allowlist-secret\n  Zq8Wm3Lp0Rt6Yv2Nb9Xc\n"
    assert scan(marked, NAME_THEN_VALUE) == []
