"""web-search-auto-tool's `main`, as a program whose wall clock, as its memory reads it, is
$CLOCK_AT (seconds since the epoch): a test moves time between two processes without
waiting for it (tests/tools/test_web_search_auto_memory.py)."""

from __future__ import annotations

import os

from ikigai_web.tools.fallback import recall
from ikigai_web.tools.web_search_auto import main

if __name__ == "__main__":
    at = float(os.environ["CLOCK_AT"])
    recall.now = lambda: at
    main()
