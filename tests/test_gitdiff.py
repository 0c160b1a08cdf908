"""The git diff-tree fast path yields exactly what the libgit2 path yields, on real repos."""

from __future__ import annotations

import random
import re
import subprocess
from typing import TYPE_CHECKING

import pygit2
import pytest

from spillguard import git as libgit
from spillguard.core.decode import LARGE_BINARY
from spillguard.core.models import CommitInfo, Fragment, Selection, Skipped
from spillguard.core.values import replace
from spillguard.sources import gitdiff
from spillguard.sources.blobsizes import BlobSizes
from spillguard.sources.commits import iter_walked_commit, text_added
from spillguard.sources.diffparse import (
    COMMIT_FORMAT,
    BlobHeads,
    FileDiff,
    fragments,
    git_command,
    run_diff_tree,
)
from spillguard.sources.history import select_commits
from spillguard.sources.messages import MESSAGE_PATHS
from spillguard.sources.renames import Renames
from testing.genrepo import generate
from testing.gitrepo import GitRepo, git
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

MAX_SIZE = 4096
KEY = expand("AKIA{rand:A2:16}", "gitdiff")
LFS = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 12345\n"
#: The last 1,022 bytes of both versions of tail.py: git trims them (whole 1,024-byte
#: blocks, then on to a line's end) before a diff without context, which keeps the run
#: of lines added above them from sliding down into them, as it would in the whole file.
SHARED_TAIL = "".join(f"value_{i:02} = {i:04}\n" for i in range(63)) + "x" * 13 + "\n"
TAIL_BEFORE = "def main():\n    pass\n}\n}\n" + SHARED_TAIL
TAIL_AFTER = "def main():\n    pass\n}\n}\nvalue_00 = 0000\n}\n}\n" + SHARED_TAIL
EXT_LFS = (
    "version https://git-lfs.github.com/spec/v1\next-0-foo sha256:{}\noid sha256:{}\nsize 12345\n"
)


def _of_a_file(item: object) -> bool:
    """A fragment of a file's lines (not of a commit's message)."""
    return isinstance(item, Fragment) and item.path not in MESSAGE_PATHS


def simple(repo: pygit2.Repository, commits: list[pygit2.Commit]) -> list[object]:
    return [item for c in commits for item in iter_walked_commit(repo, c, max_size=MAX_SIZE)]


def fast(repo: pygit2.Repository, commits: list[pygit2.Commit]) -> list[object]:
    ids = [str(commit.id) for commit in commits]
    return list(gitdiff.iter_commits_fast(repo.path, ids, max_size=MAX_SIZE))


def every_commit(path: Path) -> tuple[pygit2.Repository, list[pygit2.Commit]]:
    repo = pygit2.Repository(str(path))
    return repo, list(select_commits(repo, Selection(all_refs=True)))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Realistic code: 400 commits, feature branches, merges, tags, planted secrets."""
    target = tmp_path_factory.mktemp("generated") / "repo.git"
    generate(target, commits=400, seed=7)
    return target


@pytest.fixture(scope="module")
def awkward(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """One commit per case where git and libgit2 could see a change differently."""
    repo = GitRepo(tmp_path_factory.mktemp("awkward") / "repo")
    for name, text in {
        "app.py": "import os\n\n\ndef main():\n    pass\n",
        ".gitattributes": "*.txt -diff\n*.dat diff\n",
        "tail.py": TAIL_BEFORE,
    }.items():
        repo.write(name, text)
    repo.commit("root")
    # ambiguous runs of added lines: one in a small file, one above a long shared tail
    repo.write("app.py", "import os\n\n\ndef extra():\n    return 1\n\n\ndef main():\n    pass\n")
    repo.write("tail.py", TAIL_AFTER)
    repo.commit("slider")
    repo.write("notes.txt", f"text behind a -diff attribute\nkey = {KEY}\n")
    repo.write("blob.dat", b"\0binary behind a diff attribute\n" + KEY.encode())
    repo.write("crlf.ini", f"[aws]\r\nkey = {KEY}\r\n")
    repo.write("no-eol.py", f"key = '{KEY}'")
    repo.write("latin1.txt", "café = 1\n".encode("latin-1") + KEY.encode())
    repo.write("empty.txt", "")
    repo.write("big.log", "x" * MAX_SIZE + f"\n{KEY}\n")
    repo.write("pointer.bin", LFS.format("a" * 64))
    for name, text in {
        "ext-pointer.bin": EXT_LFS.format("c" * 64, "d" * 64),
        "grows.txt": f"key = '{KEY}'\n",
        "sizes.txt": "sizes:\n",
    }.items():
        repo.write(name, text)
    repo.write("with space/ünïcödé.py", f"key = '{KEY}'\n")
    repo.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0" + KEY.encode())
    repo.write("huge.bin", b"\0" + b"y\n" * MAX_SIZE + KEY.encode())  # over the limit
    repo.commit("many kinds of file")
    repo.write('odd"quote\tname.py', f"key = '{KEY}'\n")
    repo.commit("a path git quotes")
    repo.write("no-eol.py", f"key = '{KEY}'\nmore = 1")
    repo.write("image.png", f"now text {KEY}\n")
    repo.write("pointer.bin", LFS.format("b" * 64))
    repo.write("big.log", "y" * MAX_SIZE + f"\n{KEY}\n")
    at_limit = f"sizes:\nsize 12 key = '{KEY}'\n"
    for name, text in {
        "ext-pointer.bin": LFS.format("d" * 64),  # a line removed, none added: a pointer
        "grows.txt": f"key = '{KEY}'\n" + "z" * MAX_SIZE + "\n",  # text past the limit
        "sizes.txt": at_limit + "s" * (MAX_SIZE - len(at_limit) - 1) + "\n",  # at it
    }.items():
        repo.write(name, text)
    repo.commit("binary to text, pointer and big file changed")
    (repo.path / "app.py").chmod(0o755)
    repo.commit("mode only")
    repo.git("mv", "app.py", "main.py")
    repo.write("main.py", (repo.path / "main.py").read_text() + f"key = '{KEY}'\n")
    repo.commit("rename with an added line")
    (repo.path / "crlf.ini").unlink()
    (repo.path / "crlf.ini").symlink_to("main.py")
    repo.commit("file becomes a symlink")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head()},vendor/lib")
    repo.git("commit", "-q", "-m", "a submodule")
    repo.git("commit", "-q", "--allow-empty", "-m", "empty")
    repo.git("checkout", "-q", "-b", "side", "HEAD~3")
    repo.write("side.py", f"side = '{KEY}'\n")
    repo.write("notes.txt", "changed on the side\n")
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.write("notes.txt", "changed on main\n")
    repo.commit("main")
    repo.git("merge", "-q", "side", "-m", "merge", check=False)
    repo.write("notes.txt", f"resolved\nkey = {KEY}\n")
    repo.commit("merge with a resolution")
    return repo


def test_generated_history_is_the_same_item_for_item(generated) -> None:
    repo, commits = every_commit(generated)
    assert len(commits) == 400
    expected = simple(repo, commits)
    assert fast(repo, commits) == expected
    assert sum(1 for item in expected if getattr(item, "text", None)) > 400


def test_generated_history_takes_the_fast_path_for_plain_commits(generated, monkeypatch) -> None:
    """Not a fallback in disguise: git's output answers every ordinary commit itself,
    its author and message included, without libgit2 reading one commit."""
    repo, commits = every_commit(generated)
    plain = [commit for commit in commits if len(commit.parent_ids) == 1][:50]
    expected = simple(repo, plain)
    looked_up: list[str] = []
    monkeypatch.setattr(gitdiff, "iter_commit", lambda _, commit, **__: looked_up.append(commit))
    assert fast(repo, plain) == expected
    assert looked_up == []


def test_awkward_changes_are_the_same_item_for_item(awkward) -> None:
    repo, commits = every_commit(awkward.path)
    expected = simple(repo, commits)
    assert fast(repo, commits) == expected
    paths = {item.path for item in expected if hasattr(item, "path")}
    assert {"no-eol.py", "crlf.ini", "notes.txt", "side.py", "with space/ünïcödé.py"} <= paths
    skipped = {(item.path, item.reason) for item in expected if hasattr(item, "reason")}
    assert {("ext-pointer.bin", "LFS pointer"), ("huge.bin", LARGE_BINARY)} <= skipped
    assert {reason for _, reason in skipped} == {"LFS pointer", "submodule", LARGE_BINARY}
    # at the limit, past it (text is judged whatever its size), binaries' printable runs
    for name in ("sizes.txt", "grows.txt", "big.log", "image.png", "blob.dat"):
        texts = [item.text for item in expected if getattr(item, "path", "") == name]
        assert any(KEY in text for text in texts), name


def test_added_lines_are_where_git_diff_u0_puts_them(awkward) -> None:
    """Both paths place a run of added lines as ``git diff -U0`` does, which trims the
    shared tail first; libgit2 on the whole files would put it a line lower."""
    repo, commits = every_commit(awkward.path)
    (slider,) = (commit for commit in commits if commit.message == "slider\n")
    for items in (simple(repo, [slider]), fast(repo, [slider])):
        placed = [
            (item.start_line, item.text)
            for item in items
            if isinstance(item, Fragment) and item.path == "tail.py"
        ]
        assert placed == [(5, "value_00 = 0000\n}\n}\n")]
    shown = awkward.git("diff", "-U0", "--no-indent-heuristic", f"{slider.id}~", str(slider.id))
    assert "@@ -4,0 +5,3 @@" in shown
    whole = pygit2.Patch.create_from(TAIL_BEFORE.encode(), TAIL_AFTER.encode(), context_lines=0)
    assert [hunk.new_start for hunk in whole.hunks] == [6]


def _git_u0_added(tmp_path: Path, old: bytes, new: bytes) -> list[int]:
    """The new line numbers of the lines ``git diff -U0`` shows added."""
    (tmp_path / "a").write_bytes(old)
    (tmp_path / "b").write_bytes(new)
    shown = git(
        "diff", "--no-index", "-U0", "--no-indent-heuristic", "a", "b", cwd=tmp_path, check=False
    )
    spans = re.findall(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", shown, re.MULTILINE)
    return [int(start) + n for start, count in spans for n in range(int(count or 1))]


def test_text_added_agrees_with_git_diff_u0(tmp_path) -> None:
    """Random insertions into files of a few repeated lines before a long tail of
    distinct ones: where sliding runs meet the tail git trims. Whole-file libgit2
    disagrees with git on some of them; text_added never does."""
    chance = random.Random(6)  # noqa: S311 - reproducible cases, not secrets
    disagreed = 0
    for case in range(120):
        common = [chance.choice(["}", "", "x = 1"]) for _ in range(chance.randint(0, 6))]
        tail = [f"line {n} " + "." * chance.randint(0, 30) for n in range(chance.randint(20, 90))]
        old = ["head", *common, *tail]
        new = list(old)
        at = 1 + chance.randint(0, len(common))
        new[at:at] = (common + tail)[: chance.randint(1, 3)]
        before, after = ("".join(f"{line}\n" for line in text).encode() for text in (old, new))
        expected = _git_u0_added(tmp_path, before, after)
        assert sorted(text_added(before, after)) == expected, case
        whole = pygit2.Patch.create_from(before, after, context_lines=0)
        disagreed += [line.new_lineno for h in whole.hunks for line in h.lines] != expected
    assert disagreed > 0


def test_git_sees_content_not_the_work_trees_attributes(awkward, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(awkward.path)  # where the .gitattributes file is
    repo, commits = every_commit(awkward.path)
    kinds = next(c for c in commits if c.message == "many kinds of file\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command, env = git_command(repo.path, str(scratch))
    stdin = f"{kinds.id}\n".encode()
    (diff,) = run_diff_tree(command, env, stdin, str(scratch), COMMIT_FORMAT)
    binary = {file.path.decode(): file.binary for file in diff.files}
    assert binary["notes.txt"] is False  # "-diff" would make it binary
    assert binary["blob.dat"] is True  # "diff" would make it text
    heads, sizes, renames = (
        BlobHeads(command, env, MAX_SIZE),
        BlobSizes(command, env),
        Renames(command, env),
    )
    try:
        blobs = gitdiff._Blobs(heads, sizes, MAX_SIZE)
        assert gitdiff._commit_items(diff, None, blobs, renames) is not None
    finally:
        for each in (heads, sizes, renames):
            each.close()


def test_each_commit_alone_is_the_same(awkward) -> None:
    """Batches change nothing either: one commit per git process gives the same items."""
    repo, commits = every_commit(awkward.path)
    for commit in commits:
        assert fast(repo, [commit]) == simple(repo, [commit])


def test_a_repository_attribute_file_and_diff_drivers_change_nothing_git_reads(
    tmp_path,
) -> None:
    """``info/attributes`` and the repository's diff drivers would have git call every
    file binary, show it through a textconv or an external diff, or drop the paths'
    prefixes: git reads the objects through a git directory of its own, so what it
    diffs is what libgit2 diffs, and the history is read by git all the same."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", f"x = 1\nkey = '{KEY}'\n")
    repo.write("wide.ini", f"id = {KEY}\n".encode("utf-16"))
    repo.commit()
    repo.write("a.py", f"x = 2\nkey = '{KEY}'\nmore = '{KEY}'\n")
    repo.commit()
    info = repo.path / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("* -diff -text diff=hide\n")
    for key, value in (("textconv", "sh -c 'echo hidden'"), ("command", "true")):
        repo.git("config", f"diff.hide.{key}", value)
    repo.git("config", "diff.noprefix", "true")
    opened = pygit2.Repository(str(repo.path))
    assert gitdiff.usable()
    commits = list(select_commits(opened, Selection()))
    ids = [str(commit.id) for commit in commits]
    read = list(gitdiff.iter_commits_fast(opened.path, ids, max_size=MAX_SIZE))
    assert read == simple(opened, commits)
    assert any(isinstance(item, Fragment) and "more = " in item.text for item in read)


def test_without_git_on_path_the_simple_path_does_it_all(awkward, tmp_path) -> None:
    repo, commits = every_commit(awkward.path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))
        assert not gitdiff.usable()
        ids = [str(commit.id) for commit in commits]
        chunk = list(gitdiff.iter_commit_chunk(repo.path, ids, max_size=MAX_SIZE))
    assert chunk == simple(repo, commits)


@pytest.fixture(scope="module")
def merges(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """Merges of every kind: clean, resolved, octopus, and one that renames a file."""
    repo = GitRepo(tmp_path_factory.mktemp("merges") / "repo")
    repo.write("shared.py", "a = 1\nb = 2\nc = 3\n")
    repo.write("moved.py", "m = 1\n")
    repo.commit("root")
    for name in ("one", "two", "three"):
        repo.git("checkout", "-q", "-b", name, "main")
        repo.write(f"{name}.py", f"{name} = '{KEY}'\n")
        repo.write("shared.py", f"a = 1\nb = '{name} {KEY}'\nc = 3\n")
        repo.commit(f"{name} on its branch")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "one", "-m", "clean merge of one")
    repo.git("merge", "-q", "two", "-m", "conflicted", check=False)
    repo.write("shared.py", f"a = 1\nb = 'both {KEY}'\nresolved = '{KEY}'\nc = 3\n")
    repo.commit("merge of two, resolved by hand")
    for name in ("four", "five"):
        repo.git("checkout", "-q", "-b", name, "main~1")
        repo.write(f"{name}.py", f"{name} = '{KEY}'\n")
        repo.commit(name)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "four", "five", "-m", "octopus")
    repo.git("checkout", "-q", "-b", "mover", "main")
    repo.git("mv", "moved.py", "renamed.py")
    repo.commit("rename on a branch")
    repo.git("checkout", "-q", "main")
    repo.write("main.py", "main = 1\n")
    repo.commit("main goes on")
    repo.git("merge", "-q", "--no-ff", "mover", "-m", "merge brings a rename")
    return repo


def test_merges_are_the_same_item_for_item_and_mostly_git_s(merges, monkeypatch) -> None:
    repo, commits = every_commit(merges.path)
    expected = simple(repo, commits)
    assert fast(repo, commits) == expected
    by_merges = {
        (item.commit.message.split("\n")[0], item.text)
        for item in expected
        if _of_a_file(item) and item.commit and item.commit.message.startswith("merge")
    }
    # a resolution is the merge's own; what a branch brought in is its commits'
    resolution = f"b = 'both {KEY}'\nresolved = '{KEY}'\n"
    assert by_merges == {("merge of two, resolved by hand", resolution)}
    walked: list[str] = []
    original = gitdiff.iter_commit

    def recording(git_dir: str, commit: str, **options: object) -> object:
        walked.append(repo[commit].message)
        return original(git_dir, commit, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gitdiff, "iter_commit", recording)
    assert fast(repo, commits) == expected
    # libgit2 pairs renames, so a commit with one takes its path; no merge does: a
    # merge's combined diff has only the files that differ from every parent
    assert walked == ["rename on a branch\n"]


@pytest.fixture(scope="module")
def new_files(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """Commits and merges that add files, with and without a rename git would pair."""
    repo = GitRepo(tmp_path_factory.mktemp("new_files") / "repo")
    body = "".join(f"line_{i} = {i}\n" for i in range(30))
    repo.write("old.py", body)
    repo.write("gone.py", "gone = 1\n")
    repo.write("kept.py", body.replace("line_", "kept_"))
    big = [f"big_{i} = {i}\n" for i in range(120)]  # over an LFS pointer's 1,024 bytes
    repo.write("big.py", "".join(big))
    repo.commit("root")
    repo.git("rm", "-q", "gone.py")
    repo.write("fresh.py", f"fresh = '{KEY}'\n")
    repo.commit("adds one file, deletes an unrelated one")
    _side_branch(repo, "topic", "main")
    repo.write("big.py", "".join(["topic = 1\n", *big[1:]]))
    repo.commit("topic changes big.py")
    repo.git("checkout", "-q", "main")
    repo.write("main.py", "main = 1\n")
    repo.write("big.py", "".join([*big[:-1], "main = 1\n"]))
    repo.commit("main goes on")
    # a file new to the first parent, changed by the merge: no rename, git's view;
    # big.py differs from both parents with no line of the merge's own
    repo.git("merge", "-q", "--no-ff", "--no-commit", "topic")
    repo.write("topic.py", f"topic = 1\nmerged = '{KEY}'\n")
    repo.write("evil.py", f"evil = '{KEY}'\n")
    repo.commit("merge adds and changes files")
    # a merge that renames a file and adds a line to it: read again with renames
    _side_branch(repo, "other", "main~1")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "other")
    repo.git("mv", "kept.py", "moved.py")
    repo.write("moved.py", body.replace("line_", "kept_") + f"moved = '{KEY}'\n")
    # a name git would read as pathspec magic and a glob, were it not taken literally
    repo.write(":odd*.py", f"odd = '{KEY}'\n")
    repo.commit("merge renames a file")
    repo.git("mv", "old.py", "new.py")
    repo.write("new.py", body + f"renamed = '{KEY}'\n")
    repo.commit("renames a file")
    return repo


def _side_branch(repo: GitRepo, name: str, base: str) -> None:
    """A branch from ``base`` whose first commit adds ``<name>.py``, checked out."""
    repo.git("checkout", "-q", "-b", name, base)
    repo.write(f"{name}.py", f"{name} = 1\n")
    repo.commit(f"{name} adds a file")


def test_new_files_are_read_again_only_where_git_pairs_a_rename(new_files, monkeypatch) -> None:
    repo, commits = every_commit(new_files.path)
    expected = simple(repo, commits)
    walked: list[str] = []
    original = gitdiff.iter_commit

    def recording(git_dir: str, commit: str, **options: object) -> object:
        walked.append((repo[commit].message.strip(), options.get("first") is not None))
        return original(git_dir, commit, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gitdiff, "iter_commit", recording)
    assert fast(repo, commits) == expected
    # a commit with one parent comes with its diff with renames from the chunk's git
    assert sorted(walked) == [("merge renames a file", False), ("renames a file", True)]
    own = {
        (item.commit.message.strip(), item.path, item.text.split("\n")[-2], item.moved_from)
        for item in expected
        if _of_a_file(item) and item.commit and item.commit.message.startswith("merge")
    }
    assert own == {
        ("merge adds and changes files", "evil.py", f"evil = '{KEY}'", None),
        ("merge adds and changes files", "topic.py", f"merged = '{KEY}'", None),
        ("merge renames a file", "moved.py", f"moved = '{KEY}'", None),
        ("merge renames a file", ":odd*.py", f"odd = '{KEY}'", None),
        # what the rename carried is judged as the old file's lines at the new path
        ("merge renames a file", "moved.py", "kept_29 = 29", "kept.py"),
    }


_WORDS = ("}", "", "x = 1", "return x", "def f():", "    pass", f"key = '{KEY}'", "crlf = 1\r")


def _edited(chance: random.Random, text: str | None) -> str:
    """``text`` with a few lines inserted, removed or replaced, or new text; its last
    newline kept or dropped at random."""
    lines = [] if text is None else text.split("\n")[: -1 if text.endswith("\n") else None]
    if text is None or chance.random() < 0.1:
        lines = [chance.choice(_WORDS) for _ in range(chance.randint(1, 12))]
    for _ in range(chance.randint(1, 3)):
        at = chance.randint(0, len(lines))
        change = chance.random()
        if change < 0.5:
            lines[at:at] = [chance.choice(_WORDS) for _ in range(chance.randint(1, 3))]
        elif change < 0.8:
            del lines[at : at + chance.randint(1, 2)]
        else:
            lines[at : at + 1] = [f"line {chance.randint(0, 99)} = '{KEY}'"]
    return "\n".join(lines) + ("\n" if chance.random() < 0.85 else "")


def _merged_version(chance: random.Random, have: list[str | bytes]) -> str | bytes | None:
    """A merge's version of a file its parents have as ``have``: one of them (most
    often), one of them edited, a binary too large to search, or none (deleted)."""
    pick = chance.random()
    if pick < 0.75:
        return chance.choice(have)
    if pick < 0.95:
        base = chance.choice(have)
        return _edited(chance, base if isinstance(base, str) else None)
    if pick < 0.97:
        return b"\0" + b"x" * MAX_SIZE + b"\n"
    return None


@pytest.fixture(scope="module", params=[11, 12, 13])
def random_merges(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """Merges no merge tool writes: each file of a merge taken from one parent as it is,
    edited from one, written anew or deleted; two to four parents; text, binary and
    oversized files, lines with and without their newline, CRLF lines."""
    chance = random.Random(request.param)  # noqa: S311 - reproducible cases, not secrets
    path = tmp_path_factory.mktemp("random-merges") / "repo.git"
    repo = pygit2.init_repository(str(path), bare=True)
    who = pygit2.Signature("Dev", "dev@example.com", 1_700_000_000, 0)

    def commit(files: dict[str, str | bytes], parents: list[pygit2.Oid]) -> pygit2.Oid:
        tree = repo.TreeBuilder()
        for name, content in sorted(files.items()):
            data = content.encode() if isinstance(content, str) else content
            tree.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        return repo.create_commit(None, who, who, "change", tree.write(), parents)

    main: dict[str, str | bytes] = {f"f{n}.py": _edited(chance, None) for n in range(6)}
    main["blob.bin"] = b"\0binary\n"
    tip = commit(main, [])
    for _ in range(40):
        sides = []
        for _ in range(chance.choice((1, 1, 2, 3))):
            side = dict(main)
            for name in chance.sample(sorted(main), min(2, len(main))):
                old = side[name]
                side[name] = _edited(chance, old if isinstance(old, str) else None)
            sides.append((side, commit(side, [tip])))
        parents = [main, *(side for side, _ in sides)]
        merged = {
            name: version
            for name in sorted({name for parent in parents for name in parent})
            if (version := _merged_version(chance, [p[name] for p in parents if name in p]))
            is not None
        }
        if chance.random() < 0.1:
            merged[f"new{chance.randint(0, 9)}.py"] = _edited(chance, None)
        tip = commit(merged, [tip, *(oid for _, oid in sides)])
        main = merged
    repo.references.create("refs/heads/main", tip)
    return path


def test_random_merges_are_the_same_item_for_item(random_merges, monkeypatch) -> None:
    repo, commits = every_commit(random_merges)
    expected = simple(repo, commits)
    walked: list[str] = []
    original = gitdiff.iter_commit

    def recording(git_dir: str, commit: str, **options: object) -> object:
        walked.append(commit)
        return original(git_dir, commit, **options)  # type: ignore[arg-type]

    exact: list[tuple[str, bool]] = []
    diffed = gitdiff._exact_items

    def diffing(file: FileDiff, *args: object) -> object:
        exact.append((file.new_id, file.binary))
        return diffed(file, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(gitdiff, "iter_commit", recording)
    monkeypatch.setattr(gitdiff, "_exact_items", diffing)
    assert fast(repo, commits) == expected
    merges = {str(commit.id) for commit in commits if len(commit.parents) > 1}
    own = {
        item.commit.id
        for item in expected
        if _of_a_file(item) and item.commit and item.commit.id in merges
    }
    # Many merges add lines of their own, and git's combined diffs found them; libgit2
    # diffed only files git called binary (a side's version was), never one for lines
    # a merge lost (git's context shows the line they hide, see _read_combined_hunks).
    assert len(own - set(walked)) > len(merges) // 3
    assert all(binary for _, binary in exact)
    blobs = {
        str(repo[item.commit.id].tree[item.path].id)
        for item in expected
        if _of_a_file(item) and item.commit and item.commit.id in merges
    }
    assert len(blobs - {blob for blob, _ in exact}) > len(blobs) * 3 // 4
    assert any(isinstance(item, Skipped) and item.commit in merges for item in expected)


def test_without_merge_diffs_a_merge_is_its_message_by_git_and_by_libgit2(merges, tmp_path) -> None:
    """``--no-merge-diffs``: the full reading without the merges' own files, both ways."""
    repo, commits = every_commit(merges.path)
    ids = [str(commit.id) for commit in commits]
    merge_ids = {str(commit.id) for commit in commits if len(commit.parents) > 1}
    without = list(gitdiff.iter_commit_chunk(repo.path, ids, max_size=MAX_SIZE, merge_diffs=False))
    expected = [
        item
        for item in simple(repo, commits)
        if not (_of_a_file(item) and item.commit is not None and item.commit.id in merge_ids)
    ]
    assert without == expected
    assert any(item.commit.id in merge_ids for item in without if isinstance(item, Fragment))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))
        assert not gitdiff.usable()
        by_libgit2 = gitdiff.iter_commit_chunk(repo.path, ids, max_size=MAX_SIZE, merge_diffs=False)
        assert list(by_libgit2) == expected


def test_merges_with_an_older_git_take_the_libgit2_path(merges, monkeypatch) -> None:
    repo, commits = every_commit(merges.path)
    monkeypatch.setattr(gitdiff, "combined_merges", lambda: False)
    assert fast(repo, commits) == simple(repo, commits)


def _crafted_commit(repo: GitRepo, parent: str, header: bytes, message: bytes) -> str:
    """A commit of the index's tree, written byte for byte (as tools other than git may)."""
    tree = repo.git("write-tree").strip()
    body = b"tree %s\nparent %s\n%s\n\n%s" % (tree.encode(), parent.encode(), header, message)
    written = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
        cwd=repo.path,
        input=body,
        capture_output=True,
        check=True,
    )
    return written.stdout.decode().strip()


def test_commit_details_from_git_are_libgit2_s(tmp_path) -> None:
    """Author, date and message as libgit2 reads them, whatever bytes a commit holds."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", f"key = '{KEY}'\n")
    tip = repo.commit("root")
    who = b"author %s <a@example.com> 1700000000 +0200\ncommitter C <c@example.com> 1 +0000"
    for number, (header, message) in enumerate(
        (
            (who % "Zoë".encode(), b"no newline at the end"),
            (who % "Zo\xeb".encode("latin-1"), b"latin-1 author\r\n\r\nCRLF body\r\n"),
            (who % b"Anne" + b"\nencoding ISO-8859-1", "caf\xe9\n".encode("latin-1")),
            (who % b"Bob", b"diff --git a/x b/x\n\n" + b"f" * 40 + b"\n@@ -1 +1 @@\n"),
            (who.replace(b"1700000000", b"999999999999") % b"Far", b"from the year 33658"),
        )
    ):
        repo.write("a.py", (repo.path / "a.py").read_text() + f"more{number} = '{KEY}'\n")
        repo.git("add", "a.py")
        tip = _crafted_commit(repo, tip, header, message)
    repo.git("update-ref", "refs/heads/main", tip)
    opened, commits = every_commit(repo.path)
    expected = simple(opened, commits)
    # A message that names its encoding is read as git shows it, re-encoded to UTF-8
    # ("café"), where libgit2's bytes read as UTF-8 lose the "é".
    recoded = next(c for c in commits if c.message_encoding == "ISO-8859-1")
    assert recoded.raw_message == "caf\xe9\n".encode("latin-1")
    info = next(
        i.commit
        for i in expected
        if isinstance(i, Fragment) and i.commit and i.commit.id == str(recoded.id)
    )
    shown = replace(info, message="caf\xe9\n")
    assert fast(opened, commits) == [
        replace(item, commit=shown, text=shown.message)
        if isinstance(item, Fragment) and item.commit == info and item.path == "<commit message>"
        else replace(item, commit=shown)
        if isinstance(item, Fragment) and item.commit == info
        else item
        for item in expected
    ]
    fragments = [item for item in expected if _of_a_file(item)]
    assert len(fragments) == 6
    assert {fragment.commit.author for fragment in fragments if fragment.commit} >= {"Zoë", "Anne"}
    dates = {
        fragment.commit.author: fragment.commit.date for fragment in fragments if fragment.commit
    }
    assert dates["Far"] == "33658-09-27T01:46:39Z"  # past datetime's range, still scanned
    assert dates["Bob"] == "2023-11-14T22:13:20Z"


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        ({}, []),
        ({7: b"a\n"}, [(7, "a\n")]),
        ({5: b"a\n", 6: b"b\n", 9: b"c\n"}, [(5, "a\nb\n"), (9, "c\n")]),
        # in any order: the runs are by line number, the text in line order
        ({3: b"c\n", 1: b"a\n", 2: b"b\n", 4: b"d\n"}, [(1, "a\nb\nc\nd\n")]),
        ({9: b"z\n", 1: b"a\n", 2: b"b\n"}, [(1, "a\nb\n"), (9, "z\n")]),
    ],
)
def test_fragments_are_runs_of_consecutive_lines(added, expected) -> None:
    found = [(f.start_line, f.text) for f in fragments("p.py", added, None, None)]
    assert found == expected


def test_fragments_have_every_field_a_fragment_is_built_with() -> None:
    # (``diff_fragment`` fills the slots itself: a field it misses would be unset here)
    info = CommitInfo(id="c" * 40, author="Anne", email="anne@example.com", date="")
    added = {1: b"\xef\xbb\xbfa\n", 2: b"b\n", 5: b"c\n"}
    found = list(fragments("new.py", added, info, "refs/heads/main", "old.py"))
    where = {"path": "new.py", "commit": info, "ref": "refs/heads/main", "moved_from": "old.py"}
    assert found == [
        Fragment(text="a\nb\n", start_line=1, **where),
        Fragment(text="c\n", start_line=5, **where),
    ]


def test_large_hunks_are_read_whole_and_still_exactly(tmp_path) -> None:
    """Hunks of many lines are taken as blocks: with and without a last newline on
    either side, removed then added, they give what libgit2 gives."""
    repo = GitRepo(tmp_path / "repo")
    lines = [f"line {n} = '{KEY}'" for n in range(40)]
    repo.write("big.txt", "\n".join(lines))  # no newline at the end
    repo.commit("forty lines")
    repo.write("big.txt", "\n".join(lines[:5] + [f"new {n}" for n in range(30)]))
    repo.commit("thirty replaced, still no last newline")
    repo.write("big.txt", "\n".join(lines[:5] + [f"new {n}" for n in range(30)]) + "\n")
    repo.commit("the last newline added")
    repo.write("big.txt", "\n".join(lines[:3]) + "\n")
    repo.commit("most lines removed")
    opened, commits = every_commit(repo.path)
    expected = simple(opened, commits)
    assert fast(opened, commits) == expected
    texts = [item.text for item in expected if _of_a_file(item)]
    assert texts[-1].endswith(f"line 39 = '{KEY}'")  # the first commit's, without newline
    assert len(texts) == 3


def test_binaries_are_judged_from_git_s_read_of_their_blobs(tmp_path, monkeypatch) -> None:
    """Files git calls binary are judged by their printable runs, from blobs one git
    reads for the chunk (libgit2 rebuilds every version of a large file); UTF-16 text,
    which git calls binary too, is still scanned, and so is a binary file turned text."""
    repo = GitRepo(tmp_path / "repo")
    wide = f"key = '{KEY}'\n".encode("utf-16")
    for version in range(6):
        repo.write("asset.bin", b"\0\1\2" * 1000 + f"asset version {version}\0".encode() * 3)
        repo.write("notes-utf16.txt", wide * (version + 1))
        repo.write("huge.bin", b"\0" * (MAX_SIZE + 10 + version))
        repo.write("turns-text.dat", b"\0binary" if version < 4 else f"k = '{KEY}'\n".encode())
        repo.commit(f"version {version}")
    opened, commits = every_commit(repo.path)
    expected = simple(opened, commits)
    read: list[str] = []
    original = libgit.skip_reason

    def counting(repo: pygit2.Repository, object_id: pygit2.Oid, *rest: object) -> object:
        read.append(str(object_id))
        return original(repo, object_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(libgit, "skip_reason", counting)
    assert fast(opened, commits) == expected
    reasons = {(item.path, item.reason) for item in expected if isinstance(item, Skipped)}
    assert reasons == {("huge.bin", LARGE_BINARY)}
    runs = [item.text for item in expected if getattr(item, "path", "") == "asset.bin"]
    assert runs == [f"asset version {n}\n" * 3 for n in reversed(range(6))]
    scanned = {item.path for item in expected if _of_a_file(item)}
    assert scanned == {"notes-utf16.txt", "turns-text.dat", "asset.bin"}
    asset_blobs = {str(opened.revparse_single(f"{c.id}:asset.bin").id) for c in commits}
    assert not asset_blobs & set(read)  # git's first bytes settled every asset.bin


def test_blob_heads_reads_the_first_bytes_and_passes_over_missing_blobs(tmp_path) -> None:
    from spillguard.sources.diffparse import BlobHeads

    repo = GitRepo(tmp_path / "repo")
    repo.write("big.bin", b"\0" * 5 + b"x" * 20000)
    repo.write("small.txt", "hi\n")
    repo.commit("two blobs")
    big = repo.git("rev-parse", "HEAD:big.bin").strip()
    small = repo.git("rev-parse", "HEAD:small.txt").strip()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command, env = git_command(str(repo.path / ".git"), str(scratch))
    heads = BlobHeads(command, env, 8)
    try:
        read = [heads.head(blob) for blob in (big, "ab" * 20, small, big)]
    finally:
        heads.close()
    assert read == [b"\0" * 5 + b"xxx", None, b"hi\n", b"\0" * 5 + b"xxx"]
