"""ikigai_web.host.discovery: the host's directories, precedence, naming, and every reason to
skip."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import BIN, STALL

from ikigai_web.host import discovery as d
from ikigai_web.host import process, trust

ROOT = Path(__file__).resolve().parents[2]


def sources(tmp_path: Path) -> list[d.Source]:
    return [
        d.Source(d.SYSTEM, tmp_path / "system"),
        d.Source(d.USER, tmp_path / "user"),
        d.Source(d.PROJECT, tmp_path / "project"),
    ]


def test_model_name_comes_from_the_file_name():
    assert d.model_name("web-search-brave-tool") == "web_search_brave"
    assert d.model_name("web_search_brave") == "web_search_brave"


@pytest.fixture(autouse=True)
def trusted_project(tmp_path):
    """The tests' `project` directory is trusted: its tools may run (tests/host/test_trust.py)."""
    trust.trust(tmp_path / "project")


def test_later_directories_override_earlier_ones(tmp_path, fake_tool):
    for place in ("system", "user", "project"):
        fake_tool(tmp_path / place, "both-tool")
    fake_tool(tmp_path / "system", "only-system-tool")
    fake_tool(tmp_path / "user", "mine-tool")
    found = d.discover(sources(tmp_path))
    assert list(found.tools) == ["both", "mine", "only_system"]
    assert found.tools["both"].origin == d.PROJECT
    assert found.tools["mine"].origin == d.USER
    overridden = {(t.origin, t.overridden_by) for t in found.skipped}
    assert overridden == {
        (d.SYSTEM, tmp_path / "user" / "both-tool"),
        (d.USER, tmp_path / "project" / "both-tool"),
    }
    assert found.skipped[0].reason.startswith("overridden by ")


def test_an_unusable_override_replaces_nothing(tmp_path, fake_tool):
    fake_tool(tmp_path / "user", "x-tool")
    fake_tool(tmp_path / "project", "x-tool", schema_script="exit 1")
    found = d.discover(sources(tmp_path))
    assert found.tools["x"].origin == d.USER
    assert [t.origin for t in found.skipped] == [d.PROJECT]


def test_a_link_to_the_same_tool_is_one_tool(tmp_path, fake_tool):
    real = fake_tool(tmp_path / "system", "x-tool")
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "x-tool").symlink_to(real)
    found = d.discover(sources(tmp_path))
    assert found.tools["x"].origin == d.USER
    assert found.skipped == []


def test_only_executables_named_tool_are_looked_at(tmp_path, fake_tool):
    fake_tool(tmp_path / "user", "helper")
    fake_tool(tmp_path / "user", "x-tool.bak")
    assert d.discover(sources(tmp_path)).tools == {}


def test_missing_directories_are_fine(tmp_path):
    found = d.discover([*sources(tmp_path), d.Source(d.SYSTEM, None)])
    assert (found.tools, found.skipped) == ({}, [])


def test_the_schema_is_what_the_tool_printed(tmp_path, fake_tool):
    fake_tool(tmp_path / "user", "x-tool")
    tool = d.discover(sources(tmp_path)).tools["x"]
    assert tool.description == "A third-party tool, x-tool."
    assert tool.parameters == {"type": "object", "properties": {"query": {"type": "string"}}}
    assert tool.path == tmp_path / "user" / "x-tool"


VALID = {"name": "x", "description": "d", "parameters": {"type": "object"}}


@pytest.mark.parametrize(
    ("schema_script", "reason"),
    [
        ("echo 'broken' >&2; exit 3", "--schema exited with status 3: broken"),
        ("kill -KILL $$", "--schema was killed by signal SIGKILL"),
        (f"sleep {STALL:g}", "--schema did not answer within 1 s"),
        ("head -c 9000 /dev/zero | tr '\\0' ' '", "--schema printed more than the host reads"),
        ("true", "--schema printed nothing"),
        ("echo '{nope'", "--schema printed something that is not JSON"),
        ("echo '[1]'", "--schema printed JSON that is not an object"),
        ("""echo '{"name": "x", "parameters": {}}'""", "'description' is missing"),
        ("""echo '{"name": "x", "description": "d"}'""", "'parameters' is missing"),
        (f"echo '{json.dumps(VALID | {'name': 7})}'", "'name' is missing or not a string"),
        (
            f"echo '{json.dumps(VALID | {'parameters': {'type': 'array'}})}'",
            "not a JSON Schema of type 'object'",
        ),
        (
            f"echo '{json.dumps(VALID | {'name': 'y'})}'",
            "the schema is named 'y', but the file name gives 'x'",
        ),
    ],
)
def test_unusable_schemas_are_skipped_with_the_reason(
    tmp_path, fake_tool, monkeypatch, schema_script, reason
):
    if schema_script.startswith("sleep"):  # the host's limit, under test
        monkeypatch.setattr(d, "SCHEMA_TIMEOUT", 1.0)
    path = fake_tool(tmp_path / "user", "x-tool", schema_script=schema_script)
    found = d.discover(sources(tmp_path))
    assert found.tools == {}
    [skipped] = found.skipped
    assert (skipped.path, skipped.origin, skipped.overridden_by) == (path, d.USER, None)
    assert reason in skipped.reason


def test_a_schema_just_under_8_kib_is_fine(tmp_path, fake_tool):
    schema = VALID | {"description": "d" * (d.SCHEMA_LIMIT - len(json.dumps(VALID)))}
    assert len(json.dumps(schema)) + 1 == d.SCHEMA_LIMIT
    fake_tool(tmp_path / "user", "x-tool", schema=schema)
    assert "x" in d.discover(sources(tmp_path)).tools


def test_files_that_cannot_be_tools(tmp_path, fake_tool):
    user = tmp_path / "user"
    fake_tool(user, "plain-tool").chmod(0o644)
    (user / "dir-tool").mkdir()
    (user / "gone-tool").symlink_to(tmp_path / "nowhere")
    (user / "binary-tool").write_bytes(b"\x7fELF garbage")
    (user / "binary-tool").chmod(0o755)
    reasons = {t.name: t.reason for t in d.discover(sources(tmp_path)).skipped}
    assert reasons["plain"] == f"not executable (chmod +x {user / 'plain-tool'})"
    assert reasons["dir"] == "not a regular file"
    assert reasons["gone"] == (
        f"a symbolic link to {tmp_path / 'nowhere'}, which cannot be followed "
        "(No such file or directory)"
    )
    assert reasons["binary"].startswith("--schema could not be run (Exec format error)")


def test_an_unreadable_file_is_reported(tmp_path, monkeypatch):
    # As root (containers, CI) permissions never refuse: make `stat` itself refuse.
    real_stat = Path.stat

    def refuse(self, *, follow_symlinks=True):
        if follow_symlinks:
            raise PermissionError(13, "Permission denied")
        return real_stat(self, follow_symlinks=False)

    (tmp_path / "x-tool").write_text("")
    monkeypatch.setattr(Path, "stat", refuse)
    assert d._file_problem(tmp_path / "x-tool") == "cannot be read (Permission denied)"


def test_unknown_signal_numbers_are_shown_as_numbers():
    assert d.exit_text(-99) == "was killed by signal 99"
    outcome = process.Outcome(2, b"", b"")
    assert d.read_schema(outcome, "x") == ({}, "--schema exited with status 2")


def test_default_sources_follow_the_host(tmp_path, monkeypatch):
    monkeypatch.setenv("IKIGAI_LIBEXEC_DIR", str(tmp_path / "sys"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    found = d.default_sources()
    assert [s.origin for s in found] == [d.INSTALLATION, d.SYSTEM, d.USER, d.PROJECT]
    assert found[1:] == [
        d.Source(d.SYSTEM, tmp_path / "sys", note="$IKIGAI_LIBEXEC_DIR is not set"),
        d.Source(d.USER, tmp_path / "home" / ".ikigai" / "tools"),
        d.Source(d.PROJECT, tmp_path / ".ikigai" / "tools"),
    ]
    monkeypatch.setenv("IKIGAI_LIBEXEC_DIR", " ")
    assert d.default_sources()[1].directory is None


def test_installation_is_the_checkout_launchers_when_built(tmp_path, monkeypatch):
    monkeypatch.setattr(d, "__file__", str(tmp_path / "ikigai_web" / "host" / "discovery.py"))
    (tmp_path / "libexec" / "ikigai").mkdir(parents=True)
    assert d.installation() == d.Source(d.INSTALLATION, tmp_path / "libexec" / "ikigai")


def test_installation_is_the_make_install_prefix(tmp_path, monkeypatch):
    monkeypatch.setattr(
        d, "__file__", str(tmp_path / "site-packages" / "ikigai_web" / "host" / "discovery.py")
    )
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "lib" / "ikigai-web-tools" / "venv"))
    (tmp_path / "libexec" / "ikigai").mkdir(parents=True)
    assert d.installation() == d.Source(d.INSTALLATION, tmp_path / "libexec" / "ikigai")


def test_installation_falls_back_to_this_distributions_tool_scripts(tmp_path, monkeypatch):
    monkeypatch.setattr(
        d, "__file__", str(tmp_path / "site-packages" / "ikigai_web" / "host" / "discovery.py")
    )
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    source = d.installation()
    assert source.directory == BIN
    assert source.names is not None
    assert "web-search-brave-tool" in source.names
    assert "web-tools" not in source.names
    found = d.discover([source])
    assert found.tools["web_fetch"].path == BIN / "web-fetch-tool"
    assert set(found.tools) == {d.model_name(n) for n in source.names}


def test_only_and_exclude(tmp_path, fake_tool):
    for name in ("a-tool", "b-tool", "c-tool"):
        fake_tool(tmp_path / "user", name)
    found = d.discover(sources(tmp_path))
    assert list(d.choose(found, ["a", "c-tool"], [])[0]) == ["a", "c"]
    assert list(d.choose(found, [], ["b"])[0]) == ["a", "c"]
    assert list(d.choose(found, ["a", "b"], ["b"])[0]) == ["a"]
    assert d.choose(found, ["a", "zz", " "], ["yy-tool"])[1] == ["zz", "yy"]
    assert list(d.choose(found, [], [])[0]) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("web_serch_brave", ["web_search_brave"]),  # a typo: the one name nearly the same
        ("WEB_FETCH", ["web_fetch"]),
        ("brave", ["web_search_brave"]),  # a part of one name
        ("web_search", ["web_search_auto", "web_search_brave", "web_search_duckduckgo"]),
        ("xyzzy", []),
    ],
)
def test_a_name_that_matches_no_tool_gets_the_closest_names(name, meant):
    names = ["web_fetch", "web_search_auto", "web_search_brave", "web_search_duckduckgo"]
    names += ["web_search_gemini", "web_search_tavily"]
    found = d.Found(dict.fromkeys(names, None), [], [])  # type: ignore[arg-type]
    assert d.closest(name, found) == meant


def test_the_checkout_serves_its_own_tools():
    found = d.discover([d.installation()])
    assert {"web_search_brave", "web_fetch"} <= set(found.tools)
    assert found.skipped == []


def test_own_tools_name_their_entry_point_and_others_none(tmp_path, fake_tool):
    found = d.discover([d.installation()])
    assert found.tools["web_fetch"].entry == "ikigai_web.tools.web_fetch:main"
    assert found.tools["web_search_brave"].entry == "ikigai_web.tools.web_search_brave:main"
    # A link to the launcher (make install-user) is the same program.
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "web-fetch-tool").symlink_to(found.tools["web_fetch"].path)
    # A tool of the same name elsewhere is another program, whatever it is called.
    fake_tool(tmp_path / "project", "web-search-brave-tool")
    again = d.discover([d.installation(), *sources(tmp_path)])
    assert again.tools["web_fetch"].entry == "ikigai_web.tools.web_fetch:main"
    assert again.tools["web_search_brave"].entry == ""
    assert d.own_entry(tmp_path / "nowhere" / "web-fetch-tool") == ""
