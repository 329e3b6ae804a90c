"""One name in four places: console script, module, schema name, launcher. And fast schemas."""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import BIN

from ikigai_web.common import launchers

ROOT = Path(__file__).resolve().parents[2]
ALL_SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
    "scripts"
]
# The tools are the `*-tool` scripts; `web-tools` is the host side, not a tool.
SCRIPTS = {name: target for name, target in ALL_SCRIPTS.items() if name.endswith("-tool")}
HEAVY = (
    "httpx",
    "httpcore",
    "lxml",
    "trafilatura",
    "readability",
    "pypdfium2",
    "mammoth",
    "openpyxl",
    "pptx",
    "protego",
    "charset_normalizer",
)


def schema_name(script: str) -> str:
    return script.removesuffix("-tool").replace("-", "_")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script_module_and_schema_agree(script):
    name = schema_name(script)
    assert script.endswith("-tool")
    assert SCRIPTS[script] == f"ikigai_web.tools.{name}:main"
    assert (ROOT / "ikigai_web" / "tools" / f"{name}.py").is_file()
    module = importlib.import_module(f"ikigai_web.tools.{name}")
    assert module.SCHEMA["name"] == name
    assert callable(module.main)
    assert (BIN / script).is_file()


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_schema_is_a_valid_tool_description(script):
    schema = importlib.import_module(f"ikigai_web.tools.{schema_name(script)}").SCHEMA
    assert set(schema) == {"name", "description", "parameters"}
    params = schema["parameters"]
    assert params["type"] == "object"
    assert set(params["required"]) <= set(params["properties"])
    for prop in params["properties"].values():
        assert prop.get("type") in {"string", "integer", "number", "boolean", "array", "object"}
        assert prop.get("description")


def test_makefile_builds_a_launcher_for_every_script():
    listed = subprocess.run(
        ["make", "-s", "tools"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert sorted(listed.stdout.split()) == sorted(SCRIPTS)


def test_only_tool_scripts_are_tools():
    assert ALL_SCRIPTS["web-tools"] == "ikigai_web.host.cli:main"
    assert "web-tools" not in launchers.tools()
    assert launchers.tools() == SCRIPTS


def test_install_recipes_keep_paths_with_spaces_whole():
    prefix, home = "/tmp/a prefix", "/tmp/a home"
    out = subprocess.run(
        ["make", "-n", "install", "install-user", "uninstall", f"PREFIX={prefix}", f"HOME={home}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    words = [w for line in out.stdout.replace("\\\n", " ").splitlines() for w in shlex.split(line)]
    paths = [w for w in words if w.startswith("/tmp/a")]
    assert len(paths) > 10
    assert all(w.startswith((prefix, home)) for w in paths), paths
    assert f"{prefix}/bin/web-tools" in words  # `web-tools` goes on PATH with the install


def test_launchers_answer_schema_without_python_and_exec_the_script(tmp_path):
    written = launchers.write_all(tmp_path, BIN)
    assert sorted(p.name for p in written) == sorted(SCRIPTS)
    for path in written:
        schema = importlib.import_module(f"ikigai_web.tools.{schema_name(path.name)}").SCHEMA
        out = subprocess.run([str(path), "--schema"], capture_output=True, check=True)
        assert json.loads(out.stdout) == schema
        assert out.stdout.count(b"\n") == 1
        call = subprocess.run([str(path)], input=b"", capture_output=True, check=False)
        assert call.returncode == 1
        assert f"{schema['name']}: empty input" in call.stderr.decode()


def _launch(path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(path), *args], input=b'{"query": "ikigai"}', capture_output=True, check=False
    )


def test_a_moved_launcher_target_fails_schema_and_calls_alike(tmp_path):
    """After the checkout moves, a host must not list a tool whose every call would fail."""
    bin_dir = tmp_path / "checkout" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    script = bin_dir / "web-fetch-tool"
    script.write_text("#!/bin/sh\necho '{\"success\": true}'\n")
    script.chmod(0o755)
    launcher = launchers.write_all(tmp_path / "libexec", bin_dir)[0]
    assert launcher.name == "web-fetch-tool"
    assert _launch(launcher).stdout == b'{"success": true}\n'
    assert json.loads(_launch(launcher, "--schema").stdout)["name"] == "web_fetch"
    bin_dir.parent.parent.rename(tmp_path / "moved")
    said = launchers.gone_message("web-fetch-tool", script) + "\n"
    for args in ((), ("--schema",), ("--help",)):
        out = _launch(launcher, *args)
        assert (out.returncode, out.stdout, out.stderr.decode()) == (127, b"", said)


def test_a_launcher_whose_python_is_gone_fails_alike(tmp_path):
    bin_dir = tmp_path / "a bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(tmp_path / "uninstalled-python")
    script = bin_dir / "web-fetch-tool"
    script.write_text("#!/bin/sh\necho '{}'\n")
    script.chmod(0o755)
    launcher = launchers.write_all(tmp_path / "libexec", bin_dir)[0]
    for args in ((), ("--schema",)):
        out = _launch(launcher, *args)
        assert (out.returncode, out.stdout) == (127, b"")
        assert out.stderr.decode().splitlines() == [launchers.gone_message(script.name, script)]
    assert "make install" in launchers.gone_message(script.name, script)


def test_a_launchers_target_is_read_back(tmp_path):
    target = launchers.tools()["web-fetch-tool"]
    path = tmp_path / "web-fetch-tool"
    path.write_text(launchers.launcher("web-fetch-tool", target, tmp_path / "a bin"))
    assert launchers.target(path) == tmp_path / "a bin" / "web-fetch-tool"
    path.write_text("#!/bin/sh\nexec /usr/bin/true\n")
    assert launchers.target(path) is None
    assert launchers.target(tmp_path / "missing") is None


def test_launcher_quotes_awkward_text():
    assert launchers.quote("it's") == "'it'\\''s'"
    out = subprocess.run(
        ["sh", "-c", "printf %s " + launchers.quote("a'b $HOME `x`")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == "a'b $HOME `x`"


def test_generated_launchers_are_current():
    """The checkout's libexec/ikigai, when `make` has built it, matches the modules."""
    built = ROOT / "libexec" / "ikigai"
    if not built.is_dir():
        pytest.skip("launchers not generated (run `make`)")
    for script, target in launchers.tools().items():
        assert (built / script).read_text() == launchers.launcher(script, target, BIN)


def test_schema_path_imports_nothing_heavy():
    modules = ", ".join(f"ikigai_web.tools.{schema_name(s)}" for s in SCRIPTS)
    code = f"import sys, {modules}; "
    code += f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_tools_are_this_distributions_own_and_none_when_it_is_not_installed(monkeypatch):
    from importlib.metadata import PackageNotFoundError

    found = launchers.tools()
    assert set(found) == set(SCRIPTS)
    assert found["web-fetch-tool"] == "ikigai_web.tools.web_fetch:main"

    def missing(name: str) -> None:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(launchers, "distribution", missing)
    assert launchers.tools() == {}
