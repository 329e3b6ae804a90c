"""Keeps the libraries web-fetch drives from writing to stderr behind its back.

With no logging set up, Python prints a library's warnings to stderr itself (pypdf's
"EOF marker not found", trafilatura's and htmldate's notes about odd pages). A tool's stderr is
for its own usage errors only, so these libraries' records get a handler that drops them, as
libraries are meant to ship with, and their `warnings` are ignored for the call.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

LIBRARIES = (
    "pypdf", "trafilatura", "htmldate", "courlan", "justext", "readability", "lxml",
    "markdownify", "charset_normalizer", "protego", "webencodings", "httpx", "httpcore",
)  # fmt: skip


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    for name in LIBRARIES:
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
