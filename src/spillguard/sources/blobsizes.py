"""The sizes of blobs, asked of one ``git cat-file --batch-check`` without reading them.

A file whose diff shows no line it adds (a merge's file with no hunk of its own, a
file that only loses lines) could still be an LFS pointer, which is left out of a
scan by name; only a blob under ``decode.LFS_POINTER_LIMIT`` bytes can be one. git
tells a blob's size from its pack entry, where reading it means inflating it whole:
on git/git, a third of the blobs a history scan read were such files, none of them
small enough.
"""

from __future__ import annotations

from spillguard.sources.gitcli import Conversation

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Sequence

#: Blobs asked at once: their questions and git's answers (~50 bytes each) fit the pipes.
_AT_ONCE = 256


class BlobSizes:
    """Asks one ``git cat-file --batch-check`` (started on first need) for blobs' sizes."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._git = Conversation([*command, "cat-file", "--batch-check"], env)

    def sizes(self, blobs: Sequence[str]) -> dict[str, int]:
        """The size of each of ``blobs`` git has; one it lacks (or all, if git
        stopped) is left out, and reading it tells the caller so."""
        found: dict[str, int] = {}
        for start in range(0, len(blobs), _AT_ONCE):
            part = blobs[start : start + _AT_ONCE]
            told = self._git.ask("".join(f"{blob}\n" for blob in part).encode())
            if told is None:
                return found
            answers = [told.readline() for _ in part]
            if not all(answers):
                return found
            for blob, answer in zip(part, answers, strict=True):
                words = answer.split()
                if len(words) == len(("id", "type", "size")):
                    found[blob] = int(words[2])
        return found

    def close(self) -> None:
        self._git.close()
