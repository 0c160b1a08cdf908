"""Drive a source through the engine and collect one ScanResult."""

from __future__ import annotations

import math
import operator
import os
import time

from spillguard.core.models import (
    Finding,
    Fragment,
    RuleError,
    RuleSet,
    ScanResult,
    ScanStats,
    Silenced,
    Skipped,
)
from spillguard.core.values import replace
from spillguard.detection.engine import SILENCED_BY, OutOfTime, Scanner
from spillguard.sources.messages import MESSAGE_PATHS

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from spillguard.core.models import ScanScope
    from spillguard.detection.native import NativeMatcher
    from spillguard.sources import SourceItem


#: Fragments prefiltered together by ``Tally.judge``.
BATCH = 512
_path_of = operator.attrgetter("path")
_text_of = operator.attrgetter("text")


class Tally:
    """What a scan found so far; parts of one scan (chunks of commits) add up.

    A plain class: a commit hook makes one, and a dataclass would have it compile
    methods nothing calls."""

    __slots__ = ("commits", "errors", "files", "findings", "silenced", "size", "skipped")

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.skipped: list[Skipped] = []
        self.errors: list[RuleError] = []
        self.files: set[str] = set()
        self.commits: set[str] = set()
        self.size = 0
        #: Findings hidden by a pragma, a path or a reviewed entry, by what hid them.
        self.silenced: dict[str, int] = dict.fromkeys(SILENCED_BY, 0)

    def judge(
        self,
        items: Iterable[SourceItem],
        scanner: Scanner,
        on_finding: Callable[[Finding], None] | None = None,
        *,
        stream: bool = False,
    ) -> None:
        """Scan every item; the scanner's errors are the caller's to collect.

        Fragments are prefiltered a batch at a time, so the many that hold no keyword
        cost one shared keyword pass, and ``on_finding`` sees findings a batch at a
        time; with ``stream`` (a report written as the scan finds), each fragment is
        judged as it comes.
        """
        size = 1 if stream else BATCH
        batch: list[Fragment] = []
        # The scanner counts across all it judged (a worker's, several chunks): this
        # part's share is the difference.
        before = dict(scanner.silenced)
        try:
            for item in items:
                if isinstance(item, Fragment):
                    if item.moved_from is not None and scanner.judged_alike(
                        item.moved_from, item.path
                    ):
                        continue  # moved unchanged between paths judged alike
                    batch.append(item)
                    if len(batch) >= size:
                        self._judge_batch(batch, scanner, on_finding)
                        batch = []
                elif isinstance(item, Skipped):
                    self.skipped.append(item)
                else:
                    self.commits.add(item.commit)
        except OutOfTime:
            self._add_silenced(scanner.silenced, before)
            raise
        except Exception:
            # The source failed (an unreadable object): what it gave still counts.
            self._judge_batch(batch, scanner, on_finding)
            self._add_silenced(scanner.silenced, before)
            raise
        self._judge_batch(batch, scanner, on_finding)
        self._add_silenced(scanner.silenced, before)

    def _add_silenced(self, now: dict[str, int], before: dict[str, int]) -> None:
        for why, count in now.items():
            self.silenced[why] += count - before.get(why, 0)

    def _judge_batch(
        self,
        batch: list[Fragment],
        scanner: Scanner,
        on_finding: Callable[[Finding], None] | None,
    ) -> None:
        try:
            found = scanner.scan_batch(batch)
        except OutOfTime as stop:
            # What the batch gave before the deadline still counts (and blocks).
            self._count(batch[: stop.reached])
            self._found(stop.findings, on_finding)
            raise
        self._count(batch)
        self._found(found, on_finding)

    def _found(self, found: list[Finding], on_finding: Callable[[Finding], None] | None) -> None:
        self.findings.extend(found)
        if on_finding is not None:
            for finding in found:
                on_finding(finding)

    def _count(self, fragments: list[Fragment]) -> None:
        # Messages are no files: a message's commit is counted as walked, and a tag is
        # no commit.
        files = [fragment for fragment in fragments if fragment.path not in MESSAGE_PATHS]
        self.files.update(map(_path_of, files))
        self.size += sum(map(len, map(_text_of, files)))
        self.commits.update(fragment.commit.id for fragment in files if fragment.commit is not None)

    def add(self, part: Tally, on_finding: Callable[[Finding], None] | None) -> None:
        """Append a later part of the same scan."""
        self.findings.extend(part.findings)
        self.skipped.extend(part.skipped)
        self.errors.extend(part.errors)
        self.files.update(part.files)
        self.commits.update(part.commits)
        self.size += part.size
        self._add_silenced(part.silenced, {})
        if on_finding is not None:
            for finding in part.findings:
                on_finding(finding)

    def result(
        self, *, started: float, notices: Iterable[str], scope: ScanScope = "commits"
    ) -> ScanResult:
        return ScanResult(
            findings=tuple(self.findings),
            errors=tuple(self.errors),
            skipped=tuple(self.skipped),
            stats=ScanStats(
                commits=len(self.commits),
                files=len(self.files),
                bytes=self.size,
                seconds=time.monotonic() - started,
                scope=scope,
            ),
            notices=tuple(notices),
            silenced=Silenced(**self.silenced),
        )


#: What the native prefilter saves, in CPU-seconds per unit of work, where its
#: database is at hand (measured under load 3, docs/performance.md): per commit of a
#: history (psf/requests' 6,729 commits: 1.1 to 1.4 s; git/git's: ~0.3 ms a commit),
#: and per file of a --files or --tree scan (a virtual environment's 8,473: 14 s).
SAVED_PER_COMMIT = 0.0002
SAVED_PER_FILE = 0.0016


def native_matcher(
    *, commits: int = 0, files: int = 0, workers: int = 1, environ: Mapping[str, str] = os.environ
) -> NativeMatcher | None:
    """The native prefilter of the built-in rules (``detection.native``) for the work
    ahead (``commits`` or ``files``, shared by ``workers`` processes), where it pays
    off: loaded from the user's cache, or built there for a large scan; None without
    the ``vectorscan`` extra. What it saves is counted per worker, as the time it
    takes: the load or build happens before the workers start. ``SPILLGUARD_NATIVE=0``
    turns it off, ``=1`` on whatever the work (building the database if needed)."""
    switch = environ.get("SPILLGUARD_NATIVE")
    if switch == "0":
        return None
    saving = (commits * SAVED_PER_COMMIT + files * SAVED_PER_FILE) / max(1, workers)
    if switch == "1":
        saving = math.inf
    from spillguard.configuration.rules import builtin_rules
    from spillguard.detection.native import cache_dir, matcher

    rules = [(rule.regexp, rule.flags) for rule in builtin_rules()]
    return matcher(rules, cache_dir(environ), saving=saving)


def run_scan(  # noqa: PLR0913 - keyword-only knobs of one scan
    items: Iterable[SourceItem],
    ruleset: RuleSet,
    *,
    on_finding: Callable[[Finding], None] | None = None,
    notices: Iterable[str] = (),
    scope: ScanScope = "commits",
    stream: bool = False,
    deadline: float | None = None,
    native: NativeMatcher | None = None,
) -> ScanResult:
    """Judge every fragment; ``on_finding`` sees the findings as they are found, each at
    once with ``stream``, else a batch of fragments at a time. Past ``deadline``
    (``time.monotonic()``) judging stops, and the result says it ran out of time.
    ``native``: the native prefilter (``native_matcher``)."""
    started = time.monotonic()
    scanner = Scanner(ruleset, deadline=deadline, native=native)
    tally = Tally()
    out_of_time = False
    try:
        tally.judge(items, scanner, on_finding, stream=stream)
    except OutOfTime:
        out_of_time = True
    tally.errors = scanner.errors
    result = tally.result(started=started, notices=notices, scope=scope)
    return replace(result, out_of_time=out_of_time) if out_of_time else result
