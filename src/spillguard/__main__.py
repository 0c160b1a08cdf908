from __future__ import annotations

from spillguard.cli import main

raise SystemExit(main())
