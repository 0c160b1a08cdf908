"""Compiled rule patterns kept in the user's cache (``detection.compiled``).

A pattern made from its kept file must be the pattern regex compiles: every built-in
rule, on its own examples and near misses; and a file that is torn, foreign, of
another pattern or in a folder others may write is never used. Real processes share
the cache: a second scan makes its patterns from the files the first one wrote.
"""

from __future__ import annotations

import binascii
import concurrent.futures
import copyreg
import json
import marshal
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import regex

from spillguard.configuration.rules import builtin_rules, builtin_sources, rule_tables
from spillguard.detection.compiled import compile_kept, folder_in, recalled, remember
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

    from testing.gitrepo import GitRepo

KEY = expand("AKIA{rand:A2:16}", "compiled-cache")


def same(made: regex.Pattern[str], compiled: regex.Pattern[str], text: str) -> bool:
    found = [(m.span(), m.groupdict()) for m in made.finditer(text, timeout=5)]
    return found == [(m.span(), m.groupdict()) for m in compiled.finditer(text, timeout=5)]


def test_every_built_in_rule_made_from_its_file_finds_what_regex_compiles(
    tmp_path: Path,
) -> None:
    """Each rule compiled once (its file written), then made from the file: the same
    pattern, flags and groups, and the same matches on the rule's true and false
    positives, expanded."""
    folder = tmp_path / "regex"
    examples = {table["name"]: table for table in rule_tables(builtin_sources(), examples=True)}
    differ = []
    for rule in builtin_rules():
        compiled = regex.compile(rule.regexp, rule.flags)
        compile_kept(rule.regexp, rule.flags, folder)
        made = compile_kept(rule.regexp, rule.flags, folder)
        assert made is not compiled
        shape = (made.pattern, made.flags, made.groups, made.groupindex)
        if shape != (compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex):
            differ.append(rule.name)
        table = examples[rule.name]
        texts = [expand(text, rule.name) for text in [*table["tp"], *table["fp"]]]
        differ += [f"{rule.name}: {text!r}" for text in texts if not same(made, compiled, text)]
    assert differ == []
    assert len(list(folder.iterdir())) >= len({(r.regexp, r.flags) for r in builtin_rules()}) - 10


def kept(pattern: str, flags: int, arguments: object) -> bytes:
    """A file as ``compiled`` writes it: a CRC-32 of the rest, then the data."""
    body = marshal.dumps(((pattern, flags), arguments))
    return binascii.crc32(body).to_bytes(4, "little") + body


@pytest.mark.parametrize(
    "written",
    [
        b"",  # torn: nothing written yet
        b"\x00garbage",
        kept("another pattern", 0, ()),
        # a code changed after it was written: its checksum is the old one's
        kept("k[ae]y", 0, ("k[ae]y", 0, [1, 2, 3], {}, {}, {}, [], 0, None, 0, 0))[:-3] + b"N0N",
        kept("k[ae]y", 0, "not the engine's arguments"),
        kept("k[ae]y", 0, (compile("1", "f", "eval"),)),  # a code object is never run
    ],
)
def test_a_file_that_is_not_the_patterns_own_is_compiled_again(
    tmp_path: Path, written: bytes
) -> None:
    folder = tmp_path / "regex"
    compile_kept("k[ae]y", 0, folder)
    (path,) = folder.iterdir()
    path.write_bytes(written)
    made = compile_kept("k[ae]y", 0, folder)
    assert [m.group() for m in made.finditer("key kay koy")] == ["key", "kay"]


@pytest.mark.parametrize(("mode", "used"), [(0o700, True), (0o777, False), (0o755, True)])
def test_only_a_folder_no_one_else_may_write_is_read(
    tmp_path: Path, mode: int, *, used: bool
) -> None:
    """A file that makes another pattern's code under this pattern's name (what a
    hostile user of a shared cache would plant): made from, and so matching digits,
    where the folder is private; compiled, and matching letters, where others may
    write in it."""
    folder = tmp_path / f"regex-{mode:o}"
    compile_kept("tok_[a-z]{4}", 0, folder)
    (path,) = folder.iterdir()
    planted = regex.compile("tok_[0-9]{4}")
    _, arguments = copyreg.dispatch_table[type(planted)](planted)
    path.write_bytes(kept("tok_[a-z]{4}", 0, ("tok_[a-z]{4}", *arguments[1:])))
    folder.chmod(mode)
    made = compile_kept("tok_[a-z]{4}", 0, folder)
    assert made.pattern == "tok_[a-z]{4}"
    assert [m.group() for m in made.finditer("tok_abcd tok_1234")] == (
        ["tok_1234"] if used else ["tok_abcd"]
    )


def scan(repo: Path, env: dict[str, str]) -> tuple[int, dict[str, object]]:
    """``spillguard scan --files`` in a new process; its exit code, and its report with
    how many patterns regex itself compiled in it."""
    report = repo.with_name("report.json")  # outside: not scanned the next time
    code = (
        "import sys, json, regex._main as compiler\n"
        "from spillguard.cli import main\n"
        f"code = main(['scan', '--files', '.', '--format', 'json', '--output', {str(report)!r}])\n"
        "print(json.dumps({'code': code, 'compiled': len(compiler._cache)}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    said = json.loads(completed.stdout.splitlines()[-1])
    return said["code"], {**json.loads(report.read_text()), **said}


def test_a_second_process_makes_its_patterns_from_the_files_the_first_wrote(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "settings.py").write_text(f"aws_access_key_id = '{KEY}'\napi_token = 'x'\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    first_code, first = scan(repo, env)
    folder = folder_in(env)
    assert folder is not None
    written = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    second_code, second = scan(repo, env)
    assert first_code == second_code == 1
    assert first["findings"] == second["findings"]
    assert written, "the first scan kept what it compiled"
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == written
    assert first["compiled"] > 0
    assert second["compiled"] < first["compiled"]  # regex compiled none of the kept rules


def test_none_are_kept_when_the_user_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.env").write_text(f"AWS_ID={KEY}\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "SPILLGUARD_REGEX_CACHE": "0"}
    code, report = scan(repo, env)
    assert code == 1
    assert "AWS_CLIENT_ID" in json.dumps(report["findings"])
    assert not (cache / "spillguard" / "regex").exists()


def hook_twice(repo: GitRepo, env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    """``spillguard hook pre-commit`` in two new processes, each printing which of the
    custom rules' checkers it imported, then its exit code."""
    code = (
        "import sys\nfrom spillguard.cli import main\ncode = main(['hook', 'pre-commit'])\n"
        "print(*sorted({'spillguard.detection.javaregex', 'regex._regex_core'}"
        " & sys.modules.keys()), code)"
    )
    return [
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for _ in range(2)
    ]


def test_a_commit_hook_with_its_patterns_kept_never_imports_regexs_compiler(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The second pre-commit of a staged key makes its patterns from the files the first
    kept, with regex's C module alone: regex's compiler (4,000 lines of Python) is not
    imported, and the finding is the same."""
    repo.write("settings.py", f"aws_access_key_id = '{KEY}'\n")
    repo.git("add", "settings.py")
    runs = hook_twice(repo, {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert [run.stdout.split() for run in runs] == [["regex._regex_core", "1"], ["1"]]
    found = [[line for line in run.stderr.splitlines() if "AWS_CLIENT_ID" in line] for run in runs]
    assert found[0]
    assert found[0] == found[1]


def test_a_custom_rule_found_sound_is_not_translated_or_probed_again(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The next process makes a sound custom rule from what the first remembered: no
    Java translator, no regex compiler, no probes; the finding is the same."""
    repo.write(".spillguard.toml", "[custom_rules]\nINTERNAL_TOKEN = 'itk_[a-z0-9]{24}'\n")
    repo.write("app.py", f"print('{expand('itk_{rand:a0:24}', 'custom-kept')}')\n")
    repo.git("add", ".")
    runs = hook_twice(repo, {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert [run.stdout.split() for run in runs] == [
        ["regex._regex_core", "spillguard.detection.javaregex", "1"],
        ["1"],
    ]
    found = [[line for line in run.stderr.splitlines() if "INTERNAL_TOKEN" in line] for run in runs]
    assert found[0], runs[0].stderr
    assert found[0] == found[1]


def test_a_custom_rule_refused_is_refused_again_with_its_reason(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write(".spillguard.toml", "[custom_rules]\nSLOW = '(a+)+$'\n")
    repo.git("add", ".")
    runs = hook_twice(repo, {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    for run in runs:
        assert run.stdout.split()[-1] == "2"
        assert "custom rule SLOW: regexp backtracks catastrophically" in run.stderr


def test_a_verdict_in_a_folder_others_may_write_is_not_recalled(tmp_path: Path) -> None:
    key = ("custom rule", "itk_[a-z]{4}", "checker")
    for mode, recalls in ((0o700, ("itk_[a-z]{4}", 256)), (0o777, None)):
        folder = tmp_path / f"v-{mode:o}"
        remember(key, ("itk_[a-z]{4}", 256), folder)
        folder.chmod(mode)
        assert recalled(key, folder) == recalls
    assert recalled(("custom rule", "itk_[a-z]{4}", "other checker"), tmp_path / "v-700") is None


def test_a_cache_that_cannot_be_written_still_scans(tmp_path: Path) -> None:
    """A server's git user whose cache cannot be made (here a file where the folder
    would go, which stops root too): nothing is kept, every pattern is compiled, and
    the scan finds the same each time."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.env").write_text(f"AWS_ID={KEY}\n")
    cache = tmp_path / "a-file"
    cache.write_text("")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    runs = [scan(repo, env) for _ in range(2)]
    assert [code for code, _ in runs] == [1, 1]
    assert runs[0][1]["findings"] == runs[1][1]["findings"]
    assert "AWS_CLIENT_ID" in json.dumps(runs[0][1]["findings"])
    assert runs[1][1]["compiled"] == runs[0][1]["compiled"]  # none made from a file
    assert cache.read_text() == ""


def test_threads_that_compile_into_one_new_folder_at_once_agree(tmp_path: Path) -> None:
    """Four threads compile the built-in rules into one folder that none has made yet
    (an audit judges repositories on threads): every pattern is regex's own, and every
    file kept is whole and makes the same pattern."""
    folder = tmp_path / "regex" / "new"
    rules = [(rule.regexp, rule.flags) for rule in builtin_rules()[:200]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda _: [compile_kept(*rule, folder) for rule in rules], range(4))
        )
    expected = [regex.compile(*rule) for rule in rules]
    for made in results:
        assert [(p.pattern, p.flags, p.groupindex) for p in made] == [
            (p.pattern, p.flags, p.groupindex) for p in expected
        ]
    again = [compile_kept(*rule, folder) for rule in rules]
    assert [p.pattern for p in again] == [p.pattern for p in expected]
    assert not [path for path in folder.iterdir() if path.name.startswith(".")]  # no partials


def test_a_pattern_made_from_its_file_pickles_as_regexs_own(tmp_path: Path) -> None:
    """In a process that never imported regex (every pattern kept), a pattern still
    pickles and unpickles as one regex compiled: a worker or a cluster may be sent it."""
    folder = tmp_path / "regex"
    compile_kept("tok_(?P<secret>[a-z]{4})", 0, folder)
    code = (
        "import pickle, sys\n"
        "from pathlib import Path\n"
        "from spillguard.detection.compiled import compile_kept\n"
        f"made = compile_kept('tok_(?P<secret>[a-z]{{4}})', 0, Path({str(folder)!r}))\n"
        "kept_alone = 'regex._regex_core' not in sys.modules\n"
        "back = pickle.loads(pickle.dumps(made))\n"
        "same = (back.pattern, back.flags, back.groupindex) == (made.pattern, made.flags, made.groupindex)\n"
        "print(kept_alone, back.search('x tok_abcd').group('secret'), same)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.split() == ["True", "abcd", "True"]
