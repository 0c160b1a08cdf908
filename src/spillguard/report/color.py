"""Whether a report gets colour: ``--color``, then NO_COLOR and FORCE_COLOR, then the TTY."""

from __future__ import annotations

import os

from spillguard.core.output import is_terminal

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO


def use_color(choice: str, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """``always`` and ``never`` win; ``auto`` follows NO_COLOR, FORCE_COLOR, then the stream.

    The command line beats the environment (the no-color.org convention), and
    NO_COLOR beats FORCE_COLOR: a user who opted out stays out.
    """
    if choice != "auto":
        return choice == "always"
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return is_terminal(stream)
