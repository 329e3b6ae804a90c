"""Installs that cannot break: every documented route, in temporary directories, and every
installed tool answering `--schema` and a call.

The routes: the wheel with pipx and with uv (`pipx install .` and `uv tool install .` build
the same wheel), and `make install` with a PREFIX holding spaces, `make install-user` and
`make uninstall` with HOME in a temporary directory. Each installs the dependencies from the
package index, so this is `make test-install`, which CI runs after `make test`; `make test`
leaves them out (the `install` marker).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import BIN, Reply

from ikigai_web.common import __version__
from ikigai_web.search.registry import WITH_CREDENTIALS as PROVIDERS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from conftest import FakeServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    name
    for name in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    if name.endswith("-tool")
)
# Without credentials these answer AUTH_MISSING before any request.
KEYED = sorted(p.tool.replace("_", "-") + "-tool" for p in PROVIDERS.values())
# The others reach a server on 127.0.0.1: web-fetch through its private-address switch, the
# keyless search through its endpoint override.
LOOPBACK = ["web-fetch-tool", "web-search-auto-tool", "web-search-duckduckgo-tool"]
# Read before the tests point XDG_CACHE_HOME elsewhere: the routes are under test, not the
# index, so packages already downloaded are reused.
DOWNLOADS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
INSTALL_TIMEOUT = 900
CALL_TIMEOUT = 60
ARTICLE = b"""<!DOCTYPE html><html><head><title>Installed</title></head><body>
<nav><a href="/">Home</a></nav><main><article><h1>Installed</h1>
<p>This page is served on the loopback address to a web-fetch-tool that was just installed,
and its main content must come back as markdown, whole and readable, through every route.</p>
<p>A second paragraph gives the extractor enough text to be sure this is the article.</p>
</article></main></body></html>"""
HTML = {"Content-Type": "text/html; charset=utf-8"}


def test_every_tool_is_checked_here():
    assert sorted(KEYED + LOOPBACK) == SCRIPTS


def run(argv: Sequence[object], env: dict[str, str] | None = None, **kw: Any) -> str:
    """Run an install step; its output is the failure message when it fails."""
    out = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        env=os.environ | (env or {}),
        timeout=INSTALL_TIMEOUT,
        check=False,
        **kw,
    )
    assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return str(out.stdout)


def downloads() -> dict[str, str]:
    return {"PIP_CACHE_DIR": str(DOWNLOADS / "pip"), "UV_CACHE_DIR": str(DOWNLOADS / "uv")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", dist, ROOT], downloads())
    (built,) = dist.glob("ikigai_web_tools-*.whl")
    return built


def schema_of(script: str) -> dict[str, Any]:
    module = importlib.import_module(
        "ikigai_web.tools." + script.removesuffix("-tool").replace("-", "_")
    )
    schema: dict[str, Any] = module.SCHEMA
    return schema


def call(path: Path, payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """One protocol call of an installed tool: exit 0 and one JSON line, as a host needs."""
    out = subprocess.run(
        [str(path)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=os.environ | env,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    assert out.returncode == 0, f"{path.name}: exit {out.returncode}: {out.stderr.decode()}"
    assert out.stdout.count(b"\n") == 1, out.stdout
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


def check_tools(directory: Path, server: FakeServer) -> None:
    """Every tool is in `directory`, answers `--schema` with its schema, and answers a call."""
    assert sorted(p.name for p in directory.iterdir() if p.name.endswith("-tool")) == SCRIPTS
    for script in SCRIPTS:
        argv = [str(directory / script), "--schema"]
        schema = subprocess.run(argv, capture_output=True, timeout=CALL_TIMEOUT, check=False)
        assert (schema.returncode, json.loads(schema.stdout)) == (0, schema_of(script))
    for script in KEYED:
        answer = call(directory / script, {"query": "ikigai"}, {})
        assert answer["error_code"] == "AUTH_MISSING", answer
        assert answer["_event"]["kind"] == "config_required"
    check_loopback_calls(directory, server)


def check_loopback_calls(directory: Path, server: FakeServer) -> None:
    page = {"url": server.route("/article", Reply(200, ARTICLE, HTML))}
    private = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}
    fetched = call(directory / "web-fetch-tool", page, private)
    assert (fetched["success"], fetched["title"]) == (True, "Installed"), fetched
    assert "must come back as markdown, whole and readable" in " ".join(fetched["content"].split())
    results = (ROOT / "tests" / "fixtures" / "duckduckgo" / "html_results.html").read_bytes()
    search = {"DUCKDUCKGO_HTML_URL": server.route("/html/", Reply(200, results, HTML))}
    query = {"query": "what is ikigai", "max_results": 3}
    found = call(directory / "web-search-duckduckgo-tool", query, search)
    assert (found["provider"], found["count"]) == ("duckduckgo", 3), found
    order = {"IKIGAI_WEB_SEARCH_ORDER": "brave,duckduckgo"}
    auto = call(directory / "web-search-auto-tool", {"query": "ikigai"}, search | order)
    assert auto["provider"] == "duckduckgo", auto
    assert [w["code"] for w in auto["warnings"]] == ["AUTH_MISSING"]


def check_web_tools(web_tools: Path, cwd: Path, env: dict[str, str] | None = None) -> None:
    """`web-tools` is on PATH with the tools, and finds every one of them."""
    assert run([web_tools, "--version"], env) == f"web-tools {__version__}\n"
    listed = json.loads(run([web_tools, "list", "--json"], env, cwd=cwd))
    # Every tool is found; those without a key are found but not served (as `web-tools mcp`).
    found = sorted(row["name"] for row in listed if row["status"] in ("served", "not_served"))
    assert found == sorted(s.removesuffix("-tool").replace("-", "_") for s in SCRIPTS)
    served = {row["name"] for row in listed if row["status"] == "served"}
    assert {"web_fetch", "web_search_duckduckgo", "web_search_auto"} <= served
    assert all("not set up" in row["reason"] for row in listed if row["status"] == "not_served")


@pytest.mark.install
def test_the_wheel_carries_the_licence_and_its_one_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    # One import name of its own: nothing generic (common, tools) in a shared site-packages.
    assert {n.split("/")[0] for n in names if "/" in n and ".dist-info" not in n} == {"ikigai_web"}


@pytest.mark.install
def test_pipx_install_puts_every_tool_on_path(wheel, tmp_path, fake_server):
    bin_dir = tmp_path / "bin"
    env = downloads() | {
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(bin_dir),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    run([BIN / "pipx", "install", wheel], env)
    check_tools(bin_dir, fake_server)
    check_web_tools(bin_dir / "web-tools", tmp_path)


@pytest.mark.install
def test_uv_tool_install_puts_every_tool_on_path(wheel, tmp_path, fake_server):
    bin_dir = tmp_path / "bin"
    env = downloads() | {
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_PYTHON_DOWNLOADS": "never",  # the Python this test runs on, never a download
    }
    run([BIN / "uv", "tool", "install", "--python", sys.executable, wheel], env)
    check_tools(bin_dir, fake_server)
    check_web_tools(bin_dir / "web-tools", tmp_path)


@pytest.mark.install
def test_make_install_with_spaces_install_user_and_uninstall(tmp_path, fake_server):
    prefix, home = tmp_path / "a prefix" / "with spaces", tmp_path / "a home"
    user_tools = home / ".ikigai" / "tools"
    user_tools.mkdir(parents=True)
    (user_tools / "theirs-tool").write_text("#!/bin/sh\n")  # another project's: kept
    make = ["make", "-s", "-C", str(ROOT), f"PREFIX={prefix}"]
    env = downloads() | {"HOME": str(home)}
    run([*make, "install-user"], env)
    launchers = prefix / "libexec" / "ikigai"
    check_tools(launchers, fake_server)
    for script in SCRIPTS:
        assert (user_tools / script).resolve() == (launchers / script).resolve()
    check_web_tools(prefix / "bin" / "web-tools", tmp_path, env)
    # Only some tools offered to the host (each schema costs tokens in every request).
    for script in SCRIPTS:
        (user_tools / script).unlink()
    subset = ["web-fetch-tool", "web-search-auto-tool"]
    run([*make, "install-user", f"TOOLS={' '.join(subset)}"], env)
    assert sorted(p.name for p in user_tools.iterdir()) == ["theirs-tool", *subset]
    run([*make, "uninstall"], env)
    assert sorted(p.name for p in user_tools.iterdir()) == ["theirs-tool"]
    assert not (prefix / "lib" / "ikigai-web-tools").exists()
    assert not list(launchers.iterdir())
    assert not (prefix / "bin" / "web-tools").exists()


@pytest.mark.install
def test_the_pip_python_3_11_7_ships_installs_the_wheel(wheel, tmp_path):
    """pip 23.2.1 crashed on lxml's extra spelt two ways until the project asked for it too."""
    python = tmp_path / "venv" / "bin" / "python"
    run([sys.executable, "-m", "venv", tmp_path / "venv"])
    run([python, "-m", "pip", "install", "-q", "pip==23.2.1"], downloads())
    run([python, "-m", "pip", "install", "-q", "--dry-run", wheel], downloads())
