"""A push that only deletes refs: nothing to judge, answered before anything else loads.

git runs the pre-receive hook for every push, a branch's deletion too, which brings
no object and no line; that push is accepted as soon as its input is read, without
the configuration, the rules or a single git (the rest of spillguard costs a hook
several times Python's own start-up). So is a client's pre-push of deletions only,
which sends nothing. Anything else in the input, a malformed line included, goes the
whole way (``commands.pre_receive``, ``hooks.pre_push``), which reads the same text.
"""

from __future__ import annotations

import io
import sys

#: As ``typing.TYPE_CHECKING`` (which mypy reads alike): importing ``typing`` would
#: cost this answer as much as Python's own start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import BinaryIO, TextIO

_HEX = frozenset("0123456789abcdef")
_ID_LENGTHS = (40, 64)  # SHA-1, SHA-256


def read_input(stdin: BinaryIO) -> str:
    """The hook's input as text: a ref name is bytes to git, and one that is not UTF-8
    must not crash the hook."""
    return stdin.read().decode("utf-8", errors="surrogateescape")


def only_deletions(text: str) -> bool:
    """Whether every ``<old> <new> <ref>`` line deletes a ref (``new`` all zeros),
    and there is one."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    return bool(lines) and all(
        len(fields) == 3
        and len(fields[0]) in _ID_LENGTHS
        and set(fields[0]) <= _HEX
        and len(fields[1]) == len(fields[0])
        and set(fields[1]) == {"0"}
        for fields in lines
    )


def only_sent_deletions(text: str) -> bool:
    """Whether every ``<local ref> <local id> <remote ref> <remote id>`` line of a
    pre-push deletes the remote ref (the local id all zeros), and there is one."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    return bool(lines) and all(
        len(fields) == 4
        and len(fields[1]) in _ID_LENGTHS
        and set(fields[1]) == {"0"}
        and len(fields[3]) == len(fields[1])
        and set(fields[3]) <= _HEX
        for fields in lines
    )


def answer(
    stdin: BinaryIO, stream: TextIO, deletes: Callable[[str], bool] = only_deletions
) -> tuple[int | None, io.StringIO]:
    """0 and a line for the pusher when the push only deletes refs (``deletes`` reads
    the hook's input), else None; and the input, to be read again by the whole hook."""
    text = read_input(stdin)
    if not deletes(text):
        return None, io.StringIO(text)
    stream.write("spillguard: push accepted: it only deletes refs, nothing to judge\n")
    return 0, io.StringIO(text)


def answer_bare_hook(given: Sequence[str]) -> int | None:
    """``hook pre-receive`` (no option) or ``hook pre-push REMOTE URL`` as git's hook
    scripts run them: the exit code when the push only deletes refs, else None, with
    ``sys.stdin`` holding the input read, for the whole hook. Not under the pre-commit
    framework, which reads the input itself and names the range in the environment."""
    given = list(given)
    if given == ["hook", "pre-receive"]:
        deletes = only_deletions
    elif len(given) == 4 and given[:2] == ["hook", "pre-push"] and not _framework():
        deletes = only_sent_deletions
    else:
        return None
    if not hasattr(sys.stdin, "buffer"):
        return None
    code, sys.stdin = answer(sys.stdin.buffer, sys.stderr, deletes)
    return code


def _framework() -> bool:
    import os  # loaded by Python's start-up already

    return any(name.startswith("PRE_COMMIT") for name in os.environ)
