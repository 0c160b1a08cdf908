"""Recall and near-misses flagged, per family, on a generated corpus of realistic files.

    python bench/recall.py [--independent | --wild | --longtail | --blind] [--seed S]
                           [--show-misses] [--family TEXT] [--each-family]

The corpus (testing/recall/) holds, for each family, secrets in files of many
formats and code styles and hard near-misses beside them (placeholders, environment
references, hashes, UUIDs, lockfile integrity, test fixtures, documented examples).
The built-in rules judge each file as a whole (as ``spillguard scan`` judges a
file): a secret is found when some finding is on its line; a near-miss is flagged
when its file has any finding at all.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the testing/ helpers

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from testing.recall.blind import blind_corpus
from testing.recall.families import FAMILIES, Case
from testing.recall.independent import independent_corpus
from testing.recall.longtail import longtail_corpus
from testing.recall.providers import provider_cases
from testing.recall.wild import UNPREFIXED, wild_corpus

PROVIDERS = "providers (every rule's tp examples)"


def corpus(seed: str) -> list[Case]:
    cases = [case for family in FAMILIES.values() for case in family(seed)]
    return cases + list(provider_cases(seed))


def judge(scanner: Scanner, case: Case) -> tuple[bool, list[str]]:
    """Whether the case went right (found, or not flagged), and the rules that spoke."""
    findings = scanner.scan(Fragment(path=case.path, text=case.text))
    if case.line is None:
        return not findings, [finding.rule for finding in findings]
    hits = [finding.rule for finding in findings if finding.line == case.line]
    return bool(hits), hits


_BY_NAME = {f"wild:{name}" for name, *_ in UNPREFIXED}


def _row_name(case: Case, *, each_family: bool) -> str:
    if case.family.startswith("wild:") and not each_family:
        return "wild services, by name" if case.family in _BY_NAME else "wild services, prefixed"
    if each_family:
        return case.family
    return PROVIDERS if case.family.endswith(".toml") or ".toml:" in case.family else case.family


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="1")
    parser.add_argument("--show-misses", action="store_true", help="list every miss and flag")
    parser.add_argument("--family", default="", help="only families whose name holds this")
    parser.add_argument(
        "--independent",
        action="store_true",
        help="the corpus written from providers' public formats, not from the rules' examples",
    )
    parser.add_argument(
        "--wild",
        action="store_true",
        help="the adversarial corpus: secrets as people leak them, hard near-misses beside them",
    )
    parser.add_argument(
        "--longtail",
        action="store_true",
        help="the long tail: services no rule names, positional credentials, dumps, webhooks",
    )
    parser.add_argument(
        "--blind",
        action="store_true",
        help="the corpus written by people who did not write the rules (testing/recall/blind.py)",
    )
    parser.add_argument(
        "--each-family",
        action="store_true",
        help="a row for each provider family (rule file and section), not one for all",
    )
    args = parser.parse_args(argv)
    scanner = Scanner(RuleSet(rules=builtin_rules()))
    totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    if args.blind:
        cases = blind_corpus(args.seed)
    elif args.longtail:
        cases = list(longtail_corpus(args.seed))
    elif args.wild:
        cases = wild_corpus(args.seed)
    else:
        cases = independent_corpus(args.seed) if args.independent else corpus(args.seed)
    for case in cases:
        if args.family not in case.family:
            continue
        right, rules = judge(scanner, case)
        row = totals[_row_name(case, each_family=args.each_family or args.independent)]
        row[0 if case.line is not None else 2] += 1
        if case.line is not None and right:
            row[1] += 1
        if case.line is None and not right:
            row[3] += 1
        if args.show_misses and not right:
            kind = "MISSED " if case.line is not None else "FLAGGED"
            print(f"{kind} [{case.family}] {case.label}  {' '.join(rules)}")
    _print(totals)
    return 0


def _print(totals: dict[str, list[int]]) -> None:
    width = max(len(name) for name in [*totals, "overall, structural families"])
    print(f"{'family':<{width}}  {'recall':>15}  {'near-misses flagged':>20}")
    structural = [0, 0, 0, 0]
    everything = [0, 0, 0, 0]
    for name, row in totals.items():
        print(_row(name, row, width))
        for index, value in enumerate(row):
            everything[index] += value
            if name != PROVIDERS and ".toml" not in name:
                structural[index] += value
    print(_row("overall, structural families", structural, width))
    print(_row("overall", everything, width))


def _row(name: str, row: list[int], width: int) -> str:
    positives, found, nears, flagged = row
    recall = f"{found}/{positives} {found / positives:5.1%}" if positives else "-"
    flags = f"{flagged}/{nears} {flagged / nears:5.1%}" if nears else "-"
    return f"{name:<{width}}  {recall:>15}  {flags:>20}"


if __name__ == "__main__":
    raise SystemExit(main())
