"""git listing the commits a history scan selects, begun as early as possible.

``git rev-list`` takes as long as loading libgit2, the rules and the configuration;
started before them, it costs a history scan almost nothing. This module imports
neither libgit2 nor the rules, so that it can start first.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spillguard.core.models import Selection

#: How history scans list commits: no parent before its children, otherwise newest
#: first (the order of libgit2's topological, time-sorted walk), with commit times.
HISTORY_LISTING = ("rev-list", "--date-order", "--format=%ct")
#: git maps as much of a pack as it reads (1 GiB windows), and its memory grew with the
#: repository: listing 40,000 commits took 199 MB, with these 48 MB, in the same time.
BOUNDED_PACK_MAPS = ("-c", "core.packedGitWindowSize=8m", "-c", "core.packedGitLimit=32m")


def listed_ids(listed: bytes, *, since: float | None, until: float | None) -> list[str]:
    """The ids ``HISTORY_LISTING`` printed, of commits made in ``[since, until)``.

    git prints ``commit <id>`` and the commit time on the next line: three words a
    commit, split at once rather than line by line (20,000 commits: 2 ms, not 7).
    """
    words = listed.decode().split()
    ids = words[1::3]
    if since is None and until is None:
        return ids
    times = map(int, words[2::3])
    return [
        commit
        for commit, when in zip(ids, times, strict=True)
        if (since is None or when >= since) and (until is None or when < until)
    ]


class Listing:
    """The selected commits' ids, children first, listed by git from the moment this is
    made; ``ids`` waits for them, ``close`` stops git if they are not wanted after all.

    Revisions are checked only if git cannot list them, so a bad one fails with
    ``history_cli.selected_ids``'s message, and one that looks like an option is
    never given to git.
    """

    def __init__(self, path: str, selection: Selection) -> None:
        import tempfile  # here: a commit hook imports this module, and tempfile costs ms

        self._path = path
        self._selection = selection
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close(); git never waits
        self._process = None
        if not any(rev.startswith("-") for rev in selection.revs):
            arguments = revision_arguments(selection)
            self._process = subprocess.Popen(
                ["git", *BOUNDED_PACK_MAPS, "-C", path, *HISTORY_LISTING, *arguments, "--"],
                stdout=self._output,
                stderr=subprocess.DEVNULL,
            )

    def ids(self) -> list[str]:
        if self._process is None or self._process.wait() != 0:
            from spillguard.sources.history_cli import selected_ids

            return selected_ids(self._path, self._selection)
        self._output.seek(0)
        listed = self._output.read()
        return listed_ids(listed, since=self._selection.since, until=self._selection.until)

    def close(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        self._output.close()


def revision_arguments(selection: Selection) -> list[str]:
    """The selection as ``git rev-list`` arguments (a revision like an option is the
    caller's to keep from git)."""
    revisions = [f"refs/heads/{name}" for name in selection.branches]
    revisions += ["--all"] if selection.all_refs else []
    revisions += selection.revs
    return revisions or ["HEAD"]
