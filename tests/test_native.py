"""The Vectorscan prefilter: the same findings as the engine without it, over the rules'
own examples, the recall corpora and random text; its database cached, never trusted,
and loaded or built only where the scan ahead is large enough to pay for it."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import string
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.configuration.rules import builtin_rules, builtin_table
from spillguard.core.models import Fragment, Rule, RuleSet
from spillguard.detection import native
from spillguard.detection.engine import LOOKAHEAD_CHARS, Scanner, compiled
from spillguard.scanning.run import native_matcher
from testing.estate import START, Commit, new_bare, write_commits
from testing.gitrepo import GitRepo
from testing.recall.families import FAMILIES
from testing.recall.independent import independent_corpus
from testing.recall.wild import wild_corpus
from testing.tokens import expand

if TYPE_CHECKING:
    from spillguard.detection.native import NativeMatcher

pytest.importorskip("hyperscan", reason="the vectorscan extra (a wheel per platform)")

RULES = builtin_rules()


@pytest.fixture(scope="module")
def matcher() -> NativeMatcher:
    """The built-in catalogue's database, as a history scan makes it (built once in the
    session's cache; later scans of the suite load it)."""
    made = native_matcher(environ={**os.environ, "SPILLGUARD_NATIVE": "1"})
    assert made is not None
    return made


def _random_lines(rng: random.Random, count: int) -> list[str]:
    """Lines a history holds around keywords: assignments of tokens to names that hold
    a keyword (spaced with blanks and tabs, quoted or not), and loose pieces."""
    keywords = sorted({keyword for rule in RULES for keyword in rule.keywords})
    alphabets = [string.ascii_letters + string.digits, string.hexdigits, string.printable[:94]]
    operators = ["=", ":", ":=", "=>", "?=", ",", " to", "=="]
    blanks = ["", " ", "\t", "  ", " \t"]
    quotes = ["", '"', "'", "`"]
    lines = []
    for _ in range(count):
        word = rng.choice(keywords)
        name = rng.choice([word, word.upper(), f"my_{word}", f"{word.upper()}_KEY", f"x.{word}"])
        token = "".join(rng.choices(rng.choice(alphabets), k=rng.randint(4, 60)))
        if rng.random() < 0.6:
            quote = rng.choice(quotes)
            lines.append(
                f"{rng.choice(blanks)}{name}{rng.choice(blanks)}{rng.choice(operators)}"
                f"{rng.choice(blanks)}{quote}{token}{quote}{rng.choice(['', ';', ',', ')'])}"
            )
        else:
            pieces = [name, rng.choice(operators), token, *rng.choices(blanks + quotes, k=3)]
            rng.shuffle(pieces)
            lines.append("".join(pieces))
    return lines


@pytest.fixture(scope="module")
def corpus() -> list[Fragment]:
    """Every rule's examples at its path, the recall corpora (a seeded sample of the two
    large ones), random text."""
    fragments = [
        Fragment(path=spec.get("example_path", "example.txt"), text=expand(template, index))
        for index, spec in enumerate(builtin_table())
        for kind in ("tp", "fp")
        for template in spec.get(kind, ())
    ]
    rng = random.Random(31)  # noqa: S311 - a reproducible corpus, not a secret
    cases = [case for family in FAMILIES.values() for case in family("native")]
    cases += rng.sample(independent_corpus("native"), 1200) + rng.sample(
        wild_corpus("native"), 1200
    )
    fragments += [Fragment(path=case.path, text=case.text) for case in cases]
    lines = _random_lines(rng, 1500)
    paths = ["a.py", ".env", "c.yaml"]
    fragments += [
        Fragment(path=paths[start % 3], text="\n".join(lines[start : start + 30]))
        for start in range(0, len(lines), 30)
    ]
    return fragments


def test_every_rule_the_keywords_send_a_line_to_and_that_matches_there_is_kept(
    matcher: NativeMatcher, corpus: list[Fragment]
) -> None:
    """Each (line, rule) pair the engine would try, in ASCII lines: where the rule's own
    expression matches on the line, the native prefilter keeps the rule."""
    scanner = Scanner(RuleSet(rules=RULES))
    patterns = matcher.patterns_of(scanner.rules)
    tried = kept = 0
    for fragment in corpus:
        for line, rules in scanner._candidates(fragment.text, fragment.path, None):
            if not line.text.isascii():
                continue
            for index in rules:
                tried += 1
                if _matches_on_line(scanner.rules[index], line.whole, line.start, line.end):
                    kept += 1
                    assert matcher.possible(line.text, [index], patterns) == [index], (
                        scanner.rules[index].name,
                        line.text,
                    )
    assert kept > 1000, (tried, kept)  # the corpus reaches the rules


def _matches_on_line(rule: Rule, whole: str, start: int, end: int) -> bool:
    """Whether the rule's expression has a non-empty match lying on the line, as the
    engine searches it (a rule that looks ahead sees past the line)."""
    subject = whole[start : end + LOOKAHEAD_CHARS] if rule.lookahead else whole[start:end]
    return any(
        match.group() and match.end() <= end - start for match in compiled(rule).finditer(subject)
    )


def test_the_same_findings_with_and_without_the_native_prefilter(
    matcher: NativeMatcher, corpus: list[Fragment]
) -> None:
    """Twice over: the second time each line's answer is one the matcher remembers
    (a history adds the same lines again and again)."""
    plain = Scanner(RuleSet(rules=RULES))
    fast = Scanner(RuleSet(rules=RULES), native=matcher)
    batches = [corpus[start : start + 512] for start in range(0, len(corpus), 512)] * 2
    found = [plain.scan_batch(batch) for batch in batches]
    assert [fast.scan_batch(batch) for batch in batches] == found
    assert sum(map(len, found)) > 2000
    assert fast.silenced == plain.silenced


def test_lines_outside_ascii_and_rules_without_a_loosening_take_the_usual_path(
    tmp_path: Path,
) -> None:
    """The prefilter speaks only of ASCII lines and of rules it has a pattern for."""
    rules = (
        Rule(name="UNLOOSENED", kind="builtin", regexp=r"\p{Lu}{3}_[0-9a-f]{8}", keywords=("_",)),
        Rule(name="TOKEN", kind="builtin", regexp=r"tok_[0-9a-f]{8}", keywords=("tok_",)),
    )
    made = native.matcher([(rule.regexp, rule.flags) for rule in rules], tmp_path, saving=math.inf)
    assert made is not None
    assert made.patterns_of(rules)[0] == native.NO_PATTERN
    text = "ABC_0123abcd\nvoilà tok_0123abcd\ntok_0123abcd"
    plain = Scanner(RuleSet(rules=rules)).scan(Fragment(path="a", text=text))
    assert [finding.line for finding in plain] == [1, 2, 3]
    assert Scanner(RuleSet(rules=rules), native=made).scan(Fragment(path="a", text=text)) == plain


SMALL = [("ghp_[A-Za-z0-9]{36}", 0), (r"(?i)password\s*=\s*\S{8,}", 0), ("x*", 0)]


def _fresh(cache: Path) -> NativeMatcher:
    """A matcher made as a new process makes it (the per-process memo bypassed)."""
    made = native.make(tuple(SMALL), cache)
    assert made is not None
    return made


def _works(made: NativeMatcher) -> None:
    rules = [Rule(name=f"R{index}", kind="builtin", regexp=regexp) for index, (regexp, _) in
             enumerate(SMALL)]  # fmt: skip
    patterns = made.patterns_of(rules)
    # x* matches the empty line: Vectorscan refuses it, and its rule is always kept.
    assert patterns[2] == native.NO_PATTERN
    assignment = f"pass{'word'} = {expand('{rand:Aa0:14}', 'small')}"
    assert made.possible(assignment, [0, 1, 2], patterns) == [1, 2]
    assert made.possible("ghp_" + "a" * 36, [0, 1, 2], patterns) == [0, 2]


def test_one_matcher_answers_every_thread_that_scans_with_it_at_once(tmp_path: Path) -> None:
    """A process's matcher is shared by its threads: a Dask worker audits several
    repositories at once. Vectorscan allows one scan at a time in a scratch space; with
    one for all, a scan that met another raised ScratchInUseError, and the audit showed
    its repository as unreadable, at random (tests/test_audit.py's estate on Dask, 386
    commits judged instead of 393)."""
    made = _fresh(tmp_path)
    rules = [Rule(name=f"R{index}", kind="builtin", regexp=regexp) for index, (regexp, _) in
             enumerate(SMALL)]  # fmt: skip
    patterns = made.patterns_of(rules)
    line = f"password = {expand('{rand:Aa0:14}', 'threads')} ghp_{'a' * 36} " * 2_000
    threads = 8
    start = threading.Barrier(threads)
    answers: list[list[int]] = []
    failures: list[str] = []

    def scan() -> None:
        start.wait()
        try:
            answers.extend(made.possible(line, [0, 1, 2], patterns) for _ in range(50))
        except Exception as error:  # noqa: BLE001 - what a worker thread would meet
            failures.append(type(error).__name__)

    workers = [threading.Thread(target=scan) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert failures == []
    assert answers == [[0, 1, 2]] * (threads * 50)


def test_the_database_is_kept_and_loaded_from_the_users_cache(tmp_path: Path) -> None:
    _works(_fresh(tmp_path))
    (kept,) = tmp_path.iterdir()
    assert kept.suffix == ".hsdb"
    before = kept.stat()
    os.utime(kept, (1_000_000, 1_000_000))
    _works(_fresh(tmp_path))
    # Loaded, not built and written again; marked as used.
    assert kept.stat().st_ino == before.st_ino
    assert kept.stat().st_mtime > 1_000_000


@pytest.mark.parametrize(
    "damage",
    ["flipped byte", "truncated", "empty", "other rules' key", "unloadable"],
)
def test_a_damaged_database_is_rebuilt_never_trusted(tmp_path: Path, damage: str) -> None:
    _fresh(tmp_path)
    (kept,) = tmp_path.iterdir()
    data = bytearray(kept.read_bytes())
    if damage == "flipped byte":
        data[-100] ^= 0x40
    elif damage == "truncated":
        del data[len(data) // 2 :]
    elif damage == "empty":
        data.clear()
    elif damage == "other rules' key":
        data[30] ^= 1
    else:
        # A digest that checks out over a body Vectorscan cannot load.
        header = len(native._FORMAT) + native._DIGEST
        body = bytes(data[header + native._DIGEST : header + native._DIGEST + 4 * 4]) + b"junk"
        data[header:] = native.hashlib.sha256(body).digest() + body
    kept.write_bytes(bytes(data))
    _works(_fresh(tmp_path))
    assert kept.read_bytes() != bytes(data)  # written again, whole
    _works(_fresh(tmp_path))


def test_a_cache_that_cannot_be_written_costs_nothing_but_the_build(tmp_path: Path) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder would go")
    _works(_fresh(blocked))
    assert blocked.read_text() == "a file where the folder would go"
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache"]


def test_only_the_newest_databases_are_kept(tmp_path: Path) -> None:
    for age in range(native._KEPT + 3):
        old = tmp_path / f"{age:032x}.hsdb"
        old.write_bytes(b"old")
        os.utime(old, (1_000_000 + age, 1_000_000 + age))
    _fresh(tmp_path)
    left = sorted(entry.name for entry in tmp_path.iterdir())
    assert len(left) == native._KEPT
    assert f"{0:032x}.hsdb" not in left
    assert not [name for name in left if name.endswith(".tmp")]


def test_a_history_scan_reports_the_same_with_and_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the command line, on two workers: the tp examples of a few hundred rules
    committed over a history (one file per commit, a few lines outside ASCII)."""
    repo = GitRepo(tmp_path / "repo")
    table = builtin_table()
    for number in range(0, len(table), 40):
        lines = [
            expand(template, f"{spec['name']}-{number}")
            for spec in table[number : number + 40]
            for template in spec.get("tp", ())[:1]
        ]
        repo.write(f"config{number % 5}.env", "\n".join(["# café", *lines]) + "\n")
        repo.commit(f"commit {number}")
    reports = []
    for value in ("1", "0"):
        monkeypatch.setenv("SPILLGUARD_NATIVE", value)
        assert main(["scan", "--repo", str(repo.path), "--jobs", "2", "--format", "json"]) == 1
        report = json.loads(capsys.readouterr().out)
        del report["summary"]["seconds"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert len(reports[0]["findings"]) > 15


def test_it_is_loaded_or_built_only_where_the_saving_pays_for_it(tmp_path: Path) -> None:
    nothing = native.matcher(SMALL, tmp_path / "a", saving=native.LOAD_SECONDS / 2)
    assert nothing is None
    assert not (tmp_path / "a").exists()
    assert native.matcher(SMALL, tmp_path / "a", saving=native.BUILD_SECONDS / 2) is None
    assert not (tmp_path / "a").exists()  # worth loading, not building
    built = native.matcher(SMALL, tmp_path / "a", saving=native.BUILD_SECONDS)
    assert built is not None
    assert len(list((tmp_path / "a").glob("*.hsdb"))) == 1
    # Made once per process, then shared whatever the next scan's size.
    assert native.matcher(SMALL, tmp_path / "a", saving=0) is built
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    loaded = native.matcher(SMALL, tmp_path / "b", saving=native.LOAD_SECONDS)
    assert loaded is not None
    _works(loaded)


def _history(path: Path, commits: int) -> Path:
    new_bare(path)
    write_commits(
        path,
        [
            Commit("main", f"src/m{n % 9}.py", f"VALUE_{n} = {n}\n", START + n)
            for n in range(commits)
        ],
    )
    return path


def test_a_small_scan_on_a_fresh_cache_builds_nothing_and_a_large_one_uses_the_kept_one(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    matcher: NativeMatcher,
) -> None:
    """A one-commit scan once took 30 s on a fresh cache, building the database; a
    history large enough loads the kept database (marked as used: pruning keeps it)."""
    (session_kept,) = native.cache_dir().glob("*.hsdb")  # the fixture's, built-in rules
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    small = _history(tmp_path / "small.git", 3)
    large = _history(tmp_path / "large.git", 300)
    cache = native.cache_dir()
    for scan in (["--all"], ["--tree", "HEAD"], ["--files", str(small)]):
        assert main(["scan", "--repo", str(small), *scan, "--jobs", "1", "--quiet"]) == 0
    assert not cache.exists()
    cache.mkdir(parents=True)
    kept = Path(shutil.copy(session_kept, cache))
    os.utime(kept, (1_000_000, 1_000_000))
    assert main(["scan", "--repo", str(small), "--all", "--jobs", "1", "--quiet"]) == 0
    assert kept.stat().st_mtime == 1_000_000  # not even loaded
    assert main(["scan", "--repo", str(large), "--all", "--jobs", "1", "--quiet"]) == 0
    assert kept.stat().st_mtime > 1_000_000
    assert list(cache.iterdir()) == [kept]
    capsys.readouterr()
