"""Writing to a stdout that may be gone: False and nothing said, never an exception."""

from __future__ import annotations

import io
import os
import sys

from ikigai_web.common.stdout import silence, write_text


def test_a_stdout_closed_from_the_start_takes_nothing(monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    assert write_text("x") is False


def test_a_reader_gone_is_silenced_and_said_nothing(monkeypatch):
    read, written = os.pipe()
    os.close(read)  # the reader is gone: a write raises BrokenPipeError
    stream = io.TextIOWrapper(io.FileIO(written, "w"), write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    assert write_text("x" * 100_000) is False
    assert write_text("again") is True  # now writes into /dev/null
    stream.close()


def test_a_stream_without_a_descriptor_is_left_as_it_is():
    silence(io.StringIO())
