"""A push with nothing to judge, answered before anything else loads.

git runs the pre-receive hook for every push, a branch's deletion too, which brings
no object and no line; that push is accepted as soon as its input is read, without
the configuration, the rules or a single git (the rest of spillguard costs a hook
several times Python's own start-up). So is a client's pre-push of deletions only,
which sends nothing. A push that moves existing refs to commits the repository has
already (a release branch fast-forwarded to a tested commit) brings nothing either:
when it brought no object (its quarantine is empty), names no new ref (a new ref's
name is judged), and two gits say that each ref it moves names a commit and that no
commit is new (``git rev-list --not --all``, as the whole hook lists them), it is
accepted too, before the configuration loads. Anything else in the input, a
malformed line included, goes the whole way (``commands.pre_receive``,
``hooks.pre_push``), which reads the same text.
"""

from __future__ import annotations

import functools
import io
import os
import sys

#: As ``typing.TYPE_CHECKING`` (which mypy reads alike): importing ``typing`` would
#: cost this answer as much as Python's own start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import BinaryIO, TextIO

_HEX = frozenset("0123456789abcdef")
_ID_LENGTHS = (40, 64)  # SHA-1, SHA-256


def read_input(stdin: BinaryIO) -> str:
    """The hook's input as text: a ref name is bytes to git, and one that is not UTF-8
    must not crash the hook."""
    return stdin.read().decode("utf-8", errors="surrogateescape")


def _updates(text: str) -> list[list[str]] | None:
    """The ``<old> <new> <ref>`` lines, each id hexadecimal of one length; None when a
    line is otherwise, or there is none."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    valid = all(
        len(fields) == 3
        and len(fields[0]) in _ID_LENGTHS
        and set(fields[0]) <= _HEX
        and len(fields[1]) == len(fields[0])
        and set(fields[1]) <= _HEX
        for fields in lines
    )
    return lines if lines and valid else None


def only_deletions(text: str) -> bool:
    """Whether every ``<old> <new> <ref>`` line deletes a ref (``new`` all zeros),
    and there is one."""
    updates = _updates(text)
    return updates is not None and all(set(new) == {"0"} for _, new, _ in updates)


def moves_to_known_commits(text: str, environ: Mapping[str, str]) -> bool:
    """Whether the push (its quarantine empty) deletes refs or moves existing ones to
    commits a ref of the repository reaches, and moves one: nothing it brings is new."""
    updates = _updates(text)
    quarantine = environ.get("GIT_QUARANTINE_PATH")
    if updates is None or not quarantine or not _empty(quarantine):
        return False
    moved = [(old, new) for old, new, _ in updates if set(new) != {"0"}]
    if not moved or any(set(old) == {"0"} for old, _ in moved):
        return False  # nothing moved, or a ref created: its name is judged
    from spillguard.core import gitcommand

    tips = "".join(f"{new}\n" for _, new in moved).encode()
    where = (f"--git-dir={environ.get('GIT_DIR', '.')}", "--no-replace-objects")
    env = gitcommand.environment(environ)
    check = gitcommand.command(*where, "cat-file", "--batch-check=%(objecttype)")
    kinds = gitcommand.answer(check, stdin=tips, env=env)
    if kinds is None or kinds.split() != [b"commit"] * len(moved):
        return False  # a tag's message, a tree's or a blob's content is judged
    listing = gitcommand.command(*where, "rev-list", "--max-count=1", "--stdin", "--not", "--all")
    return gitcommand.answer([*listing, "--"], stdin=tips, env=env) == b""


def _empty(folder: str) -> bool:
    """Whether ``folder`` exists and holds no file, in it or below."""
    # not pathlib: its imports would cost this answer a sixth of its time
    exists = os.path.isdir(folder)  # noqa: PTH112
    return exists and not any(files for _, _, files in os.walk(folder))


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


def _never(_: str) -> bool:
    return False


def answer(
    stdin: BinaryIO,
    stream: TextIO,
    deletes: Callable[[str], bool] = only_deletions,
    moves: Callable[[str], bool] = _never,
) -> tuple[int | None, io.StringIO]:
    """0 and a line for the pusher when the push only deletes refs (``deletes`` reads
    the hook's input), or only moves them to commits the repository has (``moves``),
    else None; and the input, to be read again by the whole hook."""
    text = read_input(stdin)
    if deletes(text):
        said = "it only deletes refs"
    elif moves(text):
        said = "it moves refs to commits the repository has and brings no object"
    else:
        return None, io.StringIO(text)
    stream.write(f"spillguard: push accepted: {said}, nothing to judge\n")
    return 0, io.StringIO(text)


def answer_bare_hook(given: Sequence[str]) -> int | None:
    """``hook pre-receive`` (no option) or ``hook pre-push REMOTE URL`` as git's hook
    scripts run them: the exit code when the push has nothing to judge, else None, with
    ``sys.stdin`` holding the input read, for the whole hook. Not under the pre-commit
    framework, which reads the input itself and names the range in the environment."""
    given = list(given)
    moves: Callable[[str], bool] = _never
    if given == ["hook", "pre-receive"]:
        deletes = only_deletions
        moves = functools.partial(moves_to_known_commits, environ=os.environ)
    elif len(given) == 4 and given[:2] == ["hook", "pre-push"] and not _framework():
        deletes = only_sent_deletions
    else:
        return None
    if not hasattr(sys.stdin, "buffer"):
        return None
    code, sys.stdin = answer(sys.stdin.buffer, sys.stderr, deletes, moves)
    return code


def _framework() -> bool:
    return any(name.startswith("PRE_COMMIT") for name in os.environ)
