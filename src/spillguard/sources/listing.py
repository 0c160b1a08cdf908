"""git listing the commits a history scan selects, begun as early as possible.

``git rev-list`` takes as long as loading libgit2, the rules and the configuration;
started before them, it costs a history scan almost nothing. This module imports
neither libgit2 nor the rules, so that it can start first.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from spillguard.core import gitcommand
from spillguard.sources.gitcli import (
    BOUNDED_PACK_MAPS,
    HISTORY_LISTING,
    listed_ids,
    revision_arguments,
    selected_ids,
)

if TYPE_CHECKING:
    from spillguard.core.models import Selection


class Listing:
    """The selected commits' ids, children first, listed by git from the moment this is
    made; ``ids`` waits for them, ``close`` stops git if they are not wanted after all.

    Revisions are checked only if git cannot list them, so a bad one fails with
    ``gitcli.selected_ids``'s message, and one that looks like an option is
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
            self._process = gitcommand.start(
                gitcommand.command(
                    *BOUNDED_PACK_MAPS, "-C", path, *HISTORY_LISTING, *arguments, "--"
                ),
                env=gitcommand.environment(),
                stdout=self._output,
                stderr=subprocess.DEVNULL,
            )

    def ids(self) -> list[str]:
        if self._process is None or self._process.wait() != 0:
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
