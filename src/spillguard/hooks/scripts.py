"""The hook scripts ``spillguard install`` writes (and ``hooks/`` at the top of the project holds).

Each is a small POSIX shell script that runs ``spillguard hook KIND`` with the
Python that installed it (``INSTALL_PYTHON``, as the pre-commit framework
records it), so a commit from an IDE or a shell without the virtual environment
is still judged; when that Python is gone it falls back to ``spillguard`` on
PATH, and without either it fails closed: a missing scanner must not pass
secrets silently. The scripts in ``hooks/`` leave ``INSTALL_PYTHON`` empty, to
be set by the administrator who copies them.

A hook that ``install --force`` replaced is kept as ``KIND.bak`` and chained:
it runs first, with git's arguments and a copy of git's stdin, and its failure
fails the hook, as the pre-commit framework's migration mode does.
"""

from __future__ import annotations

import shlex

HOOK_KINDS = ("pre-commit", "pre-push", "pre-receive")

#: The line that marks a hook as spillguard's own, so reinstalling may replace it.
MARKER = "Written by `spillguard install`"

#: The line that marks a hook as running the hook it replaced.
CHAIN_MARKER = "PREVIOUS="

#: git writes lines to these hooks' stdin; a chained hook and spillguard each need them.
_READS_STDIN = frozenset({"pre-push", "pre-receive"})

_HEAD = """\
#!/bin/sh
# spillguard {kind} hook. {marker}; it runs `spillguard hook {kind}` with the
# Python that installed it, else with `spillguard` from PATH.
# To stop using it: spillguard uninstall {kind} (or delete this file).
INSTALL_PYTHON={python}
"""

_CHAIN = """\
# The hook this one replaced (kept by `spillguard install --force`) runs first;
# its failure fails the {kind} hook.
{previous}"$(dirname "$0")/{kind}.bak"
if [ -x "$PREVIOUS" ]; then
    "$PREVIOUS" "$@" || exit $?
fi
"""

_CHAIN_STDIN = """\
# The hook this one replaced (kept by `spillguard install --force`) runs first,
# on a copy of git's stdin; its failure fails the {kind} hook.
{previous}"$(dirname "$0")/{kind}.bak"
if [ -x "$PREVIOUS" ]; then
    SAVED=$(mktemp) || exit 1
    cat >"$SAVED"
    exec 3<"$SAVED" 4<"$SAVED"
    rm -f "$SAVED"
    "$PREVIOUS" "$@" <&3 || exit $?
    exec 0<&4 3<&- 4<&-
fi
"""

_RUN = """\
if [ -x "$INSTALL_PYTHON" ]; then
    exec "$INSTALL_PYTHON" -m spillguard hook {kind} "$@"
elif command -v spillguard >/dev/null 2>&1; then
    exec spillguard hook {kind} "$@"
fi
echo "spillguard: the {kind} hook cannot run spillguard: ${{INSTALL_PYTHON:-no Python recorded}} \
is not there and spillguard is not on PATH." >&2
echo "spillguard: install it again (in a checkout of spillguard: pip install .), then run \
'spillguard install {kind}'; or remove this hook: $0" >&2
exit 1
"""


def hook_script(kind: str, *, python: str = "", chained: bool = False) -> str:
    """The script for ``kind``: run by ``python`` (empty: PATH only), chaining ``KIND.bak``."""
    text = _HEAD.format(kind=kind, marker=MARKER, python=shlex.quote(python))
    if chained:
        chain = _CHAIN_STDIN if kind in _READS_STDIN else _CHAIN
        text += chain.format(kind=kind, previous=CHAIN_MARKER)
    return text + _RUN.format(kind=kind)
