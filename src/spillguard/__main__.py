from __future__ import annotations

import sys

from spillguard.hooks.deletions import answer_bare_hook

# A push that only deletes refs is answered before the rest of spillguard loads.
answered = answer_bare_hook(sys.argv[1:])
if answered is not None:
    raise SystemExit(answered)

from spillguard.cli import main  # noqa: E402 - only for what was not answered above

raise SystemExit(main())
