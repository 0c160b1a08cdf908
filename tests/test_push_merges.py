"""Merges of any number of parents, pushed for real: every line new to all parents is
judged, whatever git's combined diff can say (it keeps a parent per bit of a machine
word, and from 64 parents on its marks are missing or wrong).

The objects are written by hand (``testing.objects``), so one push carries merges of
every parent count from 1 to 70, a parent repeated up to 70 times, and an evil merge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testing.objects import Objects, blob_entry
from testing.server import Server, install_hook
from testing.tokens import expand

if TYPE_CHECKING:
    from pathlib import Path

    from testing.objects import Entry

#: Every count in SHA-1; in SHA-256 (the same reader, longer ids) those either side of
#: where git's combined diff stops speaking for a merge (``COMBINED_PARENTS_MOST``).
PARENT_COUNTS = {"sha1": range(1, 71), "sha256": (1, 2, 3, 31, 32, 33, 63, 64, 65, 70)}
REPEATS = (2, 63, 64, 65, 70)


def aws_key(seed: str) -> str:
    return expand("AKIA{rand:A2:16}", seed)


class Merges:
    """A server whose main is one commit, and 70 branches off it, each adding one file."""

    def __init__(self, root: Path, object_format: str) -> None:
        self.server = Server(root, object_format=object_format)
        self.objects = Objects(self.server.work.path / ".git", object_format)
        self.base: list[Entry] = [blob_entry("README.md", self.objects.blob("hello\n"))]
        self.main = self.objects.commit(self.objects.tree(self.base))
        self.files = [blob_entry(f"f{n}.txt", self.objects.blob(f"line {n}\n")) for n in range(71)]
        self.branches = [
            self.objects.commit(self.objects.tree([*self.base, self.files[n]]), [self.main])
            for n in range(71)
        ]
        self.point({"refs/heads/main": self.main})
        assert self.server.push("main")[0] == 0
        install_hook(self.server.bare.path)

    def merge(self, parents: list[str], entries: list[Entry], message: str = "merge") -> str:
        """A commit of ``parents`` whose tree is the base's, ``entries`` added."""
        return self.objects.commit(self.objects.tree([*self.base, *entries]), parents, message)

    def point(self, refs: dict[str, str]) -> None:
        lines = "".join(f"update {ref} {commit}\n" for ref, commit in refs.items())
        self.server.work.git("update-ref", "--stdin", input_text=lines)


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def merges(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Merges:
    return Merges(tmp_path_factory.mktemp("merges"), request.param)


def findings(output: str) -> list[str]:
    return [line for line in output.splitlines() if "  blocking  " in line]


def test_every_line_new_to_every_parent_is_judged_whatever_the_parent_count(
    merges: Merges,
) -> None:
    """One push: a merge of n parents for every n from 1 to 70, each with a file new to
    every parent; one parent listed n times; an evil merge (a line new to both parents
    in a file both have); a line new to both parents of a file one has as a binary; and, as the control, a 70-parent merge that takes every file
    as its parents have it, one of them a branch that adds a key: that key is the
    branch's finding, once, and the honest merge adds none."""
    files, branches = merges.files, merges.branches
    refs = {}
    counts = PARENT_COUNTS[merges.objects.object_format]
    for count in counts:
        secret = blob_entry(
            f"merge-{count}.env", merges.objects.blob(f"ID={aws_key(str(count))}\n")
        )
        refs[f"refs/heads/merge-{count}"] = merges.merge(
            branches[1 : count + 1], [*files[1 : count + 1], secret]
        )
    for count in REPEATS:
        secret = blob_entry(
            f"repeat-{count}.env", merges.objects.blob(f"ID={aws_key(f'r{count}')}\n")
        )
        refs[f"refs/heads/repeat-{count}"] = merges.merge([branches[1]] * count, [files[1], secret])
    evil = merges.objects.blob(f"hello\nID={aws_key('evil')}\n")
    refs["refs/heads/evil"] = merges.objects.commit(
        merges.objects.tree([blob_entry("README.md", evil), files[1], files[2]]),
        branches[1:3],
    )
    text, binary = (merges.objects.blob(data) for data in ("hello\n", b"\0binary\n"))
    sides = [merges.merge([merges.main], [blob_entry("both.txt", blob)]) for blob in (text, binary)]
    both = merges.objects.blob(f"hello\nID={aws_key('both')}\n")
    refs["refs/heads/binary-side"] = merges.merge(sides, [blob_entry("both.txt", both)])
    keyed = blob_entry("keyed.env", merges.objects.blob(f"ID={aws_key('branch')}\n"))
    branch = merges.merge([merges.main], [keyed])
    refs["refs/heads/honest"] = merges.merge(
        [*branches[1:70], branch], [*files[1:70], keyed], "honest octopus"
    )
    merges.point(refs)
    before = merges.server.refs()
    code, output = merges.server.push(*(f"{ref}:{ref}" for ref in refs))
    assert code == 1, output
    assert merges.server.refs() == before
    shown = findings(output)
    wanted = [f"merge-{count}.env:1" for count in counts]
    wanted += [f"repeat-{count}.env:1" for count in REPEATS]
    wanted += ["README.md:2", "both.txt:2", "keyed.env:1"]
    missing = [where for where in wanted if not any(f"  {where}  " in line for line in shown)]
    assert missing == [], output
    assert len(shown) == len(wanted), output
    assert next(line for line in shown if "keyed.env" in line).split()[2] == branch[:10]


def test_an_honest_octopus_of_seventy_parents_is_accepted(merges: Merges) -> None:
    """The control: 70 branches merged as they are, nothing new, pushed and accepted."""
    merges.point({"refs/heads/octopus": merges.merge(merges.branches[1:], merges.files[1:])})
    code, output = merges.server.push("refs/heads/octopus")
    assert code == 0, output
    assert "push accepted: no secrets found" in output
