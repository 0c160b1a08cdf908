"""The methods ``@dataclass`` writes for spillguard's classes, compiled once and kept.

For each class it decorates, ``dataclasses`` writes ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` as Python source and
compiles it (``exec``) anew in every process: about 200 functions for the classes a
commit hook defines, a fifth of its CPU time. Their source is the same from one run
to the next, so the compiled code is kept in this package's ``__pycache__``, as
Python keeps a module's bytecode, and the next process reads it back. The source
itself is the key: a class that changes misses and is compiled, as before.

Only spillguard's own classes are served. A missing, unreadable or corrupt cache
costs the compiling and nothing else; nothing is written where Python writes no
bytecode (``sys.dont_write_bytecode``) or cannot write.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

#: Where the compiled methods are kept: beside the package's own bytecode.
CACHE = (
    Path(__file__).parents[1]
    / "__pycache__"
    / f"dataclass-methods.{sys.implementation.cache_tag}.marshal"
)
#: Past this many methods the cache keeps only those of its last writer: classes that
#: changed leave their old methods behind.
MOST = 2000
_PACKAGE = "spillguard"


class MethodCache:
    """Compiled methods by their source: those read from ``path`` and those compiled here."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept = _read(path)
        self.used: dict[str, CodeType] = {}
        self.missed = False

    def exec(self, source: Any, namespace: Any = None, local: Any = None, /, **more: Any) -> None:
        """``exec`` as ``dataclasses`` calls it; a spillguard class's source runs its
        kept compiled code."""
        name = namespace.get("__name__", "") if isinstance(namespace, dict) else ""
        ours = name == _PACKAGE or name.startswith(f"{_PACKAGE}.")
        if not (ours and isinstance(source, str) and not more):
            exec(source, namespace, local, **more)  # noqa: S102 - dataclasses' own call
            return
        code = self.kept.get(source)
        if type(code) is not CodeType:
            # As exec would compile it, in dataclasses' frame (no __future__ flags).
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if not self.missed and not sys.dont_write_bytecode:
                atexit.register(self.save)
            self.missed = True
        self.used[source] = code
        exec(code, namespace, local)  # noqa: S102 - the code dataclasses wrote

    def save(self) -> None:
        """Write what this process compiled beside what was kept, atomically; never fail."""
        codes = {**self.kept, **self.used}
        if len(codes) > MOST:
            codes = self.used
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(exist_ok=True)
            partial.write_bytes(marshal.dumps(codes))
            partial.replace(self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):  # not there, or no folder to hold it
                partial.unlink()


def _read(path: Path) -> dict[str, Any]:
    try:
        # Trusted as the bytecode beside it is: whoever can write one can write both.
        kept = marshal.loads(path.read_bytes())  # noqa: S302
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return kept if isinstance(kept, dict) else {}


def install(path: Path = CACHE) -> MethodCache:
    """Serve ``dataclasses`` the kept methods from now on (its ``exec`` is looked up
    among its module's names before the builtins)."""
    cache = MethodCache(path)
    vars(dataclasses)["exec"] = cache.exec
    return cache
