"""The scanning app's built-in rule names and the local rules that stand for them.

The table holds every built-in rule name the app's documentation shows, the older
release lines' short names included. A server built-in rule with the exact name of
a local built-in rule is that rule too; any other server built-in rule has no local
equivalent, and the scans that follow a sync say so (``sync_cache``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

#: Server built-in rule name -> the local built-in rules that judge what it judges.
SERVER_BUILTINS: dict[str, tuple[str, ...]] = {
    "AWS_CLIENT_ID": ("AWS_CLIENT_ID",),
    "AWS_MWS_KEY": ("AWS_MWS_KEY",),
    "AWS_SECRET_ACCESS_KEY": ("AWS_SECRET_ACCESS_KEY",),
    "RSA_PRIVATE_KEY": ("RSA_PRIVATE_KEY",),
    "SSH_PRIVATE_KEY": ("SSH_PRIVATE_KEY",),
    # Older release lines name the two private-key rules by their key type only.
    "RSA": ("RSA_PRIVATE_KEY",),
    "SSH": ("SSH_PRIVATE_KEY",),
    "GENERIC_PASSWORD": ("GENERIC_PASSWORD",),
}


def local_rules(server_name: str, local_names: Collection[str]) -> tuple[str, ...]:
    """The local rules standing for a server rule name; () when none does."""
    mapped = SERVER_BUILTINS.get(server_name)
    if mapped is not None:
        return tuple(name for name in mapped if name in local_names)
    return (server_name,) if server_name in local_names else ()
