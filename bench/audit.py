"""Repositories per minute of ``spillguard audit``, by local workers and on a Dask cluster.

Builds an estate of bare repositories (``--repos``, each ``--commits`` commits on main
and one branch) with git fast-import, then times a first audit (every commit judged)
and a second one (nothing new) for each worker count. Prints a Markdown table.

    python bench/audit.py --repos 200 --commits 30 --workers 1 2 4
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

from spillguard.cli import main
from testing.estate import START, Commit, new_bare, write_commits


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


def main_bench() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--dask", action="store_true", help="also on a Dask LocalCluster")
    options = parser.parse_args()
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
