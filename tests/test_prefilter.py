from __future__ import annotations

import random

import pytest

from spillguard.engine import Scanner
from spillguard.models import Fragment, Rule, RuleSet
from spillguard.prefilter import KeywordIndex


def starts_of(text: str) -> list[int]:
    return [0] + [i + 1 for i, char in enumerate(text) if char == "\n" and i + 1 < len(text)]


def obvious(keywords_per_rule, text: str) -> dict[int, list[int]]:
    """The definition: rule i is a candidate on a line holding one of its keywords."""
    result = {}
    for number, line in enumerate(text.split("\n")[: len(starts_of(text))]):
        found = [
            i
            for i, words in enumerate(keywords_per_rule)
            if not words or any(w in line for w in words)
        ]
        if found:
            result[number] = found
    return result


def test_overlapping_and_nested_keywords_are_all_found() -> None:
    rules = [("pass",), ("password",), ("word",), ("ordx",), ("sk_live",), ("live_",)]
    index = KeywordIndex(rules)
    text = "password\nswordx\nsk_live_abc\nnothing here\npasswd"
    assert index.candidates(text, starts_of(text)) == {
        0: [0, 1, 2],
        1: [2, 3],
        2: [4, 5],
        4: [0],
    }


def test_rule_without_keywords_is_tried_on_every_line() -> None:
    index = KeywordIndex([("akia",), ()])
    text = "x\nakia\n"
    assert index.candidates(text, starts_of(text)) == {0: [1], 1: [0, 1]}


@pytest.mark.parametrize("seed", range(20))
def test_same_sets_as_checking_every_keyword_on_every_line(seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 - test data, not cryptography
    alphabet = "ab_-.c"
    keywords = [
        tuple(
            {
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
                for _ in range(rng.randint(0, 3))
            }
        )
        for _ in range(12)
    ]
    text = "".join(rng.choice(alphabet + "\n") for _ in range(400))
    index = KeywordIndex(keywords)
    assert index.candidates(text, starts_of(text)) == obvious(keywords, text)


def test_non_ascii_text_whose_lowercase_changes_length_is_still_judged() -> None:
    # "İ" lowercases to two characters; the scanner falls back to line by line.
    rule = Rule(name="T", kind="builtin", regexp=r"tok_[a-z]+", keywords=("tok_",))
    scanner = Scanner(RuleSet(rules=(rule,)))
    findings = scanner.scan(Fragment(path="f", text="İİİ\nİ x tok_abc\n"))
    assert [(f.line, f.match_text, f.text) for f in findings] == [(2, "tok_abc", "İ x tok_abc")]
