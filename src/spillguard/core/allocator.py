"""Freed memory handed back to the system during a long scan (glibc's malloc).

glibc serves a large block from its heap once a block as large was freed (its mmap
threshold rises to the largest block freed, up to 32 MiB), and a heap gives memory
back only from its top: after a commit of large files, a worker kept what it had
freed until the scan ended. Setting the thresholds (which also stops them moving)
gives each block of 256 KiB or more a mapping of its own, unmapped when freed, and
trims the heap's top from 128 KiB. On git/git's newest 15,000 commits the two
workers held 87-90 MB on average instead of 97-98, the parent 30-33 instead of 39-42,
the peak of the whole scan 317-323 MB instead of 341-351, in the same CPU time
(docs/performance.md). Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes

#: mallopt(3)'s parameters, and the values set.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MAPPED_FROM = 256 * 1024
TRIMMED_FROM = 128 * 1024


def return_freed_memory() -> None:
    """From now on, in this process and those it forks, large blocks and the heap's
    free top go back to the system when freed."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # not glibc (musl's is a stub, macOS has none)
        return
    mallopt(_M_MMAP_THRESHOLD, MAPPED_FROM)
    mallopt(_M_TRIM_THRESHOLD, TRIMMED_FROM)
