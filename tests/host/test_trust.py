"""A cloned repository's own tools do not run until the user trusts it (issue 20, section 3).

The project here is a checkout holding `.ikigai/tools/web-fetch-tool`, which leaves a mark
whenever it is run at all (`--schema` included): `web-tools list`, `doctor` and `mcp` inside it
must leave none, and must not let it replace this installation's web-fetch, until
`web-tools trust`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ikigai_web.host import trust

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
SCHEMA = {"name": "web_fetch", "description": "not yours", "parameters": {"type": "object"}}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A checkout with a tool that marks `ran` each time it runs, and a HOME of its own."""
    root = tmp_path / "cloned repo"
    tools = root / ".ikigai" / "tools"
    tools.mkdir(parents=True)
    mark = tmp_path / "ran"
    script = tools / "web-fetch-tool"
    script.write_text(f"#!/bin/sh\necho run >> '{mark}'\necho '{json.dumps(SCHEMA)}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root, mark


def web_tools(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "web-tools"), *args], cwd=root, capture_output=True,
                          text=True, input="", timeout=30, check=False)  # fmt: skip


def test_list_doctor_and_mcp_do_not_run_an_untrusted_projects_tools(project):
    root, mark = project
    listed = web_tools(root, "list", "--json")
    doctor = web_tools(root, "doctor")
    served = web_tools(root, "mcp")  # no client: it starts, serves nothing, and ends
    assert not mark.exists()
    rows = {(r["name"], r["origin"]): r for r in json.loads(listed.stdout)}
    project_row = rows[("web_fetch", "project")]
    assert project_row["status"] == "skipped"
    assert project_row["reason"].startswith("not run: untrusted project: run `web-tools trust ")
    assert rows[("web_fetch", "installation")]["status"] == "served"  # not taken over
    assert f"web-tools trust {root}" in doctor.stdout
    assert "an ikigai host started here runs them regardless" in doctor.stdout
    assert "not run: untrusted project" in served.stderr


def test_trusting_the_project_lets_its_tools_run_and_untrust_takes_it_back(project):
    root, mark = project
    said = web_tools(root, "trust")
    assert said.returncode == 0
    assert str(root) in said.stdout
    listed = json.loads(web_tools(root, "list", "--json").stdout)
    assert mark.exists()
    served = [r for r in listed if r["name"] == "web_fetch" and r["status"] == "served"]
    assert [r["origin"] for r in served] == ["project"]
    mark.unlink()
    assert web_tools(root, "untrust").returncode == 0
    web_tools(root, "list")
    assert not mark.exists()


def test_a_trust_list_others_can_write_to_is_not_used(project):
    root, mark = project
    path = trust.trust(root)
    path.chmod(0o666)
    web_tools(root, "list")
    assert not mark.exists()
    doctor = web_tools(root, "doctor")
    assert f"{path} is not used: others may write to it" in doctor.stdout


@pytest.mark.parametrize("command", ["trust", "untrust"])
def test_a_list_that_is_not_used_is_not_rewritten(project, tmp_path, command):
    # Rewriting it from what was read (nothing) would drop every other trusted project.
    root, _ = project
    path = trust.trust(tmp_path / "another project")
    path.chmod(0o666)
    said = web_tools(root, command)
    assert said.returncode == 1
    assert f"web-tools {command}: {path} is not used: others may write to it" in said.stderr
    assert "check the projects it lists, then run this again" in said.stderr
    assert path.read_text() == f"{tmp_path / 'another project'}\n"


def test_a_trust_list_that_is_a_fifo_is_not_used_and_hangs_nothing(project):
    root, mark = project
    path = trust.list_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    listed = web_tools(root, "list")
    assert listed.returncode == 0
    assert not mark.exists()


def test_trust_is_for_the_exact_directory(project, tmp_path):
    root, _ = project
    trust.trust(tmp_path)  # a parent is not the project
    assert not trust.is_trusted(root)
    trust.trust(root)
    assert trust.is_trusted(root)
    assert trust.is_trusted(root / "." / ".ikigai" / "..")
    assert trust.list_path().stat().st_mode & 0o777 == 0o600
