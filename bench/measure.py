"""Run a command as a whole process and measure it: wall time, peak memory, exit code.

Peak memory is the largest sum of the proportional set sizes (PSS) of the process
and all its descendants, sampled from /proc: parallel workers and git children
count together, and a page they share (forked from one parent, or a mapped pack
file) counts once in the sum, not once per process. Where PSS is unreadable the
resident size is summed instead. It is never less than the kernel's own peak for
the process (``wait4``'s ``ru_maxrss``). No psutil: /proc and ``os.wait4`` suffice.

A child that still runs in its parent's address space is not counted again: Python
starts git by vfork, and until git runs, the child's /proc entries show its parent's
memory (one run of git/git's history met 14 such moments, one of 67 MB).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import platform
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

PROC = Path("/proc")
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
SAMPLE_SECONDS = 0.02


@dataclasses.dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    peak_bytes: int
    code: int
    stderr: str
    #: User and system time of the process and every child it waited for (workers, git).
    cpu_seconds: float = 0.0

    @property
    def first_error_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else f"exit {self.code}"


def _children() -> dict[int, list[int]]:
    """Every process's children, from each /proc/PID/stat's parent id."""
    tree: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended meanwhile
        parent = int(stat[stat.rfind(")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _memory(pid: int) -> int:
    """The process's PSS in bytes (its resident size where PSS is unreadable)."""
    try:
        rollup = (PROC / str(pid) / "smaps_rollup").read_text()
        return int(rollup[rollup.index("\nPss:") + 5 :].split()[0]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return int((PROC / str(pid) / "statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


#: kcmp(2)'s system call number, by machine, and its question "the same address space?".
_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
_KCMP_VM = 1
_SYSCALL = ctypes.CDLL(None).syscall if _KCMP is not None and PROC.is_dir() else None


def _shares_memory(parent: int, child: int) -> bool:
    """Whether ``child`` runs in ``parent``'s address space (a vfork child before it
    runs its program); False where the kernel cannot tell."""
    return _SYSCALL is not None and _SYSCALL(_KCMP, parent, child, _KCMP_VM, 0, 0) == 0


def tree_memory(root: int) -> int:
    """The memory of ``root`` and all its descendants, in bytes, each address space once."""
    tree = _children()
    total = 0
    pending: list[tuple[int, int | None]] = [(root, None)]
    while pending:
        pid, parent = pending.pop()
        if parent is None or not _shares_memory(parent, pid):
            total += _memory(pid)
        pending.extend((child, pid) for child in tree.get(pid, ()))
    return total


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, tree_memory(self.pid))
            self.done.wait(SAMPLE_SECONDS)


def run(
    command: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    memory: bool = False,
) -> Run:
    """Run ``command`` with its output discarded; stderr is kept for messages."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        sampler = _Sampler(process.pid) if memory and PROC.is_dir() else None
        if sampler is not None:
            sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if sampler is not None:
            sampler.done.set()
            sampler.join()
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    peak = max(sampler.peak if sampler else 0, usage.ru_maxrss * 1024)
    return Run(
        seconds=seconds,
        peak_bytes=peak,
        code=process.returncode,
        stderr=stderr,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
    )


def repeat(count: int, command: Sequence[str], **options: object) -> list[Run]:
    """``count`` runs, stopping at the first that fails (its result says why)."""
    runs = []
    for _ in range(max(count, 1)):
        result = run(command, **options)  # type: ignore[arg-type]
        runs.append(result)
        if result.code not in (0, 1):
            break
    return runs


def timed_then_peak(count: int, command: Sequence[str], **options: object) -> tuple[list[Run], int]:
    """``count`` timed runs, then one more for peak memory.

    Sampling /proc every few milliseconds costs CPU that a scan using every core
    would otherwise have, so the timed runs are not sampled: the time is the
    command's alone, as the floor's is.
    """
    runs = repeat(count, command, **options)
    if runs[-1].code not in (0, 1):
        return runs, runs[-1].peak_bytes
    return runs, run(command, memory=True, **options).peak_bytes  # type: ignore[arg-type]


def median_seconds(runs: Sequence[Run]) -> float:
    return statistics.median(result.seconds for result in runs)


def median_cpu(runs: Sequence[Run]) -> float:
    """CPU time, which a busy machine inflates far less than wall time."""
    return statistics.median(result.cpu_seconds for result in runs)


def output_size(command: Sequence[str], *, cwd: Path | None = None) -> int:
    """How many bytes ``command`` writes to stdout (read and dropped, never stored)."""
    size = 0
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE) as process:
        stream = process.stdout
        while stream is not None and (chunk := stream.read(1 << 20)):
            size += len(chunk)
    return size


def import_offenders(stderr: str, count: int) -> list[tuple[str, float]]:
    """The ``count`` modules with the largest own import time, from ``-X importtime``."""
    times = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|", 2)
        times.append((name.strip(), int(own) / 1000))
    return sorted(times, key=lambda item: -item[1])[:count]
