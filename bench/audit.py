"""``spillguard audit``: repositories per minute by workers, and the estate at scale.

By workers: builds an estate of bare repositories (``--repos``, each ``--commits``
commits on main and one branch) with git fast-import, then times a first audit (every
commit judged) and a second one (nothing new) for each worker count, on local
processes and (``--dask``) a Dask cluster. Prints a Markdown table.

    python bench/audit.py --repos 200 --commits 30 --workers 1 2 4

At scale (``--sizes``): estates of that many repositories (``bench/estate.py``, cached
under bench/work/), 5 commits on main and one on develop (``--commits``), each audited as a separate
process with ``--branches '*'``: a
first run (a new state: every commit judged) and re-runs where nothing changed, with
wall and CPU seconds (the process and every child it waited for) and peak memory
(summed over the process tree). Prints a Markdown table.

    python bench/audit.py --sizes 1000 2000 5000 10000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import measure
from estate import estate

from spillguard.cli import main
from testing.estate import START, Commit, new_bare, write_commits

CACHE = Path(__file__).resolve().parent / "work" / "audit-estate"
#: Re-runs timed at each size (the median is shown).
RERUNS = 3
#: Seconds between samples of a first run's memory: sampling /proc costs a core on a
#: small machine, and a first run's peak changes slowly.
FIRST_RUN_SAMPLE_SECONDS = 0.25


def build(root: Path, repos: int, commits: int) -> None:
    for index in range(repos):
        repo = root / f"project{index % 2}" / f"repo{index:04d}.git"
        repo.parent.mkdir(parents=True, exist_ok=True)
        new_bare(repo)
        history = [
            Commit("main", f"src/m{n % 7}.py", f"VALUE_{n} = {n}  # {index}\n" * 20, START + n)
            for n in range(commits)
        ]
        history.append(Commit("develop", "notes.txt", "work\n", START + commits))
        write_commits(repo, history)


def timed(args: list[str]) -> float:
    started = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):
        main(["audit", *args, "--quiet", "--format", "json", "--branches", "*"])
    return time.monotonic() - started


def _audit_command(root: Path, state: Path, output_format: str) -> list[str]:
    return [sys.executable, "-m", "spillguard", "audit", str(root), "--state", str(state),
            "--branches", "*", "--quiet", "--format", output_format,
            "--output", str(state.with_suffix(f".{output_format}"))]  # fmt: skip


def _figures(runs: list[measure.Run], peak: int, repositories: int) -> str:
    wall = measure.median_seconds(runs)
    return (f"{wall:.2f} | {measure.median_cpu(runs):.2f} | {peak / 1e6:.0f} | "
            f"{wall / repositories * 1000:.2f}")  # fmt: skip


def at_scale(sizes: list[int], commits: int, output_format: str, cache: Path) -> None:
    """First run and unchanged re-runs at each size, each as its own process."""
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| repositories | first run (s) | CPU (s) | peak (MB) | ms per repository "
          "| re-run (s) | CPU (s) | peak (MB) | ms per repository |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for size in sizes:
            root = estate(cache, size, commits)
            command = _audit_command(root, Path(work, f"state{size}.sqlite"), output_format)
            measure.SAMPLE_SECONDS, default = FIRST_RUN_SAMPLE_SECONDS, measure.SAMPLE_SECONDS
            first = measure.run(command, memory=True)
            measure.SAMPLE_SECONDS = default
            if first.code not in (0, 1):
                raise SystemExit(f"audit of {size} repositories: {first.first_error_line}")
            again, peak = measure.timed_then_peak(RERUNS, command)
            print(f"| {size} | {_figures([first], first.peak_bytes, size)} "
                  f"| {_figures(again, peak, size)} |", flush=True)  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def main_bench() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--commits", type=int, help="on main (default: 30; 5 with --sizes)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--dask", action="store_true", help="also on a Dask LocalCluster")
    parser.add_argument("--sizes", type=int, nargs="+", help="estates of these many repositories")
    parser.add_argument("--format", default="text", choices=("text", "json"),
                        help="the report written by --sizes' audits")  # fmt: skip
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help="where --sizes' estates are kept")  # fmt: skip
    options = parser.parse_args()
    if options.sizes:
        at_scale(options.sizes, options.commits or 5, options.format, options.cache)
        return
    options.commits = options.commits or 30
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        build(root / "estate", options.repos, options.commits)
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("| engine | workers | first audit (s) | repos/min | second audit (s) |")
        print("|---|---|---|---|---|")
        runs: list[tuple[str, int, list[str]]] = [
            ("local", workers, ["--jobs", str(workers)]) for workers in options.workers
        ]
        cluster = None
        if options.dask:
            from distributed import LocalCluster

            for workers in options.workers:
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                       dashboard_address=None)  # fmt: skip
                state = str(root / f"dask{workers}.sqlite")
                args = [str(root / "estate"), "--state", state, "--scheduler",
                        cluster.scheduler_address]  # fmt: skip
                first, second = timed(args), timed(args)
                cluster.close()
                per_minute = options.repos / first * 60
                print(f"| dask | {workers} | {first:.1f} | {per_minute:.0f} | {second:.1f} |")
        for engine, workers, extra in runs:
            state = str(root / f"{engine}{workers}.sqlite")
            args = [str(root / "estate"), "--state", state, *extra]
            first, second = timed(args), timed(args)
            per_minute = options.repos / first * 60
            print(f"| {engine} | {workers} | {first:.1f} | {per_minute:.0f} | {second:.1f} |")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main_bench()
