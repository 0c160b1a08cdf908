from __future__ import annotations

import random

import pytest

from spillguard.core.models import Fragment, Rule, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.detection.prefilter import GRAM_FILTER, KeywordIndex


def per_line(index: KeywordIndex, text: str) -> dict[int, list[int]]:
    """The index's hits grouped by line number, as the engine groups them."""
    found: dict[int, set[int]] = {}
    for position, rules in index.hits(text):
        found.setdefault(text.count("\n", 0, position), set()).update(rules)
    return {line: sorted(rules) for line, rules in sorted(found.items())}


def obvious(keywords_per_rule, text: str) -> dict[int, list[int]]:
    """The definition: rule i is a candidate on a line holding one of its keywords."""
    result = {}
    for number, line in enumerate(text.split("\n")):
        found = [i for i, words in enumerate(keywords_per_rule) if any(w in line for w in words)]
        if found:
            result[number] = found
    return result


def test_overlapping_and_nested_keywords_are_all_found() -> None:
    rules = [("pass",), ("password",), ("word",), ("ordx",), ("sk_live",), ("live_",)]
    index = KeywordIndex(rules)
    text = "password\nswordx\nsk_live_abc\nnothing here\npasswd"
    assert per_line(index, text) == {0: [0, 1, 2], 1: [2, 3], 2: [4, 5], 4: [0]}


def test_rule_without_keywords_is_tried_on_every_line() -> None:
    rules = (
        Rule(name="K", kind="builtin", regexp=r"akia\w+", keywords=("akia",)),
        Rule(name="ANY", kind="custom", regexp=r"tok_\w+"),
    )
    scanner = Scanner(RuleSet(rules=rules))
    found = scanner.scan(Fragment(path="f", text="x tok_a\nakia1 tok_b\n\ntok_c"))
    assert [(f.rule, f.line) for f in found] == [("ANY", 1), ("K", 2), ("ANY", 4)]


@pytest.mark.parametrize(
    ("small_text", "native", "length"),
    [(0, False, 400), (0, True, 400), (10**6, False, 400), (10**6, False, GRAM_FILTER * 3)],
    # A small text past GRAM_FILTER searches only the keywords whose first three
    # characters it holds (and every shorter keyword): the same sets all the same.
    ids=["pattern", "native", "keyword-by-keyword", "keyword-by-keyword-trigrams"],
)
@pytest.mark.parametrize("seed", range(30))
def test_same_sets_as_checking_every_keyword_on_every_line(
    seed: int, small_text: int, native: bool, length: int
) -> None:
    rng = random.Random(seed)  # noqa: S311 - test data, not cryptography
    alphabet = "ab_-.cé"  # é: character offsets, not bytes, in every engine
    keywords = [
        tuple(
            {
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5)))
                for _ in range(rng.randint(1, 3))
            }
        )
        for _ in range(12)
    ]
    text = "".join(rng.choice(alphabet + "\n") for _ in range(length))
    index = KeywordIndex(keywords, small_text=small_text, native=native)
    assert per_line(index, text) == obvious(keywords, text)


def test_non_ascii_text_whose_lowercase_changes_length_is_still_judged() -> None:
    # "İ" lowercases to two characters; the scanner falls back to line by line.
    rule = Rule(name="T", kind="builtin", regexp=r"tok_[a-z]+", keywords=("tok_",))
    scanner = Scanner(RuleSet(rules=(rule,)))
    findings = scanner.scan(Fragment(path="f", text="İİİ\nİ x tok_abc\n"))
    assert [(f.line, f.match_text, f.text) for f in findings] == [(2, "tok_abc", "İ x tok_abc")]


def test_lines_with_hits_are_located_exactly() -> None:
    rule = Rule(name="T", kind="builtin", regexp=r"tok_[a-z]+", keywords=("tok_",))
    scanner = Scanner(RuleSet(rules=(rule,)))
    text = "\n\nx\r\ntok_a tok_b\r\n\n" + "y\n" * 1000 + "tok_c"
    found = scanner.scan(Fragment(path="f", text=text, start_line=10))
    assert [(f.line, f.text) for f in found] == [(13, "tok_a tok_b"), (1015, "tok_c")]


@pytest.mark.parametrize("seed", range(20))
def test_a_batch_prefiltered_first_is_judged_as_each_text_alone(seed: int) -> None:
    """scan_batch() judges each text with the hits of one search of them all: the
    findings of scan() of each, in order, and a text not worth scanning has none."""
    rng = random.Random(seed)  # noqa: S311 - test data, not cryptography
    words = ["tok_", "key", "pass", "sk_", "ab", "hasło"]
    rules = tuple(
        Rule(name=f"R{number}", kind="builtin", regexp=rf"{word}\w*", keywords=(word,))
        for number, word in enumerate(words)
    )
    pieces = [*words, " ", "x", "\n", "\r\n", "é", "TOK_", "İ" if seed % 4 == 0 else "y"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(40)]
    texts += texts[:5]  # the same text twice in one batch
    fragments = [Fragment(path=f"f{number}", text=text) for number, text in enumerate(texts)]
    alone = [Scanner(RuleSet(rules=rules)).scan(fragment) for fragment in fragments]
    batched = Scanner(RuleSet(rules=rules))
    worth = batched.worth_scanning(texts)
    assert batched.scan_batch(fragments) == [finding for found in alone for finding in found]
    assert all(worth[number] or not found for number, found in enumerate(alone))


def test_a_keyword_outside_ascii_keeps_the_batch_prefilter() -> None:
    """A rule keyed on a Polish or Swedish word (hasło, lösenord) still lets the texts
    that hold no keyword skip the engine: a history scan's prefilter stays on."""
    rule = Rule(
        name="P",
        kind="builtin",
        regexp=r"(?i)(?:hasło|lösenord)=\w+",
        keywords=("hasło", "lösenord"),
    )
    texts = ["x = 1", "HASŁO=abc", "y lösenord=def", "nothing here"]
    scanner = Scanner(RuleSet(rules=(rule,)))
    assert scanner.worth_scanning(texts) == [False, True, True, False]
    found = [scanner.scan(Fragment(path=f"f{n}", text=text)) for n, text in enumerate(texts)]
    assert [[f.match_text for f in part] for part in found] == [
        [],
        ["HASŁO=abc"],
        ["lösenord=def"],
        [],
    ]


def test_a_text_whose_lowercase_changes_length_does_not_spoil_its_batch() -> None:
    """It is judged line by line; the others of its batch keep their batched hits."""
    keyword = Rule(name="T", kind="builtin", regexp=r"tok_[a-z]+", keywords=("tok_",))
    anywhere = Rule(name="ANY", kind="custom", regexp=r"any_[a-z]+")
    texts = ["tok_a\nİ x TOK_b tok_c\nİ", "x tok_d", "İ nothing", "any_e"]
    scanner = Scanner(RuleSet(rules=(keyword,)))
    assert scanner.worth_scanning(texts) == [True, True, True, False]
    found = [scanner.scan(Fragment(path=f"f{n}", text=text)) for n, text in enumerate(texts)]
    assert [[(f.path, f.line, f.match_text) for f in part] for part in found] == [
        [("f0", 1, "tok_a"), ("f0", 2, "tok_c")],
        [("f1", 1, "tok_d")],
        [],
        [],
    ]
    both = Scanner(RuleSet(rules=(keyword, anywhere)))
    findings = both.scan(Fragment(path="f", text="İ any_f\ntok_g any_h\nİ"))
    assert [(f.rule, f.line) for f in findings] == [("ANY", 1), ("T", 2)]


@pytest.mark.parametrize("seed", range(10))
def test_required_strings_only_skip_what_could_not_match(seed: int) -> None:
    """A rule's ``requires`` (strings every match holds) drops texts and lines without
    them before any regex runs; the findings are those of the same rules without it."""
    rng = random.Random(seed)  # noqa: S311 - test data, not cryptography
    specs = [
        ("url", r"url://\w*@\w+", ("@",)),
        ("tok_", r"tok_\w+=\w+", ("=",)),
        ("k", r"k\w+", ()),
    ]

    def rules(*, required: bool) -> tuple[Rule, ...]:
        return tuple(
            Rule(
                name=f"R{number}",
                kind="builtin",
                regexp=pattern,
                keywords=(word,),
                requires=needs if required else (),
            )
            for number, (word, pattern, needs) in enumerate(specs)
        )

    pieces = ["url://", "tok_", "@", "=", "ab", " ", "\n", "k", "x"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 9))) for _ in range(80)]
    fragments = [Fragment(path=f"f{number}", text=text) for number, text in enumerate(texts)]
    plain = Scanner(RuleSet(rules=rules(required=False)))
    expected = [plain.scan(fragment) for fragment in fragments]
    filtered = Scanner(RuleSet(rules=rules(required=True)))
    worth = filtered.worth_scanning(texts)
    assert [filtered.scan(fragment) for fragment in fragments] == expected
    assert filtered.scan_batch(fragments) == [finding for found in expected for finding in found]
    assert all(worth[number] or not found for number, found in enumerate(expected))
    assert worth.count(False) > plain.worth_scanning(texts).count(False)  # it did skip some


def test_a_file_whose_path_has_a_rule_for_every_line_is_judged_in_a_batch() -> None:
    """A rule with a path and no keywords (a .pgpass line holds none) finds its line in
    a batch too, though the text holds no keyword; the same text elsewhere is clean."""
    pgpass = Rule(
        name="PG",
        kind="builtin",
        regexp=r"^[^:\s]+:\d+:\w+:\w+:(?P<secret>\w{8,})$",
        path=r"(?:^|/)\.pgpass$",
        secret_group="secret",
    )
    token = Rule(name="T", kind="builtin", regexp=r"tok_[a-z]+", keywords=("tok_",))
    line = "db:5432:app:me:Xk2mQ9vLr4\n"
    fragments = [
        Fragment(path="a.txt", text=line),
        Fragment(path="x/.pgpass", text=line),
        Fragment(path="b", text="tok_x"),
    ]
    found = Scanner(RuleSet(rules=(pgpass, token))).scan_batch(fragments)
    assert [(finding.path, finding.rule) for finding in found] == [("x/.pgpass", "PG"), ("b", "T")]
