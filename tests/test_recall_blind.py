"""The blind corpus (testing/recall/blind.py), written by people who did not write the
rules: recall on the long tail stays at least what it is, and no more of its hard
near-misses or documented examples are reported than today.

The floors are today's measurement (seed "test") less a few points, so a regression
in any detector's reach shows; raise them as recall rises (bench/recall.py --blind).
"""

from __future__ import annotations

import collections

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from testing.recall.blind import DOCUMENTED_FAMILY, MARK, blind_corpus
from testing.recall.families import Case

#: Measured 446/547 (81.5 %) of the secrets found at efcf0a7, 477/547 (87.2 %) with
#: the positional and command-line detectors, 487/547 (89.0 %) with random UUIDs and
#: the credential words (384ad75); 4/209 near-misses flagged, then 3/209.
RECALL_FLOOR = 0.87
NEAR_MISSES_FLAGGED_AT_MOST = 3


@pytest.fixture(scope="module")
def judged() -> list[tuple[Case, bool]]:
    """Each case and whether the built-in rules spoke (on its line, for a secret)."""
    scanner = Scanner(RuleSet(rules=builtin_rules()))
    result = []
    for case in blind_corpus("test"):
        findings = scanner.scan(Fragment(path=case.path, text=case.text))
        lines = {finding.line for finding in findings}
        result.append((case, bool(lines) if case.line is None else case.line in lines))
    return result


def test_recall_on_the_long_tail_does_not_fall(judged: list[tuple[Case, bool]]) -> None:
    verdicts = [spoke for case, spoke in judged if case.line is not None]
    assert sum(verdicts) >= RECALL_FLOOR * len(verdicts), (sum(verdicts), len(verdicts))


def test_near_misses_and_documented_examples_stay_silent(judged: list[tuple[Case, bool]]) -> None:
    flagged = [case.label for case, spoke in judged if case.line is None and spoke]
    documented = [
        case.label for case, spoke in judged if case.family == DOCUMENTED_FAMILY and spoke
    ]
    assert documented == []
    assert len(flagged) <= NEAR_MISSES_FLAGGED_AT_MOST, flagged


def test_the_corpus_is_the_long_tail_it_claims_to_be() -> None:
    """Hundreds of secrets over many families, ~200 near-misses, every value generated
    (no template left in a file) and the same files for the same seed."""
    cases = blind_corpus("shape")
    positives = [case for case in cases if case.line is not None]
    families = collections.Counter(case.family for case in positives)
    assert len(positives) >= 500
    assert len(families) >= 60
    assert len(cases) - len(positives) >= 200
    for case in cases:
        for template in ("{rand:", "{human}", "{uuid}", "{lit:", MARK):
            assert template not in case.text, case.label
        assert case.line is None or 1 <= case.line <= case.text.count("\n") + 1, case.label
    assert [case.text for case in blind_corpus("shape")] == [case.text for case in cases]
    assert [case.text for case in blind_corpus("other")] != [case.text for case in cases]
