"""The verdict every benchmark prints: a figure against its target, PASS or FAIL.

`make bench` runs each bench/bench_*.py; a script exits 1 when any of its figures misses its
target, and `make bench` then exits non-zero after running them all.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What a host runs: the launchers `make` writes, not the console scripts behind them.
LAUNCHERS = ROOT / "libexec" / "ikigai"
failed: list[str] = []


def check(what: str, value: float, target: float, unit: str = "x", *, most: bool = True) -> str:
    """`value` against `target` (an upper bound, or a lower one with most=False), as text."""
    ok = value <= target if most else value >= target
    if not ok:
        failed.append(what)
    bound = "<=" if most else ">="
    return f"{value:.2f}{unit} (target {bound} {target:g}{unit}) {'PASS' if ok else 'FAIL'}"


def exit_code() -> int:
    if failed:
        print("FAIL: " + "; ".join(failed))
    return 1 if failed else 0
