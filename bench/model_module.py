"""Writes a fitted model as the Python module web-fetch ships it in (fetch/reading/*_model.py).

Both models (the page type's weights, bench/fit_pagetype.py; the blocks' trees,
bench/fit_blocks.py) are data written the same way and loaded the same way: imported when the
first page needs them. A module, not JSON: importing its bytecode takes 1.8 ms where parsing
the page type's 35,000 weights as JSON takes 14 ms, on every web-fetch call (docs/development.md).
"""

from __future__ import annotations

import pprint
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def write_model(path: Path, about: str, constants: Mapping[str, tuple[str, object]]) -> None:
    """Write `constants` (name -> its type and value) as the module at `path`, under the
    docstring `about`; whole or not at all, so a tool importing it meanwhile never reads half a
    file. Floats are written by repr: they read back exactly."""
    lines = [f'"""{about}"""', ""]
    for name, (kind, value) in constants.items():
        shown = pprint.pformat(value, width=100, sort_dicts=False, compact=True)
        lines.append(f"{name}: {kind} = {shown}")
    partial = path.with_suffix(".partial")
    partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
    partial.replace(path)
