"""Bad input, property-based: every tool, fed arbitrary bytes, arbitrary JSON and objects with
the right keys and wrong values, answers as the protocol says and never crashes.

Each example must end either in exit 1 with one line on stderr and nothing on stdout (and
only when the input is unusable as a call: protocol.md, section 2), or in exit 0 with one
JSON object in the contract's shape within the output budget. Thousands of examples run in
this process through `ikigai_web.common.runner.run`; a few run through the installed executables.

No example reaches the network: the tools are configured with credentials and endpoints on a
loopback port nobody listens on, and host names never resolve (DNS itself is replaced).
The examples are derandomized: the same on every run, so CI cannot turn red by chance; set
HYPOTHESIS_PROFILE=explore for new random ones.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from toolbox import KEYS, PROFILES, SCRIPTS, check_answer, closed_port, schema, tool

from ikigai_web.common.runner import MAX_INPUT_BYTES, run

# Nothing is mocked: the requests that fuzzed calls make must really fail, offline.
pytestmark = pytest.mark.httpx_mock(should_mock=lambda _: False)

TOOLS = sorted(SCRIPTS)
_COMMON = {
    "deadline": None,
    "database": None,  # nothing written to the work tree
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,  # the fixtures only set the environment
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}
settings.register_profile("ci", derandomize=True, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("explore", **_COMMON)  # type: ignore[arg-type]
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
SCALE = 10 if PROFILE == "explore" else 1  # exploring: random, and ten times as many
IN_PROCESS = settings(settings.get_profile(PROFILE), max_examples=60 * SCALE)
TOOL_INPUTS = settings(IN_PROCESS, max_examples=150 * SCALE)  # the inputs that reach the tools
SETTINGS_INPUTS = settings(IN_PROCESS, max_examples=40 * SCALE)
PROCESSES = settings(settings.get_profile(PROFILE), max_examples=4 * SCALE)

# DNS answers only for IP literals, which need no network: installed in this process by a
# fixture and in the executables by sitecustomize.
OFFLINE_DNS = """
import ipaddress, socket
_real = socket.getaddrinfo
def _offline(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(name.strip("[]").split("%")[0])
    except ValueError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
    return _real(host, *args, **kwargs)
socket.getaddrinfo = _offline
"""


@pytest.fixture
def offline(monkeypatch, tmp_path) -> Path:
    """Every tool configured, every endpoint refused, no name resolved; the directory of a
    sitecustomize that does the same for the executables."""
    base = closed_port()
    for profile in PROFILES.values():
        for name, value in (profile.env(base) | profile.keys).items():
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("SEARXNG_AUTH", "fuzz-user:fuzz-password")
    # Short, and too short for a retry (a retry needs a second to spare): refusals are quick.
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1.1")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,google,tavily,searxng,duckduckgo")
    site: Path = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(OFFLINE_DNS)
    monkeypatch.setattr(socket, "getaddrinfo", socket.getaddrinfo)  # restored after the test
    exec(compile(OFFLINE_DNS, "offline-dns", "exec"), {})  # the same patch, in this process
    return site


# --- strategies ----------------------------------------------------------------------------

ODD_CHARACTERS = st.sampled_from(
    ["\x00", "\x1b", "\x7f", "\u202e", "\u200b", "\ufeff", "\ud800", "\udfff", "\udc80", "\n"]
)
TEXT = st.text(st.one_of(st.characters(), ODD_CHARACTERS), max_size=40)
HUGE_TEXT = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(["a", "é", "\x00", "\ud800", "日本", "a b", "%", "\\"]),
    st.integers(500, 30_000),  # past every length limit, and the output budget
)
HUGE_INTS = st.sampled_from(
    [2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 2**64 + 1, -(2**63) - 1, 10**30, -(10**400)]
)
NUMBERS = st.one_of(
    st.integers(-1000, 1000),
    HUGE_INTS,
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, -0.0, 1.0, 3.0, 1e308, 5e-324, -1.0, 20.0000001]),
)
NAN_LIKE = st.sampled_from(["NaN", "nan", "Infinity", "-Infinity", "1e999", "-0", "0x10", "١٢"])
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, NAN_LIKE)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
HOSTS = st.sampled_from(
    ["example.com", "Example.COM.", "127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254",
     "0x7f.1", "localhost", "xn--bcher-kva.test", "bücher.test", "user:pw@example.com",
     "evil.com\\@wikipedia.org", "a" * 300, "", "exa mple.com", "example.com:99999", "[::1",
     "*.example.com", ".example.com", "-bad-.com", "example..com", "\ud800.com"]
)  # fmt: skip
DOMAINS = st.sampled_from(["example.com", "docs.python.org", "en.wikipedia.org", "xn--p1ai"])
URLS = st.builds(
    "{}{}{}".format,
    st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "javascript:", "//", ""]),
    HOSTS,
    st.sampled_from(["", "/", "/a?b=c&api_key=s3cr3t", "/%zz", "/\ud800", "#top", "/ x"]),
)
WEB_URLS = st.builds(
    "{}{}/{}".format,
    st.sampled_from(["http://", "https://"]),
    st.one_of(DOMAINS, st.sampled_from(["127.0.0.1", "[::1]", "user:pw@example.com"])),
    TEXT,
)
QUERIES = st.one_of(
    TEXT,
    HUGE_TEXT,
    st.sampled_from(["ab", "  ab  ", "site:example.com rust", "!w ikigai", "a" * 400, "\t\n"]),
)


Valued = Callable[[dict[str, Any]], st.SearchStrategy[Any]]


def _typed(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the property's own JSON type, near and past its limits."""
    kind = prop.get("type", "string")
    if kind == "integer":
        lo, hi = prop.get("minimum", -5), prop.get("maximum", 10**9)
        return st.integers(lo - 2, hi + 2) | HUGE_INTS | st.sampled_from([float(lo), lo + 0.5])
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(st.one_of(HOSTS, URLS, TEXT), max_size=5)
    words = [*prop.get("enum", []), *(w.upper() for w in prop.get("enum", []))]
    return st.one_of(QUERIES, URLS, st.sampled_from(words or ["", " "]))


def _any(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.one_of(_typed(prop), JSON_VALUES, HUGE_TEXT)


def _plausible(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value of the property's type within its limits: the call gets past the checks."""
    kind = prop.get("type", "string")
    if kind == "integer":
        return st.integers(prop.get("minimum", 0), prop.get("maximum", 100))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(DOMAINS, max_size=3)
    return st.sampled_from([*prop.get("enum", []), "", " ", "any", "default"])


def _objects(
    script: str, required: st.SearchStrategy[Any], optional: Valued
) -> st.SearchStrategy[bytes]:
    """Objects with the tool's own keys, the required ones valued by `required`, the others
    (when present) by `optional`, plus unknown keys with any JSON."""
    parameters = schema(script)["parameters"]
    needed = parameters["required"]
    props = {k: v for k, v in parameters["properties"].items() if k not in needed}
    objects = st.fixed_dictionaries(
        dict.fromkeys(needed, required), optional={k: optional(p) for k, p in props.items()}
    )
    extra = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
    return st.builds(lambda known, more: json.dumps(more | known).encode(), objects, extra)


def wrong_values(script: str) -> st.SearchStrategy[bytes]:
    """The tool's keys with values of any type or past every limit: most calls stop at
    exit 1 or INVALID_INPUT."""
    required = schema(script)["parameters"]["required"]
    prop = schema(script)["parameters"]["properties"][required[0]]
    return _objects(script, _any(prop), _any)


def hostile_text(script: str) -> st.SearchStrategy[bytes]:
    """The tool's keys with plausible values but for the query or URL, whose text is hostile
    (controls, surrogates, bidi, odd hosts): most calls get past the checks to a request,
    which the endpoint refuses."""
    return _objects(script, st.one_of(TEXT, QUERIES, URLS, WEB_URLS), _plausible)


JSON_TEXT = JSON_VALUES.map(lambda v: json.dumps(v).encode())
BYTES = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda data, cut: data[:cut], JSON_TEXT, st.integers(0, 60)),  # cut short
    JSON_VALUES.map(lambda v: json.dumps({"query": v, "url": v, "n": float("nan")}).encode()),
    st.builds(lambda v, enc: json.dumps(v).encode(enc), JSON_VALUES, st.sampled_from(
        ["utf-16", "utf-32", "utf-8-sig"])),
    st.sampled_from([b"", b" \n", b"\xff\xfe", b"{", b"[" * 50_000, b'{"query": "a"}' * 2]),
)  # fmt: skip


# --- the property --------------------------------------------------------------------------


def usable(data: bytes, script: str) -> bool:
    """Whether `data` is usable as a call (protocol.md, section 2): else exit 1."""
    parameters = schema(script)["parameters"]
    if len(data) > MAX_INPUT_BYTES or not data.strip():
        return False
    try:
        call = json.loads(data, parse_constant=_reject)
    except (ValueError, RecursionError):
        return False
    if not isinstance(call, dict):
        return False
    kinds = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}
    for name in parameters["required"]:
        kind = kinds[parameters["properties"][name].get("type", "string")]
        value = call.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            return False
    return True


def _reject(word: str) -> None:
    raise ValueError(word)


def answers_by_contract(script: str, data: bytes, code: int, stdout: bytes, stderr: str) -> None:
    name = schema(script)["name"]
    assert code in (0, 1), f"exit {code}: {stderr}"
    if code == 1:
        assert stdout == b"", stdout
        assert stderr.startswith(f"{name}: "), stderr
        assert stderr.endswith("\n"), stderr
        assert stderr.count("\n") == 1, stderr
    else:
        assert stderr == "", stderr
        check_answer(stdout, name)
    assert (code == 0) is usable(data, script), (code, stdout, stderr)


def call(script: str, data: bytes) -> tuple[int, bytes, str]:
    """One call through the protocol runner, in this process."""
    out, err = io.BytesIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run(tool(script), [], io.BytesIO(data), out)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("script", TOOLS)
@pytest.mark.parametrize(
    "inputs",
    [BYTES, JSON_TEXT, wrong_values, hostile_text],
    ids=["bytes", "json", "wrong-values", "hostile-text"],
)
def test_any_input_gets_an_answer_by_the_contract(offline, script, inputs):
    strategy = inputs(script) if callable(inputs) else inputs

    @(TOOL_INPUTS if callable(inputs) else IN_PROCESS)
    @given(data=strategy)
    def check(data: bytes) -> None:
        answers_by_contract(script, data, *call(script, data))

    check()


@pytest.mark.parametrize("script", TOOLS)
def test_the_executables_answer_by_the_contract_too(offline, script):
    env = os.environ | {"PYTHONPATH": str(offline)}
    exe = Path(sys.executable).parent / script

    @PROCESSES
    @given(data=st.one_of(BYTES, JSON_TEXT, wrong_values(script), hostile_text(script)))
    def check(data: bytes) -> None:
        proc = subprocess.run([str(exe)], input=data, capture_output=True, env=env,
                              timeout=60, check=False)  # fmt: skip
        answers_by_contract(script, data, proc.returncode, proc.stdout, proc.stderr.decode())

    check()


def test_the_fuzzed_calls_stay_offline(offline):
    """What keeps the examples off the network: names never resolve, ports refuse."""
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.com", 80)
    assert socket.getaddrinfo("127.0.0.1", 80)
    code, out, _ = call("web-search-brave-tool", b'{"query": "ikigai"}')
    assert (code, json.loads(out)["error_code"]) == (0, "NETWORK_ERROR")
    assert KEYS["BRAVE_API_KEY"] == os.environ["BRAVE_API_KEY"]


# --- bad settings and credentials: the environment is input too ------------------------------


def _variables() -> list[str]:
    """Every variable a tool reads: settings, credentials, endpoint overrides."""
    from ikigai_web.common.settings import Settings
    from ikigai_web.search.registry import WITH_CREDENTIALS as PROVIDERS

    names = [s.variable for s in Settings.every()]
    names += [n for p in PROVIDERS.values() for f in p.fields for n in f.env] + ["SEARXNG_AUTH"]
    names += [n for p in PROFILES.values() for n in p.env("http://127.0.0.1:9")]
    return sorted(set(names))


# Environment values cannot hold NUL; the surrogates they can hold are bytes that are not UTF-8.
ENV_TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8", exclude_characters="\x00"),
        st.sampled_from(["\udcff", "\udc80", "\x1b", "\n", "\t", "é", " ", "日"]),
    ),
    max_size=30,
)
ENV_VALUES = st.one_of(
    ENV_TEXT,
    st.sampled_from(["1", "0", "maybe", "25", "0.5", "1e999", "-1", "nan", "inf", "9" * 30,
                     "http://127.0.0.1:9/\udcff", "http://[::1", "ftp://x", "http://u:p@h:1/",
                     "10.0.0.0/99", "300.1.1.1", "brave,,bing", " ", "65001", "1023"]),
)  # fmt: skip


def _valid_call(script: str) -> str:
    required = schema(script)["parameters"]["required"][0]
    return json.dumps({required: "https://example.com/" if required == "url" else "ikigai"})


@pytest.mark.parametrize("script", TOOLS)
def test_any_setting_or_credential_gets_an_answer_by_the_contract(offline, script):
    from unittest import mock

    @SETTINGS_INPUTS
    @example(values={"SEARXNG_AUTH": "t\u00f6ken"})  # each crashed a tool once
    @example(values={"SEARXNG_AUTH": "user:p\u00e4ss"})  # fine: its Basic token is ASCII
    @example(values={"IKIGAI_WEB_USER_AGENT": "caf\u00e9"})
    @example(values={"BRAVE_API_KEY": "k\udcffey", "GEMINI_API_KEY": "k\u00e9y"})
    @example(values={"BRAVE_SEARCH_API_URL": "http://127.0.0.1:9/\udcff"})
    @example(values={"SEARXNG_AUTH": "000\udc80", "IKIGAI_WEB_FETCH_MAX_BYTES": "9" * 20})
    @example(values={"IKIGAI_WEB_CACHE_TTL": "9" * 30, "IKIGAI_WEB_FETCH_CACHE_TTL": "9" * 30})
    @example(values={"SEARXNG_URL": "A://["})
    @example(values={"SEARXNG_URL": "http://h:99999/"})
    @given(values=st.dictionaries(st.sampled_from(_variables()), ENV_VALUES, min_size=1,
                                  max_size=3))  # fmt: skip
    def check(values: dict[str, str]) -> None:
        data = _valid_call(script).encode()
        with mock.patch.dict(os.environ, values):
            code, out, err = call(script, data)
        assert code == 0, err
        assert err == "", err
        check_answer(out, schema(script)["name"])

    check()
