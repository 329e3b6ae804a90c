"""The page's JSON read by the standard library as orjson read it (what reaches the readers
of JSON-LD and app data), and without orjson's import where it need not be."""

from __future__ import annotations

import random
import subprocess
import sys

import orjson
import pytest

from ikigai_web.fetch.reading.signals import json_value

# Where the two parsers differ unless told: constants, numbers beyond a double or 64 bits,
# surrogates raw and escaped, depth, and the ordinary cases beside them.
CASES = [
    "NaN", "[Infinity]", "-Infinity", "1e400", "-1e400", "[1e309]", "1e-400", "4.9e-324",
    "123456789012345678901234567890", "18446744073709551615", "18446744073709551616",
    "-9223372036854775808", "-9223372036854775809", "9" * 400, "1." + "9" * 400,
    '"\\ud800"', '"\\ud83d\\ude00"', '"\\udc00\\ud800"', '"\ud800"', '"\\\\ud800"',
    "\ufeff{}", '{"a":1,"a":2}', '"a\tb"', "[1,]", "1 2", " [] ", '"\\u0000"', "-0", "-0.0",
    "[" * 900 + "]" * 900, "[" * 1024 + "]" * 1024, "[" * 1025 + "]" * 1025,
    "[" * 5000 + "]" * 5000, '{"a":[1,2.5,{"b":null}],"c":true}', "01", ".5", "+1", "",
]  # fmt: skip


def _orjson(text: str) -> tuple[str, str]:
    try:
        return "ok", _shown(orjson.loads(text))
    except orjson.JSONDecodeError:
        return "refused", ""


def _ours(text: str) -> tuple[str, str]:
    try:
        return "ok", _shown(json_value(text))
    except ValueError:
        return "refused", ""


def _shown(value: object) -> str:
    """repr with types, deep values included (the test raises the limit to show them)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        return repr(value) + repr(type(value))
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("text", CASES)
def test_reads_as_orjson_did(text: str) -> None:
    assert _ours(text) == _orjson(text)


def test_random_text_reads_as_orjson_did() -> None:
    pieces = [*'{}[],:"\\ 0123456789.eE+-truefalsnNIy\tu', "\\u", "d8", "dc", "00", "\ud83d", "é"]
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        assert _ours(text) == _orjson(text), text


def test_plain_json_does_not_import_orjson() -> None:
    code = (
        "import sys; from ikigai_web.fetch.reading.signals import json_value;"
        'json_value(\'{"@type":"NewsArticle","n":[1,2.5,-3e5]}\');'
        "print('orjson' in sys.modules, 'uuid' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
