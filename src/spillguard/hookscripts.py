"""The hook scripts ``spillguard install`` writes (and ``hooks/`` at the top of the project holds).

Each is a small POSIX shell script that execs ``spillguard hook KIND`` from PATH,
passing git's arguments and stdin through. Without spillguard on PATH it fails
closed with a message saying so: a missing scanner must not pass secrets silently.
"""

from __future__ import annotations

HOOK_KINDS = ("pre-commit", "pre-push", "pre-receive")

#: The line that marks a hook as spillguard's own, so reinstalling may replace it.
MARKER = "Written by `spillguard install`"

_TEMPLATE = """\
#!/bin/sh
# spillguard {kind} hook. {marker}; it runs `spillguard hook {kind}`.
# To stop using it, delete this file.
if ! command -v spillguard >/dev/null 2>&1; then
    echo "spillguard: the {kind} hook needs spillguard on PATH (pip install spillguard)," >&2
    echo "spillguard: or remove the hook: $0" >&2
    exit 1
fi
exec spillguard hook {kind} "$@"
"""


def hook_script(kind: str) -> str:
    return _TEMPLATE.format(marker=MARKER, kind=kind)
