"""Every built-in rule proves itself with its own true- and false-positive examples."""

from __future__ import annotations

import json
import marshal
import re
from pathlib import Path

import pytest
import regex

from spillguard.configuration import rules as rules_module
from spillguard.configuration.rules import (
    BUILTIN_FILES,
    builtin_rules,
    builtin_table,
    rule_fields,
    rule_tables,
)
from spillguard.core.errors import ConfigError
from spillguard.core.models import Fragment, Rule, RuleSet
from spillguard.detection.engine import Scanner, compiled, path_pattern, pattern_of
from testing.tokens import expand

TABLE = builtin_table()
EXAMPLES = [
    pytest.param(
        spec["name"],
        kind,
        number,
        template,
        spec.get("example_path", "example.txt"),
        spec.get("example_line", 1),
        id=f"{spec['name']}-{kind}{number}",
    )
    for spec in TABLE
    for kind in ("tp", "fp")
    for number, template in enumerate(spec.get(kind, ()))
]


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


def findings_of(
    scanner: Scanner, text: str, path: str = "example.txt"
) -> list[tuple[str, int, str]]:
    found = scanner.scan(Fragment(path=path, text=text))
    assert not scanner.errors
    return [(finding.rule, finding.line, finding.match_text) for finding in found]


@pytest.mark.parametrize(("name", "kind", "number", "template", "path", "line_number"), EXAMPLES)
def test_rule_example(
    scanner: Scanner, name: str, kind: str, number: int, template: str, path: str, line_number: int
) -> None:
    text = expand(template, f"{name}-{number}")
    found = findings_of(scanner, text, path)
    if kind == "tp":
        # The first line is this rule's, judged against every built-in rule in order.
        assert [rule for rule, line, _ in found if line == line_number] == [name], text
    else:
        assert found == [], text


def test_every_rule_compiles_and_has_its_examples() -> None:
    for spec, rule in zip(TABLE, builtin_rules(), strict=True):
        assert compiled(rule).search("") is None, rule.name
        assert spec.get("tp"), f"{rule.name} has no true-positive example"
        assert spec.get("fp"), f"{rule.name} has no false-positive example"


def test_every_pattern_a_rule_compiles_on_first_use_compiles() -> None:
    """A scan compiles a built-in rule's allow, path and line-before patterns only when
    it meets them (most never are, in a commit hook): a broken one is caught here."""
    patterns = [
        (rule.name, pattern)
        for rule in builtin_rules()
        for pattern in (*rule.allow, rule.path, rule.previous_line)
        if pattern is not None
    ]
    assert len(patterns) >= 20
    for name, pattern in patterns:
        assert isinstance(pattern_of(pattern), regex.Pattern), name


def test_at_least_150_rules_with_unique_upper_snake_case_names() -> None:
    rules = builtin_rules()
    names = [rule.name for rule in rules]
    assert len(names) >= 150
    assert len(set(names)) == len(names)
    assert all(regex.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*", name) for name in names)
    # A rule without keywords is one for files of its own path (a .pgpass holds none).
    assert all((rule.keywords or rule.path) and rule.description for rule in rules)
    assert {
        "AWS_CLIENT_ID",
        "AWS_MWS_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "GENERIC_PASSWORD",
        "RSA_PRIVATE_KEY",
        "SSH_PRIVATE_KEY",
    } <= set(names)


def test_keywords_are_lowercase_and_every_match_contains_one() -> None:
    """The prefilter is only exact when each rule's matches hold one of its keywords."""
    for spec, rule in zip(TABLE, builtin_rules(), strict=True):
        assert all(word == word.lower() for word in spec.get("keywords", ())), rule.name
        if not rule.keywords:
            continue
        for number, template in enumerate(spec.get("tp", ())):
            match = compiled(rule).search(expand(template, f"{rule.name}-{number}"))
            assert match is not None, rule.name
            assert any(word in match.group(0).lower() for word in rule.keywords), rule.name


def test_every_match_holds_one_of_the_rules_required_strings() -> None:
    """A rule is not tried on a line without one of its ``requires``: each must be in
    every match, case and all."""
    required = [rule for rule in builtin_rules() if rule.requires]
    assert {rule.name for rule in required} >= {"DIRECTIVE_SECRET", "GENERIC_CONFIG_SECRET"}
    for spec, rule in zip(TABLE, builtin_rules(), strict=True):
        if not rule.requires:
            continue
        for number, template in enumerate(spec.get("tp", ())):
            match = compiled(rule).search(expand(template, f"{rule.name}-{number}"))
            assert match is not None, rule.name
            assert any(text in match.group(0) for text in rule.requires), rule.name


def test_rules_command_lists_every_builtin_rule_in_order(capsys) -> None:
    from spillguard.cli import main

    assert main(["rules", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["rules"]
    assert [rule["name"] for rule in listed if rule["kind"] == "builtin"] == [
        rule.name for rule in builtin_rules()
    ]
    assert [rule["description"] for rule in listed if rule["kind"] == "builtin"] == [
        rule.description for rule in builtin_rules()
    ]
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # One line per rule, its description last.
    for rule in builtin_rules():
        (line,) = (line for line in lines if line.startswith(f"{rule.name} "))
        assert line.endswith(f"  {rule.description}"), line


@pytest.mark.parametrize(
    ("name", "word", "longest"),
    [("GENERIC_TOKEN", "integration_token", 60), ("GENERIC_API_KEY", "subscription_key", 60)],
)
def test_a_long_name_is_matched_from_its_start_up_to_the_rules_reach(
    scanner: Scanner, name: str, word: str, longest: int
) -> None:
    """The lookahead that lets these rules give up early must not cut a name short:
    the whole name is the match when its keyword ends it within the rule's reach."""
    value = expand("{rand:Aa0:40}", name)
    for length in (0, longest):
        line = f"{'a' * length}{word} = '{value}'"
        assert findings_of(scanner, line) == [(name, 1, line[: line.rindex("'")])]
    # One character more and the pattern cannot start at the name: no finding of this
    # rule (GENERIC_TOKEN_NEAR_WORD reads the word wherever it stands).
    too_long = findings_of(scanner, f"{'a' * (longest + 1)}{word} = '{value}'")
    assert name not in [rule for rule, _, _ in too_long]


def test_bearer_header_is_found_in_any_case_of_authorization(scanner: Scanner) -> None:
    """Its keyword is "author": (?i) takes U+0130 for an "i", which lowers to two
    characters, so a keyword spelling out "authorization" would miss this line."""
    value = expand("{rand:Aa0:40}", "bearer-case")
    for header in ("AUTHORIZATION", "Authorization", "AUTHOR\u0130ZATION"):
        line = f"{header}: Bearer {value}"
        assert findings_of(scanner, line) == [("BEARER_TOKEN_HEADER", 1, line)]


def test_rule_tables_are_checked_once_then_read_from_their_cache(tmp_path) -> None:
    """The tables a commit hook reads come from one cache of every built-in file,
    written only after they all parsed and checked; a change to any file is parsed
    and checked again."""
    here = Path(rules_module.__file__).parent
    sources = [tmp_path / name for name in BUILTIN_FILES]
    for source in sources:
        source.write_bytes((here / source.name).read_bytes())
    fresh = rule_tables(sources)
    assert fresh == TABLE
    (cache,) = (tmp_path / "__pycache__").iterdir()
    assert rule_tables(sources) == fresh  # from the cache now: prove it by altering it
    cache.write_bytes(marshal.dumps([{"name": "FROM_THE_CACHE"}]))
    assert rule_tables(sources) == [{"name": "FROM_THE_CACHE"}]
    sources[-1].write_text('[[rules]]\nname = "BROKEN"\nregexp = "x"\nweight = 3\n')
    with pytest.raises(ConfigError, match=r"generic\.toml: rule BROKEN.*weight"):
        rule_tables(sources)
    assert list((tmp_path / "__pycache__").iterdir()) == [cache]  # nothing unchecked kept


def test_scans_read_a_cache_of_the_rules_without_their_examples(tmp_path) -> None:
    """A commit hook loads the checked tables without the tp/fp examples (half the
    cache), from a cache of its own: the examples' cache is the test suite's."""
    here = Path(rules_module.__file__).parent
    sources = [tmp_path / name for name in BUILTIN_FILES]
    for source in sources:
        source.write_bytes((here / source.name).read_bytes())
    examples = ("tp", "fp", "example_path")
    bare = [{key: value for key, value in spec.items() if key not in examples} for spec in TABLE]
    assert rule_tables(sources, examples=False) == bare
    (cache,) = (tmp_path / "__pycache__").iterdir()
    assert cache.name.startswith("rules-scan.")
    assert rule_tables(sources, examples=False) == bare  # read back from that cache
    assert rule_tables(sources) == TABLE  # the examples come from their own cache
    assert len(list((tmp_path / "__pycache__").iterdir())) == 2


def test_scans_make_the_rules_from_a_cache_of_their_fields(tmp_path) -> None:
    """Every process makes every built-in rule: from fields kept beside the tables,
    the same rules as from the tables themselves; a changed file is read anew."""
    here = Path(rules_module.__file__).parent
    sources = [tmp_path / name for name in BUILTIN_FILES]
    for source in sources:
        source.write_bytes((here / source.name).read_bytes())
    fields = rule_fields(sources)
    assert tuple(Rule(**each) for each in fields) == builtin_rules()
    (cache,) = (tmp_path / "__pycache__").glob("rules-fields.*")
    cache.write_bytes(marshal.dumps([{"name": "FROM_THE_CACHE", "kind": "builtin", "regexp": "x"}]))
    assert rule_fields(sources)[0]["name"] == "FROM_THE_CACHE"
    first_file = len(rule_tables([sources[0]]))
    sources[0].write_text('[[rules]]\nname = "CHANGED"\nregexp = "x"\nkeywords = ["x"]\n')
    names = [each["name"] for each in rule_fields(sources)]
    assert names == ["CHANGED", *(each["name"] for each in fields[first_file:])]


def test_builtin_files_are_judged_specific_first_generic_last() -> None:
    """A line is reported under the first rule that matches it: every rule that
    judges a value by its name comes after every rule of a recognisable shape."""
    names = [spec["name"] for spec in TABLE]
    first_generic = names.index("GENERIC_PASSWORD")
    assert all(
        name.startswith(("GENERIC_", "URL_QUERY", "DIRECTIVE")) for name in names[first_generic:]
    )


def test_a_rule_with_a_path_speaks_only_in_files_of_that_path(scanner: Scanner) -> None:
    """A .pgpass line, an htpasswd hash or a bare Rails master key is a credential in its
    own file only: the same line elsewhere (a test fixture, a README) is not reported."""
    for spec in TABLE:
        if "path" not in spec:
            continue
        assert "example_path" in spec, spec["name"]
        # A path that leaves files out (GENERIC_TOKEN_NEAR_WORD's files of digests)
        # speaks everywhere else.
        elsewhere = "pkg-1.0.dist-info/RECORD" if spec["path"].startswith("^(?!") else "docs/x.txt"
        for number, template in enumerate(spec["tp"]):
            text = expand(template, f"{spec['name']}-{number}")
            assert findings_of(scanner, text, spec["example_path"]), text
            assert findings_of(scanner, text, elsewhere) == [], text


def test_a_rule_reading_the_line_before_judges_each_occurrence_anew(scanner: Scanner) -> None:
    """A line judged clean once is remembered as clean, but not for a rule that reads
    the line before: the same value line under a secret's name is a finding."""
    value = expand('          value: "{rand:Aa0:40}"', "k8s-env")
    assert findings_of(scanner, f"        - name: LOG_LEVEL\n{value}\n") == []
    found = findings_of(scanner, f"        - name: API_TOKEN\n{value}\n")
    assert [(rule, line) for rule, line, _ in found] == [("NAME_VALUE_SECRET_NEXT_LINE", 2)]


def test_explain_says_a_token_with_a_wrong_checksum_is_not_reported(capsys) -> None:
    """``rules --explain`` names each rule that matches the text and why it does not
    report it; a GitHub token whose CRC32 fails is made up, and says so. The text
    itself is never printed."""
    from spillguard.cli import main

    made_up = expand("GITHUB_TOKEN=ghp_{rand:Aa0:36}", "explain")
    assert main(["rules", "--explain", made_up]) == 0
    out = capsys.readouterr().out
    assert "GITHUB_PAT: not reported: its checksum fails" in out, out
    assert "reported\n" not in out.replace("not reported", "")
    assert made_up.split("=")[1] not in out
    real = expand("GITHUB_TOKEN=ghp_{rand:Aa0:30}{crc32}", "explain")
    assert main(["rules", "--explain", real, "--format", "json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)["explain"]
    assert {"rule": "GITHUB_PAT", "reported": True, "reason": None} in verdicts


def test_explain_says_when_no_rule_matches(capsys) -> None:
    from spillguard.cli import main

    assert main(["rules", "--explain", "def add(a, b): return a + b"]) == 0
    assert capsys.readouterr().out == "no rule matches this text\n"


#: Paths the built-in rules' ``path`` patterns are asked about: their own kinds of
#: file, their near misses, and ordinary files, in folders, cased otherwise, unicode.
SAMPLE_PATHS = [
    *(spec["example_path"] for spec in TABLE if "example_path" in spec),
    *("x.py", "README", "src/app/settings.py", "Ünïcode/dir/file.txt", ".env", "a b/c d"),
    *(".pgpass", "home/u/.pgpass", "pgpass", "my.pgpass", ".pgpass.bak", "PGPASS"),
    *(".htpasswd", "etc/.htpasswd-admin", "htpasswd.old", "x.htpasswd", ".htpasswd/x"),
    *("config/master.key", "app/config/credentials/production.key", "master.key"),
    *("config/credentials/a b.key", "config/master.key.bak", "CONFIG/master.key"),
    *("db/dump.sql", "x.SQL", "backup/seed_data.json", "db_dump", "notes/dumpling/x"),
    *("RECORD", "pkg-1.0.dist-info/RECORD", "Cargo.lock", "yarn.lock", "go.sum"),
    *("package-lock.json", "pnpm-lock.yaml", "SHA256SUMS", "x/SHA256SUMS.asc"),
    *("checksums.txt", "release.sha256", "a.md5", "k.pem", "k.crt", "id.pub", "s.sig"),
    *("lockfile.py", "go.summary", "record", "x.lock.txt", "a.sha256.py"),
]


@pytest.mark.parametrize(
    "path", sorted({spec["path"] for spec in TABLE if "path" in spec}), ids=lambda p: p[:40]
)
def test_every_path_pattern_reads_alike_in_re_and_regex(path: str) -> None:
    """A built-in rule's ``path`` is judged by the standard library's ``re`` (a commit
    hook need not import regex for every file's path): it must read it as regex does."""
    ours = path_pattern(path)
    assert isinstance(ours, re.Pattern)
    theirs = regex.compile(path)
    for sample in SAMPLE_PATHS:
        found, expected = ours.search(sample), theirs.search(sample)
        assert (found and found.span()) == (expected and expected.span()), sample
