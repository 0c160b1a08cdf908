"""``spillguard scan`` over history: ranges, dates, merges, renames and what is skipped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path


def key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


def scan(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, dict]:
    code = main(["scan", "--repo", str(repo.path), *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def found(report: dict) -> list[tuple[str, str, int]]:
    """(short commit, path, line) of each finding, sorted."""
    return sorted((f["commit"][:7], f["path"], f["line"]) for f in report["findings"])


@pytest.fixture(scope="module")
def linear(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, str]]:
    """c1 adds a key; c2 removes it; c3 adds another on line 3; tag v1 at c2."""
    repo = GitRepo(tmp_path_factory.mktemp("linear") / "repo")
    repo.write("app.py", f"x = 1\nkey = '{key('one')}'\n")
    c1 = repo.commit("one", date="2024-01-01T00:00:00Z")
    repo.write("app.py", "x = 1\n")
    c2 = repo.commit("two", date="2024-02-01T00:00:00Z")
    repo.git("tag", "v1")
    repo.write("app.py", f"x = 1\ny = 2\nkey = '{key('three')}'\n")
    c3 = repo.commit("three", date="2024-03-01T00:00:00Z")
    return repo, {"c1": c1[:7], "c2": c2[:7], "c3": c3[:7]}


def test_default_scans_all_of_head_naming_commit_author_date_path_line(linear, capsys) -> None:
    repo, ids = linear
    code, report = scan(capsys, repo)
    assert code == 1
    # the key removed by c2 is still c1's finding: every commit is judged on its own
    assert found(report) == [(ids["c1"], "app.py", 2), (ids["c3"], "app.py", 3)]
    first = next(f for f in report["findings"] if f["commit"].startswith(ids["c1"]))
    assert (first["author"], first["date"]) == ("Ada Tester", "2024-01-01T00:00:00Z")
    assert report["summary"]["commits"] == 3  # c2 adds no line, and was scanned too
    assert key("one") not in json.dumps(report)


def test_text_report_names_commit_author_and_date(linear, capsys) -> None:
    repo, ids = linear
    assert main(["scan", "--repo", str(repo.path), "v1"]) == 1
    out = capsys.readouterr().out
    assert f"commit {ids['c1']}" in out
    assert "Ada Tester <ada@example.com>  2024-01-01T00:00:00Z" in out
    assert "app.py:2:8  AWS_CLIENT_ID  blocking" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["v1..HEAD"], ["c3"]),
        (["HEAD", "^v1"], ["c3"]),
        (["v1"], ["c1"]),
        (["HEAD~2..v1"], []),
        (["HEAD...v1"], ["c3"]),
        (["v1...HEAD"], ["c3"]),
        (["--branch", "main"], ["c1", "c3"]),
        (["--all"], ["c1", "c3"]),
        (["--since", "2024-01-01"], ["c1", "c3"]),
        (["--since", "2024-01-01T00:00:01Z"], ["c3"]),
        (["--until", "2024-03-01T00:00:00Z"], ["c1"]),  # the end is exclusive
        (["--since", "2024-01-15", "--until", "2024-03-01T00:00:01+00:00"], ["c3"]),
        (["--since", "2024-03-01T01:00:00+01:00"], ["c3"]),  # an offset is honoured
    ],
)
def test_revision_selection(linear, capsys, argv: list[str], expected: list[str]) -> None:
    repo, ids = linear
    code, report = scan(capsys, repo, *argv)
    assert sorted({commit for commit, _, _ in found(report)}) == sorted(ids[c] for c in expected)
    assert code == (1 if expected else 0)


def test_symmetric_range_covers_both_sides_only(repo: GitRepo, capsys) -> None:
    repo.write("base.txt", f"{key('base')}\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.txt", f"{key('side')}\n")
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.write("main.txt", f"{key('main')}\n")
    repo.commit("main")
    _, report = scan(capsys, repo, "main...side")
    assert sorted(f["path"] for f in report["findings"]) == ["main.txt", "side.txt"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no-such-ref"], "unknown revision 'no-such-ref'"),
        (["--branch", "nope"], "no branch named 'nope'"),
        (["--since", "last week"], "--since 'last week': not an ISO 8601 date"),
        (["HEAD", "--tree", "HEAD"], "select history, not --tree/--files"),
        (
            ["--since", "2024-03-01", "--until", "2024-01-01"],
            "--until 2024-01-01 is not after --since 2024-03-01: no commit can be in between",
        ),
    ],
)
def test_bad_selection_is_one_line(linear, capsys, argv: list[str], message: str) -> None:
    repo, _ = linear
    code = main(["scan", "--repo", str(repo.path), *argv])
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("spillguard: error: ")
    assert message in line
    assert code in {2, 3}
    assert captured.out == ""


def test_empty_repository_has_nothing_to_scan(repo: GitRepo, capsys) -> None:
    assert main(["scan", "--repo", str(repo.path)]) == 0
    out, err = capsys.readouterr()
    assert out.endswith("nothing to scan: the repository has no commits yet\n")
    assert err == ""


def _conflict_resolved_with_a_key(repo: GitRepo) -> str:
    """A merge in progress whose conflict on conf.py line 1 is resolved with a key (not
    yet committed), the side branch having added a key of its own; the side's id."""
    repo.write("conf.py", "a = 1\nb = 2\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.py", f"s = '{key('side')}'\n")
    repo.write("conf.py", "a = 'side'\nb = 2\n")
    side = repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.write("conf.py", "a = 'main'\nb = 2\n")
    repo.commit("main")
    repo.git("merge", "-q", "side", "-m", "merge", check=False)  # conflicts on conf.py line 1
    repo.write("conf.py", f"a = '{key('resolved')}'\nb = 2\n")
    return side


def test_merge_reports_only_lines_no_parent_had(repo: GitRepo, capsys) -> None:
    side = _conflict_resolved_with_a_key(repo)
    merge = repo.commit("merge")
    code, report = scan(capsys, repo)
    assert code == 1
    assert found(report) == sorted([(merge[:7], "conf.py", 1), (side[:7], "side.py", 1)])


def test_no_merge_diffs_leaves_merges_own_lines_out_and_judges_their_messages(
    repo: GitRepo, capsys
) -> None:
    """What ``git log -p`` shows and other scanners judge: a conflict resolved with a
    key, and a merge that adds a file no parent has, are not judged; the merge's
    message and every other commit are."""
    side = _conflict_resolved_with_a_key(repo)
    repo.write("evil.py", f"e = '{key('evil')}'\n")
    repo.git("add", "evil.py")
    merge = repo.commit(f"merge, with {key('message')} in its message")
    _, full = scan(capsys, repo)
    assert (merge[:7], "conf.py", 1) in found(full)
    assert (merge[:7], "evil.py", 1) in found(full)
    code, report = scan(capsys, repo, "--no-merge-diffs")
    assert code == 1
    assert found(report) == sorted([(merge[:7], "<commit message>", 1), (side[:7], "side.py", 1)])
    assert report["summary"]["commits"] == full["summary"]["commits"] == 4


def test_rename_reports_only_the_changed_lines(repo: GitRepo, capsys) -> None:
    lines = [f"line {n} with some text to keep it similar\n" for n in range(20)]
    repo.write("old.py", "".join(lines) + f"k = '{key('old')}'\n")
    first = repo.commit("add")
    repo.git("mv", "old.py", "new.py")
    repo.write("new.py", "".join(lines) + f"k = '{key('old')}'\nj = '{key('new')}'\n")
    second = repo.commit("rename and add a line")
    _, report = scan(capsys, repo)
    assert found(report) == sorted([(first[:7], "old.py", 21), (second[:7], "new.py", 22)])


def test_deleting_a_file_adds_nothing(repo: GitRepo, capsys) -> None:
    repo.write("a.py", f"k = '{key('del')}'\n")
    repo.commit("add")
    repo.git("rm", "-q", "a.py")
    repo.commit("delete")
    _, report = scan(capsys, repo, "HEAD~1..HEAD")
    assert report["findings"] == []


def test_judges_binary_symlink_and_large_text_skips_lfs_and_submodule(
    repo: GitRepo, tmp_path: Path, capsys
) -> None:
    secret = key("skip")
    repo.write("logo.png", b"\x89PNG\0\0" + secret.encode())
    repo.write("big.txt", "v = 0\n" * 100 + f"x = '{secret}'\n")  # over the cap below
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{'0' * 64}\nsize 9\n"
    repo.write("model.bin", pointer)
    (repo.path / "link").symlink_to(secret)
    sub = GitRepo(tmp_path / "sub")
    sub.write("s.txt", "x\n")
    sub.commit()
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "sub")
    own = tmp_path / "own.toml"  # your own file: a repository's may not set the size cap
    own.write_text("max_file_size = 400\n")
    repo.write("latin.txt", f"caf\xe9 = '{secret}'\n".encode("latin-1"))
    repo.write(".gitattributes", "*.txt -diff\n")  # a -diff attribute must not hide lines
    commit = repo.commit("everything")
    code, report = scan(capsys, repo, "--config", str(own))
    assert code == 1
    # A symlink's target is text, a binary's printable runs are judged, and text over
    # max_file_size too: only content that is not in git, or not content, is skipped.
    assert found(report) == [
        (commit[:7], "big.txt", 101),
        (commit[:7], "latin.txt", 1),
        (commit[:7], "link", 1),
        (commit[:7], "logo.png", 1),
    ]
    assert report["findings"][1]["text"].startswith("caf\xe9 = ")
    skipped = sorted((s["path"], s["reason"], s["commit"]) for s in report["skipped"])
    assert skipped == [("model.bin", "LFS pointer", commit), ("sub", "submodule", commit)]
    assert main(["scan", "--repo", str(repo.path)]) == 1
    assert "skipped: 1 LFS pointer, 1 submodule" in capsys.readouterr().out


def test_summary_counts_every_commit_walked(repo: GitRepo, capsys) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("adds")
    repo.commit("empty")
    repo.git("rm", "-q", "a.py")
    repo.commit("deletes")
    assert main(["scan", "--repo", str(repo.path)]) == 0
    assert "scanned 3 commit(s), 1 file(s)" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["--jobs", "1"], ["--tree", "HEAD~1"]])
def test_a_missing_object_is_one_clear_error(repo: GitRepo, capsys, argv: list[str]) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("a.py", "x = 1\ny = 2\n")
    repo.commit("two")
    repo.write("b.py", "z = 3\n")
    repo.commit("three")
    blob = repo.git("rev-parse", "HEAD~1:a.py").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a corrupt repository
    assert main(["scan", "--repo", str(repo.path), *argv]) == 3
    assert capsys.readouterr().err == (
        f"spillguard: error: object {blob} is missing from the repository "
        "(is it corrupt, or a partial clone?)\n"
    )


def test_a_secret_in_a_commit_subject_is_masked_in_the_text_report(repo: GitRepo, capsys) -> None:
    # Messages are not scanned (the server judges files), but the report shows subjects.
    token = expand("ghp_{rand:Aa0:30}{crc32}", "subject")
    repo.write("a.py", f"key = '{key('subject')}'\n")
    repo.commit(f"rotate: the old token was {token}, now revoked")
    assert main(["scan", "--repo", str(repo.path)]) == 1
    out = capsys.readouterr().out
    assert token not in out
    assert f"    rotate: the old token was {token[:4]}{'*' * 36}, now" in out
    assert main(["scan", "--repo", str(repo.path), "--include-plaintext"]) == 1
    assert token in capsys.readouterr().out


def test_a_secret_behind_an_lfs_header_is_still_found(repo: GitRepo, capsys) -> None:
    # Only a real pointer (version, oid, size: nothing else) is skipped as one.
    fake = f"version https://git-lfs.github.com/spec/v1\naws_key = {key('lfs')}\n"
    repo.write("config.env", fake)
    real = f"version https://git-lfs.github.com/spec/v1\noid sha256:{'ab' * 32}\nsize 12345\n"
    repo.write("model.bin", real)
    repo.commit("lfs")
    code, report = scan(capsys, repo)
    assert (code, [f["path"] for f in report["findings"]]) == (1, ["config.env"])
    assert [s["path"] for s in report["skipped"]] == ["model.bin"]


def test_a_size_limit_beyond_any_file_scans_everything(repo: GitRepo, capsys) -> None:
    """git reads its binary threshold as a 64-bit number; a larger limit is no error."""
    key = expand("AKIA{rand:A2:16}", "limit")
    repo.write(".spillguard.toml", f"max_file_size = {10**30}\n")
    repo.write("a.env", f"KEY={key}\n")
    repo.commit("a key")
    assert main(["scan", "--repo", str(repo.path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["path"], f["line"]) for f in found] == [("a.env", 1)]


def test_without_git_installed_libgit2_scans_the_same(
    repo: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """git lists and diffs the commits where it is installed; libgit2 alone, the same."""
    key = expand("AKIA{rand:A2:16}", "without-git")
    for day, (name, text) in enumerate(
        [("a.env", f"A={key}\n"), ("b.py", "x = 1\n"), ("a.env", f"A={key}\nB={key}\n")], 1
    ):
        repo.write(name, text)
        repo.commit(f"change {day}", date=f"2024-01-0{day}T00:00:00Z")
    reports = []
    for path in (None, str(tmp_path / "no-git-here")):
        if path is not None:
            monkeypatch.setenv("PATH", path)
        assert main(["scan", "--all", "--repo", str(repo.path), "--format", "json"]) == 1
        report = json.loads(capsys.readouterr().out)
        report["summary"].pop("seconds")
        reports.append(report)
    assert reports[0] == reports[1]
    assert [(f["path"], f["line"]) for f in reports[0]["findings"]] == [("a.env", 2), ("a.env", 1)]


def test_a_commit_whose_author_line_git_cannot_read_is_still_scanned(
    repo: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """git reads a malformed author line as empty fields and the scan goes on; where
    only libgit2 reads the history (no git installed), it cannot parse the commit, and
    says so in one line."""
    repo.write("app.py", f"key = '{key('bad-author')}'\n")
    repo.git("add", "app.py")
    tree = repo.git("write-tree").strip()
    body = f"tree {tree}\nauthor No Email 1700000000 +0000\ncommitter C <c@x> 1 +0000\n\nx\n"
    commit = repo.git(
        "hash-object", "-t", "commit", "-w", "--stdin", "--literally", input_text=body
    ).strip()
    repo.git("update-ref", "HEAD", commit)
    code, report = scan(capsys, repo, "--all")
    assert code == 1
    (finding,) = report["findings"]
    assert (finding["commit"], finding["author"], finding["date"]) == (commit, "", "")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert main(["scan", "--all", "--repo", str(repo.path)]) == 3
    error = capsys.readouterr().err.strip()
    assert error.startswith("spillguard: error: libgit2 cannot read the repository: ")
    assert "internal error" not in error
    assert len(error.splitlines()) == 1


def test_a_ref_to_a_missing_object_is_named_in_one_line(
    repo: GitRepo, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """``--all`` over a ref whose commit is gone: git's own words, or libgit2's."""
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    repo.git("update-ref", "--no-deref", "refs/heads/broken", repo.head())
    (repo.path / ".git" / "refs" / "heads" / "broken").write_text("12" * 20 + "\n")
    for path in (None, str(tmp_path / "no-git-here")):
        if path is not None:
            monkeypatch.setenv("PATH", path)
        assert main(["scan", "--all", "--repo", str(repo.path)]) == 3
        error = capsys.readouterr().err.strip()
        assert error.startswith("spillguard: error: ")
        assert "refs/heads/broken" in error
        assert len(error.splitlines()) == 1


def test_moving_a_thousand_files_reports_nothing_again(repo: GitRepo, capsys) -> None:
    """A renamed directory of 1,100 files: libgit2's rename search stops pairing near a
    thousand, but a file whose content a deleted file had was moved, not written; a
    moved file that was also edited reports only its new line."""
    for number in range(1100):
        repo.write(f"src/m{number}.py", f"value = {number}\n" * 3)
    repo.write("src/m7.py", f"key = '{key('moved')}'\n")
    first = repo.commit("many files")
    repo.git("mv", "src", "lib")
    moved = repo.commit("renamed directory")
    repo.git("mv", "lib", "pkg")
    repo.write("pkg/m9.py", (repo.path / "pkg" / "m9.py").read_text() + f"k = '{key('new')}'\n")
    edited = repo.commit("renamed again, one file edited")
    code, report = scan(capsys, repo, "--all")
    assert code == 1
    assert found(report) == sorted([(edited[:7], "pkg/m9.py", 4), (first[:7], "src/m7.py", 1)])
    assert report["summary"]["files"] == 1101  # the move scanned nothing, the edit one file
    assert moved[:7] not in {commit for commit, _, _ in found(report)}


def test_rules_for_credential_files_speak_in_those_files_only(
    capsys: pytest.CaptureFixture[str], repo: GitRepo
) -> None:
    """A .pgpass line holds no keyword at all: it is found in history (where many
    fragments are prefiltered together) and in a tree, and not as a README's sample;
    an htpasswd hash is reported without blocking."""
    entry = expand("db.internal:5432:app:app_user:{rand:Aa0:18}", "pgpass")
    hashed = expand("admin:$apr1${rand:Aa0:8}${rand:Aa0:22}", "htpasswd")
    for number in range(5):
        repo.write(f"src/module{number}.py", f"VALUE = {number}\n")
    repo.write(".pgpass", f"{entry}\n")
    repo.write("docs/README.md", f"{entry}\n{hashed}\n")
    repo.write("conf/.htpasswd", f"{hashed}\n")
    repo.commit("credentials")
    for argv in ((), ("--tree", "HEAD")):
        code, report = scan(capsys, repo, *argv)
        assert code == 1
        assert sorted((f["path"], f["rule"], f["blocking"]) for f in report["findings"]) == [
            (".pgpass", "PGPASS_ENTRY", True),
            ("conf/.htpasswd", "HTPASSWD_HASH", False),
        ]


def test_a_tree_scan_without_git_installed_says_so(
    repo: GitRepo, capsys, monkeypatch, tmp_path: Path
) -> None:
    """The repository is fine: the one line names what is missing, git itself."""
    repo.write("app.py", "VALUE = 1\n")
    repo.commit("app")
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on it
    assert main(["scan", "--repo", str(repo.path), "--tree", "HEAD"]) == 3  # could not complete
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "spillguard: error: git is not installed (spillguard reads repositories with it)"
    ]
