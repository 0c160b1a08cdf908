"""Whatever bytes open a block of added lines, the secrets in it are read.

A byte order mark decides how a whole blob is decoded, never a run of added lines;
a mark that would turn plain text into unreadable characters is never the only
reading judged; and a NUL that makes a file binary leaves its printable runs to be
judged. Checked over random leading bytes, through the libgit2 path and the
``git diff-tree`` fast path, which must agree item for item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spillguard import git
from spillguard.core.decode import decode, readings
from spillguard.core.models import Fragment
from spillguard.sources import gitdiff
from spillguard.sources.commits import iter_walked_commit
from testing.gitrepo import GitRepo
from testing.tokens import expand

if TYPE_CHECKING:
    from spillguard.sources import SourceItem

KEY = expand("AKIA{rand:A2:16}", "decode")
BLOCK = f"aws_key = {KEY}\nmore = 1\n".encode()
BASE = b"".join(b"line %d\n" % number for number in range(1, 6))
MARKS = [b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\0\0", b"\0\0\xfe\xff", b"\xef\xbb\xbf"]
#: A mark, perhaps with more bytes after it, or any few bytes (a NUL among them makes
#: the file binary: its printable runs are read).
LEADS = st.one_of(
    st.builds(bytes.__add__, st.sampled_from(MARKS), st.binary(max_size=3)),
    st.binary(max_size=6),
)
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("mark", MARKS[:2])
def test_a_mark_inside_a_run_of_lines_is_bytes(mark: bytes) -> None:
    assert KEY in decode(mark + BLOCK, start=False)


@given(lead=LEADS)
def test_a_blob_is_read_as_its_bytes_whatever_its_mark(lead: bytes) -> None:
    assert any(KEY in text for text in readings(lead + BLOCK))


def items_of(repo: GitRepo, commit: str) -> tuple[list[SourceItem], list[SourceItem]]:
    """The commit's items by the libgit2 path and by the fast path."""
    opened = pygit2.Repository(str(repo.path))
    simple = list(iter_walked_commit(opened, opened[commit].peel(pygit2.Commit), max_size=1 << 20))
    fast = list(gitdiff.iter_commits_fast(opened.path, [commit], max_size=1 << 20))
    return simple, fast


def texts(items: list[SourceItem]) -> list[str]:
    return [item.text for item in items if isinstance(item, Fragment)]


@pytest.fixture(scope="module")
def based(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo(tmp_path_factory.mktemp("decode") / "repo")
    repo.write("notes.txt", BASE)
    repo.commit("base")
    repo.git("tag", "base")
    return repo


@settings(PROPERTY)
@given(lead=LEADS, new_file=st.booleans())
def test_every_path_reads_an_added_block_whatever_opens_it(
    based: GitRepo, lead: bytes, new_file: bool
) -> None:
    based.git("checkout", "-q", "--detach", "base")
    name = "new.txt" if new_file else "notes.txt"
    based.write(name, (b"" if new_file else BASE) + lead + BLOCK)
    commit = based.commit("block")
    simple, fast = items_of(based, commit)
    assert fast == simple
    assert any(KEY in text for text in texts(simple))
    if new_file:  # the whole blob, as tree and file scans read it
        opened = pygit2.Repository(str(based.path))
        entry = opened[commit].peel(pygit2.Commit).tree[name]
        blob_texts = texts(list(git.blob_items(opened, entry.id, name, entry.filemode, 1 << 20)))
        assert any(KEY in text for text in blob_texts)
