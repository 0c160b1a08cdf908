"""``spillguard audit`` on a Dask LocalCluster, in a process of its own.

Dask's client and cluster leave threads behind in the process that ran them, and a
process with threads never forks its scan workers: the test suite's process must not
be that one. Usage: ``python -m testing.dask_audit AUDIT-ARGS...``; the exit code and
output are the audit's.
"""

from __future__ import annotations

import sys

from spillguard.cli import main


def run(argv: list[str]) -> int:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        return main(["audit", *argv, "--scheduler", cluster.scheduler_address])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
