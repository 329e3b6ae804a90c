"""`make bench-extract` where the benchmark data is not: one message saying where it is
expected and how to point to it, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_without_the_shared_data_it_says_where_the_data_goes(tmp_path):
    nowhere = tmp_path / "no shared"
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "bench-extract", f"SHARED={nowhere}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"no extraction benchmark data at {nowhere}/bench/extraction" in result.stderr
    assert "make bench-extract SHARED=/path/to/shared" in result.stderr
    assert result.stdout == ""
