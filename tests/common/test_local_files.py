"""Local data a user (or an attacker who can write there) leaves: settings, credentials and the
cache, read with a size cap, regular files only, no deeper than ikigai_web.common.files.MAX_DEPTH,
and a cache directory nobody else can write to (issue 20, sections 4, 5 and 9).

Each case runs the installed tool as a host does, with a time limit: a hang or a crash fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD, Reply

from ikigai_web.common import cache, files
from ikigai_web.common.settings import cache_dir

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "libexec" / "ikigai"
VENV = ROOT / ".venv" / "bin"
FIXTURES = Path(__file__).parents[1] / "fixtures"
KEY = "BSA-local-files-1234"
AS_ROOT = os.geteuid() == 0
DEEP_TOML = "a = " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_JSON = "[" * 3000 + "]" * 3000


def run(argv: list[str], env: dict[str, str], call: Any = None) -> subprocess.CompletedProcess[str]:
    data = json.dumps(call) if call is not None else ""
    return subprocess.run(argv, input=data, capture_output=True, text=True, env=os.environ | env,
                          timeout=2 * HANG_GUARD, check=False)  # fmt: skip


def search(fake_server, config: Path, **env: str) -> tuple[dict[str, Any], float]:
    body = json.loads((FIXTURES / "brave" / "search.json").read_text())
    url = fake_server.route("/brave", Reply(200, body))
    started = time.monotonic()
    proc = run([str(BIN / "web-search-brave-tool")], {"BRAVE_SEARCH_API_URL": url, **env},
               {"query": "ikigai", "count": 3})  # fmt: skip
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    del config
    return json.loads(proc.stdout), took


# --- credentials.json ------------------------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    path.write_text(json.dumps({"BRAVE_API_KEY": "k" * (50 * 1024 * 1024)}))


def _deep(path: Path) -> None:
    path.write_text(DEEP_JSON)


def _directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_fifo, "could not be read (not a regular file)"),
        (_dev_zero, "could not be read (not a regular file)"),
        (_huge, "could not be read (larger than 65,536 bytes)"),
        (_deep, "is not valid JSON (nested deeper than 32 levels)"),
        (_directory, "could not be read"),
    ],
    ids=["fifo", "dev-zero", "50-MB", "nested-3000", "directory"],
)
def test_a_credentials_file_that_is_no_small_json_file_is_named_not_a_hang(
    fake_server, isolated_env, make, said
):
    make(isolated_env / "credentials.json")
    out, took = search(fake_server, isolated_env)
    assert took < HANG_GUARD
    assert out["error_code"] == "AUTH_MISSING"
    assert f"{isolated_env / 'credentials.json'} {said}" in out["error"]
    doctor = run([str(VENV / "web-tools"), "doctor"], {})  # must not hang either
    assert doctor.returncode == 1
    assert said in doctor.stdout


@pytest.mark.loopback
def test_keys_still_come_from_the_environment_beside_a_bad_file(fake_server, isolated_env):
    _fifo(isolated_env / "credentials.json")
    out, _ = search(fake_server, isolated_env, BRAVE_API_KEY=KEY)
    assert out["success"], out


# --- web-tools.toml --------------------------------------------------------------------------


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("content", "said"),
    [
        (DEEP_TOML, "nested deeper than 32 levels"),
        ("x = 1\n" * 20_000, "larger than 65,536 bytes"),
    ],
    ids=["nested-3000", "too-large"],
)
def test_a_settings_file_too_deep_or_too_large_is_invalid_input(
    fake_server, isolated_env, content, said
):
    (isolated_env / "web-tools.toml").write_text(content)
    out, took = search(fake_server, isolated_env, BRAVE_API_KEY=KEY)
    assert took < HANG_GUARD
    assert out["error_code"] == "INVALID_INPUT"
    assert out["error"].startswith(f"the settings file {isolated_env / 'web-tools.toml'}")
    assert said in out["error"]
    doctor = run([str(VENV / "web-tools"), "doctor"], {})
    assert doctor.returncode == 1
    assert said in doctor.stdout


@pytest.mark.loopback
def test_a_settings_file_that_is_a_fifo_is_no_hang(fake_server, isolated_env):
    os.mkfifo(isolated_env / "web-tools.toml")
    out, took = search(fake_server, isolated_env, BRAVE_API_KEY=KEY)
    assert took < HANG_GUARD
    assert out["error_code"] == "INVALID_INPUT"
    assert "not a regular file" in out["error"]


@pytest.mark.loopback
def test_hundreds_of_unknown_keys_give_a_few_warnings_and_the_results(fake_server, isolated_env):
    keys = "".join(f"unknown_key_{n} = {n}\n" for n in range(600))
    (isolated_env / "web-tools.toml").write_text(keys)
    out, _ = search(fake_server, isolated_env, BRAVE_API_KEY=KEY)
    assert out["success"]
    assert out["count"] == 3
    messages = [w["message"] for w in out["warnings"]]
    assert len(messages) == 4
    assert messages[-1].endswith("sets 597 more keys that are no settings.")
    assert len(json.dumps(out["warnings"])) < 1500


# --- the cache ---------------------------------------------------------------------------------


def test_a_cache_entry_nested_deep_is_discarded_not_a_crash(isolated_env):
    cache.put("ns", "k", [1], 60)
    path = cache._entry_path("ns", "k")
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(f'{{"stored": {time.time()}, "value": {deep}}}')
    hit = cache.get("ns", "k", 60)
    assert hit.value is None
    assert hit.warning is not None
    assert "nested deeper than 32 levels" in hit.warning
    assert not path.exists()


def test_shallow_measures_any_depth_without_recursion():
    value: Any = 1
    for _ in range(200_000):
        value = [value]
    with pytest.raises(ValueError, match="nested deeper than 32 levels"):
        files.shallow(value)
    assert files.shallow({"a": [{"b": [1]}]}) == {"a": [{"b": [1]}]}


def test_an_own_cache_open_to_others_is_closed_and_still_used(isolated_env):
    cache.put("ns", "k", [1], 60)
    root = cache_dir()
    for place in (root, root / "ns"):
        place.chmod(0o777)
    hit = cache.get("ns", "k", 60)
    assert hit == cache.Hit([1])
    assert (root.stat().st_mode & 0o777, (root / "ns").stat().st_mode & 0o777) == (0o700, 0o700)


@pytest.mark.skipif(not AS_ROOT, reason="making a file another user's takes root (CI runs as root)")
def test_an_entry_planted_by_another_user_is_discarded(isolated_env):
    cache.put("ns", "k", [1], 60)
    path = cache._entry_path("ns", "k")
    os.chown(path, 65534, 65534)  # as if `nobody` wrote it while the directory was open
    hit = cache.get("ns", "k", 60)
    assert hit.value is None
    assert hit.warning is not None
    assert "written by another user" in hit.warning


@pytest.mark.skipif(not AS_ROOT, reason="making a directory another user's takes root")
@pytest.mark.loopback
def test_a_cache_directory_of_another_user_is_skipped_with_a_warning(fake_server, isolated_env):
    env = {"BRAVE_API_KEY": KEY}
    first, _ = search(fake_server, isolated_env, **env)
    assert first["success"]
    root = cache_dir()
    os.chown(root, 65534, 65534)
    again, _ = search(fake_server, isolated_env, **env)
    assert "cached" not in again
    [warning] = [w for w in again["warnings"] if w["code"] == "CACHE"]
    assert warning["message"] == f"the cache at {root} was skipped: {root} belongs to another user"
    assert len(fake_server.seen) == 2  # asked again: nothing from the other user's cache
