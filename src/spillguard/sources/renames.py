"""Whether git pairs a commit's new files with its deleted ones: renames, by tree alone.

A history's diffs come without renames (``--no-renames``), so a commit whose diff
holds a rename has to be read again with renames found as ``git log -M`` finds them
(``received_cli.iter_commit``): a commit that adds and deletes files, or a merge with
a file new to its first parent. Most of those hold no rename: a topic that adds one
test script and drops another, a merge of a topic that added a file. Reading such a
merge again diffed every file of it against every parent, patches and all (178 merges
of git/git: 33 s of a 80 s scan); asking git whether it pairs any of the new files
costs a tree diff and, only where files are both added and deleted, rename detection.

One ``git diff-tree --stdin -M`` per chunk answers, commit by commit. git echoes, and
flushes, any input line that is not an object id, so a line of ours after each
question marks where its answer ends. Where git does pair a rename in a commit with
one parent, a second one gives that commit's diff with renames, which reading the
commit again would have asked of a git started for it (with one more to find its
trees): a rename cost four gits, now two.
"""

from __future__ import annotations

import io

from spillguard.sources.diffparse import DIFF_TREE, CommitDiff, parse
from spillguard.sources.gitcli import Conversation

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

#: Renames only, as raw lines: a tree diff against the first parent with ``-M`` (its
#: default similarity, as ``iter_commit`` reads renames), no patch.
_RENAMES = ("diff-tree", "--stdin", "-r", "--raw", "--no-commit-id", "-M", "--diff-filter=R")
#: Not an object id, so git echoes it once it has answered the line before.
_END = b"spillguard-end\n"


class Renames:
    """Asks one ``git diff-tree`` (started on first need) about commits' renames, and
    another for the diff with renames of a commit that has one."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._git = Conversation([*command, *_RENAMES], env)
        # DIFF_TREE's own options, renames found (the later option wins)
        self._diffs = Conversation([*command, *DIFF_TREE, "-M"], env)
        #: The last commit ``pair`` found a rename in.
        self.paired: str | None = None

    def diff(self, commit: str) -> CommitDiff | None:
        """The commit's diff against its one parent with renames, as
        ``received_cli.iter_commit`` would have git make it; None if git stopped."""
        answer = _answer(self._diffs, f"{commit}\n")
        if answer is None:
            return None
        diffs = list(parse(io.BytesIO(b"".join(answer))))
        return diffs[0] if len(diffs) == 1 and diffs[0].commit == commit else None

    def pair(self, commit: str, first_parent: str | None, added: Collection[bytes]) -> bool:
        """Whether git, diffing ``commit`` against ``first_parent`` (its parent when
        None) with renames, names one of the ``added`` paths (as git writes them) as
        a rename's new path; True also when git cannot tell."""
        question = commit if first_parent is None else f"{commit} {first_parent}"
        answer = _answer(self._git, f"{question}\n")
        if answer is None:
            return True
        # Each line ends with a tab and the rename's new path.
        if any(line.rstrip(b"\n").rsplit(b"\t", 1)[-1] in added for line in answer):
            self.paired = commit
            return True
        return False

    def close(self) -> None:
        self._git.close()
        self._diffs.close()


def _answer(git: Conversation, question: str) -> list[bytes] | None:
    """git's lines answering ``question``, up to the echoed end; None if git stopped
    (an object it cannot read)."""
    told = git.ask(question.encode() + _END)
    if told is None:
        return None
    lines: list[bytes] = []
    for line in iter(told.readline, b""):
        if line == _END:
            return lines
        lines.append(line)
    return None
