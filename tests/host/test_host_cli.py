"""`web-tools`: --version, --help, `list` and `doctor`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, Reply

from ikigai_web.common import __version__, launchers
from ikigai_web.host import cli, discovery, doctor, mcp_server, trust
from ikigai_web.search.registry import WITH_CREDENTIALS

ROOT = Path(__file__).resolve().parents[2]
KEY = "BSA-secret-value-0123456789"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "brave"
# A value for every credential of every provider: with these, every tool can work.
ALL_PROVIDERS = {
    field.env[0]: KEY if field.env[0] == "BRAVE_API_KEY" else f"value-of-{field.env[0]}"
    for provider in WITH_CREDENTIALS.values()
    for field in provider.fields
}
# The tools of this project that need credentials: each is optional while none is set.
NEEDING = sum(p.tool in doctor.own_tools() for p in WITH_CREDENTIALS.values())
KEYLESS = {"web_fetch", "web_search_auto", "web_search_duckduckgo"}


@pytest.fixture(autouse=True)
def host_dirs(tmp_path, monkeypatch):
    """A HOME and a working directory of the test's own: no real ~/.ikigai/tools."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    trust.trust(tmp_path)  # the tests' own project tools may run; see the untrusted tests
    return tmp_path


def web_tools(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "web-tools"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=os.environ | (env or {}),
    )


def main(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(list(args))
    return code, capsys.readouterr().out


# --- --version and --help ------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    out = web_tools(flag)
    assert (out.returncode, out.stdout) == (0, f"web-tools {__version__}\n")


def test_help_names_every_command_with_examples():
    out = web_tools("--help")
    assert out.returncode == 0
    for word in ("mcp", "list", "doctor", "--version", "examples:", "~/.ikigai/tools/"):
        assert word in out.stdout


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (
            "mcp",
            (
                "--only",
                "--exclude",
                "--all",
                "--timeout",
                "--no-warm",
                '"mcpServers"',
                '"args": ["mcp"]',
            ),
        ),
        ("list", ("--json", "skipped")),
        ("doctor", ("--online", "--json", "never the value", "Exits 1")),
    ],
)
def test_each_command_has_useful_help(command, words):
    out = web_tools(command, "--help")
    assert out.returncode == 0
    for word in words:
        assert word in out.stdout


def test_no_command_prints_help_and_exits_2(capsys):
    assert cli.main([]) == 2
    assert "usage: web-tools" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_timeout_is_a_usage_error(capsys, value):
    with pytest.raises(SystemExit) as exited:
        cli.main(["mcp", "--timeout", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --timeout: {value!r} is not a number of seconds above 0" in err


# --- mcp, in-process wiring ------------------------------------------------------------------


def test_mcp_serves_the_chosen_tools_and_reports_the_rest(capsys, monkeypatch, fake_tool):
    fake_tool(Path(".ikigai/tools").resolve(), "broken-tool", schema_script="exit 9")
    served: dict[str, object] = {}

    def serve(tools: dict[str, object], timeout: float, warm: bool, output_schemas: bool) -> None:
        served.update(tools, t=timeout, warm=warm, schemas=output_schemas)

    monkeypatch.setattr(mcp_server, "serve", serve)
    assert cli.main(["mcp", "--only", "web_fetch,nothing", "--timeout", "2.5"]) == 0
    assert set(served) == {"web_fetch", "t", "warm", "schemas"}
    assert (served["t"], served["warm"], served["schemas"]) == (2.5, True, True)
    assert cli.main(["mcp", "--no-warm", "--no-output-schemas"]) == 0
    assert (served["warm"], served["schemas"]) == (False, False)
    err = capsys.readouterr().err
    assert "not serving" in err
    assert "broken-tool: --schema exited with status 9" in err
    assert "no tool named 'nothing' was found" in err


def served_by(monkeypatch, *args: str) -> set[str]:
    """The tools `web-tools mcp ARGS` would serve."""
    served: dict[str, object] = {}
    monkeypatch.setattr(mcp_server, "serve", lambda tools, *_, **__: served.update(tools))
    assert cli.main(["mcp", *args]) == 0
    return set(served)


def test_mcp_serves_what_can_work_by_default(capsys, monkeypatch, fake_tool):
    fake_tool(Path(".ikigai/tools").resolve(), "their-search-tool")
    assert served_by(monkeypatch) == KEYLESS | {"their_search"}
    err = capsys.readouterr().err
    assert err.count("not set up") == NEEDING
    assert (
        "web-tools mcp: not serving web_search_brave, not set up: BRAVE_API_KEY not set "
        "(web-tools doctor says how; --all serves it anyway)"
    ) in err
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_SEARCH_API_KEY", KEY)  # half set up: no engine ID
    assert served_by(monkeypatch) == KEYLESS | {"their_search", "web_search_brave"}


def test_mcp_serves_every_tool_with_all_or_the_ones_named_with_only(capsys, monkeypatch):
    assert served_by(monkeypatch, "--all") == set(doctor.own_tools())
    assert served_by(monkeypatch, "--only", "web_search_brave,web_fetch") == {
        "web_search_brave",
        "web_fetch",
    }
    assert "not set up" not in capsys.readouterr().err
    assert served_by(monkeypatch, "--exclude", "web_fetch") == KEYLESS - {"web_fetch"}


def test_mcp_says_when_nothing_is_left_to_serve(capsys, monkeypatch):
    monkeypatch.setattr(mcp_server, "serve", lambda *_, **__: None)
    assert cli.main(["mcp", "--exclude", ",".join(doctor.own_tools())]) == 0
    assert "no tool to serve; `web-tools doctor` says why" in capsys.readouterr().err


def test_mcp_does_not_start_when_only_matches_no_tool(capsys, monkeypatch):
    monkeypatch.setattr(mcp_server, "serve", lambda *_, **__: pytest.fail("served"))
    assert cli.main(["mcp", "--only", "WEB_FETCH,/bin/web-fetch-tool"]) == 2
    err = capsys.readouterr().err
    assert "no tool named 'WEB_FETCH' was found" in err
    assert "--only names no tool that was found; not serving" in err


@pytest.mark.parametrize("flag", ["--only", "--exclude"])
def test_a_misspelt_name_is_told_the_names_it_may_mean(capsys, monkeypatch, flag):
    monkeypatch.setattr(mcp_server, "serve", lambda *_, **__: None)
    cli.main(["mcp", flag, "web_serch_brave,web-fech-tool,nothing_like_it"])
    lines = capsys.readouterr().err.splitlines()
    assert (
        "web-tools mcp: no tool named 'web_serch_brave' was found; "
        "did you mean 'web_search_brave'? (web-tools list)"
    ) in lines
    assert (
        "web-tools mcp: no tool named 'web_fech' was found; "
        "did you mean 'web_fetch'? (web-tools list)"
    ) in lines
    assert "web-tools mcp: no tool named 'nothing_like_it' was found (web-tools list)" in lines


@pytest.mark.parametrize("flag", ["--only", "--exclude"])
@pytest.mark.parametrize("value", ["", " , "])
def test_an_empty_list_of_names_is_refused(capsys, monkeypatch, flag, value):
    monkeypatch.setattr(mcp_server, "serve", lambda *_, **__: pytest.fail("served"))
    with pytest.raises(SystemExit) as info:
        cli.main(["mcp", flag, value])
    assert info.value.code == 2
    assert f"argument {flag}: {value!r} names no tool" in capsys.readouterr().err


def test_ctrl_c_is_a_quiet_exit(monkeypatch):
    def interrupted(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(mcp_server, "serve", interrupted)
    assert cli.main(["mcp"]) == 130


# --- list ----------------------------------------------------------------------------------


def test_list_shows_each_tool_its_origin_and_path(capsys, host_dirs, fake_tool, monkeypatch):
    system = host_dirs / "system"
    monkeypatch.setenv("IKIGAI_LIBEXEC_DIR", str(system))
    fake_tool(system, "web-fetch-tool")
    fake_tool(host_dirs / "home" / ".ikigai" / "tools", "mine-tool")
    fake_tool(host_dirs / ".ikigai" / "tools", "broken-tool", schema_script="exit 3")
    code, out = main(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert any(
        line.split() == ["web_fetch", "system", str(system / "web-fetch-tool")] for line in lines
    )
    assert any(line.split()[:2] == ["mine", "user"] for line in lines)
    assert any(line.split()[:2] == ["web_search_brave", "installation"] for line in lines)
    skipped = [line for line in lines if line.startswith("broken ")]
    assert skipped[0].endswith("(skipped: --schema exited with status 3)")
    overridden = [line for line in lines if "(overridden: " in line]
    assert overridden[0].split()[:2] == ["web_fetch", "installation"]
    assert overridden[0].endswith(f"(overridden: overridden by {system / 'web-fetch-tool'})")


def test_list_json(capsys, fake_tool, monkeypatch):
    fake_tool(Path(".ikigai/tools").resolve(), "broken-tool", schema_script="exit 3")
    code, out = main(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0
    brave = next(r for r in rows if r["name"] == "web_search_brave")
    assert brave["status"] == "not_served"  # as `web-tools mcp` leaves it out: no key
    assert brave["reason"] == "not set up: BRAVE_API_KEY not set (web-tools mcp --all serves it)"
    assert brave["origin"] == "installation"
    assert Path(brave["path"]).name == "web-search-brave-tool"
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    brave = next(
        r for r in json.loads(main(capsys, "list", "--json")[1]) if r["name"] == brave["name"]
    )
    assert brave["status"] == "served"
    assert "reason" not in brave
    broken = next(r for r in rows if r["name"] == "broken")
    assert broken == {
        "name": "broken",
        "status": "skipped",
        "origin": "project",
        "path": str(Path(".ikigai/tools/broken-tool").resolve()),
        "reason": "--schema exited with status 3",
    }


def test_list_with_nothing_found(capsys, monkeypatch):
    monkeypatch.setattr(discovery, "installation", lambda: discovery.Source("installation", None))
    nothing = "No tools found. Run `web-tools doctor` to see where web-tools looked.\n"
    assert main(capsys, "list") == (0, nothing)


def test_list_never_loads_the_mcp_sdk():
    code = (
        "import sys; from ikigai_web.host.cli import main; main(['list']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pydantic', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


# --- doctor --------------------------------------------------------------------------------


def rows(out: str) -> dict[str, list[str]]:
    """The tools table: name -> [status, origin, detail]."""
    table = out.split("\n\n", maxsplit=1)[0].splitlines()[1:]
    return {
        parts[1]: [parts[0], parts[2], parts[3]]
        for parts in (line.split(maxsplit=3) for line in table)
    }


def test_doctor_credentials_from_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    code, out = main(capsys, "doctor")
    assert code == 0  # the other providers are not set up, which breaks nothing
    table = rows(out)
    assert table["web_search_brave"] == ["ok", "installation", "BRAVE_API_KEY from the environment"]
    assert table["web_fetch"] == ["ok", "installation", "needs no credentials"]
    assert table["web_search_duckduckgo"][2] == "needs no credentials"
    assert table["web_search_auto"] == ["ok", "installation", "tries brave, duckduckgo"]
    assert table["web_search_tavily"] == ["optional", "installation", "TAVILY_API_KEY not set"]
    optional = out.split("Not set up (optional")[1].split("\n\n")[0]
    assert "\n  - web_search_tavily needs a Tavily API key: set TAVILY_API_KEY" in optional
    assert out.endswith(f"All good ({NEEDING - 1} optional tools not set up).\n")
    assert KEY not in out


def test_doctor_credentials_from_a_flat_file(capsys, isolated_env):
    path = isolated_env / "credentials.json"
    path.write_text(json.dumps({"BRAVE_API_KEY": KEY}))
    path.chmod(0o600)
    _, out = main(capsys, "doctor")
    assert rows(out)["web_search_brave"][2] == f"BRAVE_API_KEY from {path} (BRAVE_API_KEY)"
    assert f"Credentials file: {path} (mode 600)" in out
    assert "Warnings:" not in out
    assert KEY not in out


def test_doctor_credentials_from_a_nested_file(capsys, isolated_env, monkeypatch):
    path = isolated_env / "credentials.json"
    nested = {"web_search": {"google": {"api_key": "AIza-secret", "engine_id": "cx-secret"}}}
    path.write_text(json.dumps(nested))
    monkeypatch.setenv("GOOGLE_SEARCH_ENGINE_ID", "cx-env")
    _, out = main(capsys, "doctor")
    assert rows(out)["web_search_google"] == [
        "ok",
        "installation",
        (
            f"GOOGLE_SEARCH_API_KEY from {path} (web_search.google.api_key); "
            "GOOGLE_SEARCH_ENGINE_ID from the environment"
        ),
    ]
    assert "AIza-secret" not in out
    assert "cx-" not in out


def test_doctor_on_a_keyless_machine_is_green_and_says_what_is_optional(capsys, isolated_env):
    code, out = main(capsys, "doctor")
    assert code == 0
    table = rows(out)
    assert table["web_search_google"] == [
        "optional",
        "installation",
        "GOOGLE_SEARCH_API_KEY not set; GOOGLE_SEARCH_ENGINE_ID not set",
    ]
    assert {name for name, row in table.items() if row[0] == "ok"} == KEYLESS
    assert table["web_search_auto"][2] == "tries duckduckgo"
    assert f"Credentials file: {isolated_env / 'credentials.json'} (does not exist)" in out
    assert "Problems:" not in out
    assert out.count("\n  - web_search_") == NEEDING  # one line each says how to set it up
    assert out.endswith(f"All good ({NEEDING} optional tools not set up).\n")
    # As the docs say: no new Google key can be had, so doctor does not send one to make it.
    google = next(line for line in out.splitlines() if line.startswith("  - web_search_google"))
    assert "closed the Custom Search JSON API to new customers" in google
    assert "Create a key" not in google
    assert "web_search_duckduckgo needs no key" in google


def test_doctor_calls_a_half_set_up_provider_a_problem(capsys, monkeypatch):
    monkeypatch.setenv("GOOGLE_SEARCH_API_KEY", "AIza-secret")
    code, out = main(capsys, "doctor")
    assert code == 1
    assert rows(out)["web_search_google"][0] == "problem"
    assert "GOOGLE_SEARCH_ENGINE_ID is not set" in out.split("Problems:")[1]
    assert out.endswith("1 problem found.\n")


def test_doctor_calls_every_provider_a_problem_when_the_file_is_unusable(capsys, isolated_env):
    (isolated_env / "credentials.json").write_text("{not json")
    code, out = main(capsys, "doctor")
    assert code == 1  # the keys may well be in it: nothing says they are optional
    assert rows(out)["web_search_brave"][0] == "problem"
    assert "Not set up (optional" not in out


def test_doctor_says_when_the_fallback_has_no_provider_that_can_search(capsys, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    code, out = main(capsys, "doctor")
    assert code == 1
    assert rows(out)["web_search_auto"] == [
        "problem",
        "installation",
        "no provider of its order can search",
    ]
    assert "none of the providers in IKIGAI_WEB_SEARCH_ORDER (brave,tavily) can search" in out


def test_doctor_exits_0_when_every_tool_can_work(capsys, monkeypatch):
    for name, value in ALL_PROVIDERS.items():
        monkeypatch.setenv(name, value)
    code, out = main(capsys, "doctor")
    assert code == 0
    assert out.endswith("All good.\n")
    assert {row[0] for row in rows(out).values()} == {"ok"}


def test_doctor_warns_about_a_credentials_file_others_can_read(capsys, isolated_env):
    path = isolated_env / "credentials.json"
    path.write_text(json.dumps({"BRAVE_API_KEY": KEY}))
    path.chmod(0o644)
    isolated_env.chmod(0o777)
    _, out = main(capsys, "doctor")
    assert f"{path} is open to other users (mode 644): it holds secrets. Run: chmod 600 " in out
    assert f"{isolated_env} is writable by other users (mode 777)" in out
    assert "chmod go-w" in out


def test_doctor_reports_an_unusable_credentials_file(capsys, isolated_env):
    (isolated_env / "credentials.json").write_text("{not json")
    _, out = main(capsys, "doctor")
    assert "credentials.json is not valid JSON" in out.split("Warnings:")[1]


def test_doctor_settings_in_effect(capsys, isolated_env, monkeypatch):
    (isolated_env / "web-tools.toml").write_text("cache_ttl = 60\ntimout = 3\n")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")
    _, out = main(capsys, "doctor")
    settings = out.split("Settings (")[1].split("\n\n")[0]
    assert "IKIGAI_WEB_TIMEOUT" in settings
    assert (
        f"IKIGAI_WEB_CACHE_TTL                  60  ({isolated_env / 'web-tools.toml'} (cache_ttl))"
        in settings
    )
    assert "IKIGAI_WEB_FETCH_ROBOTS               off  (IKIGAI_WEB_FETCH_ROBOTS)" in settings
    assert (
        "IKIGAI_WEB_SEARCH_ORDER               unset (default: brave,google,tavily,searxng,"
        "duckduckgo)" in settings
    )
    # An unset setting is said to be, with its default, never shown blank.
    assert "\n  IKIGAI_WEB_FETCH_BROWSER              unset (default: found)\n" in settings
    assert "\n  IKIGAI_WEB_REDIS_URL                  unset (default: none)\n" in settings
    assert all(line.split()[1:] for line in settings.splitlines()[1:])
    report = json.loads(main(capsys, "doctor", "--json")[1])
    browser = next(r for r in report["settings"] if r["variable"] == "IKIGAI_WEB_FETCH_BROWSER")
    assert (browser["value"], browser["source"]) == ("found", "unset")
    assert "sets 'timout', which is no setting: it has no effect. Did you mean 'timeout'?" in out
    assert "Cache: " + str(Path(isolated_env).parent / "cache" / "ikigai-web-tools") in out


def test_doctor_reports_a_bad_setting_as_a_problem(capsys, monkeypatch):
    for name, value in ALL_PROVIDERS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "soon")
    code, out = main(capsys, "doctor")
    assert code == 1
    assert "\n  IKIGAI_WEB_TIMEOUT                    (unusable)\n" in out
    assert 'the setting IKIGAI_WEB_TIMEOUT is "soon": it must be a number of seconds' in out


def test_doctor_reports_an_unusable_settings_file_once(capsys, isolated_env):
    (isolated_env / "web-tools.toml").write_text("timeout = [")
    _, out = main(capsys, "doctor")
    assert out.count("the settings file") == 1


def test_doctor_on_third_party_and_broken_tools(capsys, monkeypatch, fake_tool):
    for name, value in ALL_PROVIDERS.items():
        monkeypatch.setenv(name, value)
    project = Path(".ikigai/tools").resolve()
    fake_tool(project, "theirs-tool")
    code, out = main(capsys, "doctor")
    assert code == 0
    assert rows(out)["theirs"] == [
        "unknown",
        "project",
        "a third-party tool: its credentials are not known to doctor",
    ]
    fake_tool(project, "broken-tool", schema_script="echo '{}'")
    code, out = main(capsys, "doctor")
    assert code == 1
    assert rows(out)["broken"][0] == "problem"
    assert f"broken: {project / 'broken-tool'} is skipped by hosts: the schema's 'name'" in out


def test_doctor_finds_a_launcher_whose_target_is_gone(capsys, monkeypatch, host_dirs):
    for name, value in ALL_PROVIDERS.items():
        monkeypatch.setenv(name, value)
    system = host_dirs / "system"
    system.mkdir()
    monkeypatch.setenv("IKIGAI_LIBEXEC_DIR", str(system))
    target = launchers.tools()["web-fetch-tool"]
    launcher = system / "web-fetch-tool"
    launcher.write_text(launchers.launcher("web-fetch-tool", target, host_dirs / "gone-venv"))
    launcher.chmod(0o755)
    code, out = main(capsys, "doctor")
    assert code == 1
    assert rows(out)["web_fetch"][:2] == ["problem", "system"]
    assert f"its launcher runs {host_dirs / 'gone-venv' / 'web-fetch-tool'}, which is gone" in out


def test_doctor_lists_the_tool_directories(capsys, host_dirs):
    _, out = main(capsys, "doctor")
    directories = out.split("Tool directories")[1]
    assert "system        -  ($IKIGAI_LIBEXEC_DIR is not set)" in directories
    assert (
        f"user          {host_dirs / 'home' / '.ikigai' / 'tools'}  (does not exist)" in directories
    )
    assert f"project       {host_dirs / '.ikigai' / 'tools'}  (does not exist)" in directories


def test_doctor_json(capsys, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    code, out = main(capsys, "doctor", "--json")
    report = json.loads(out)
    assert code == 0
    brave = next(t for t in report["tools"] if t["name"] == "web_search_brave")
    assert brave["status"] == "ok"
    assert brave["detail"] == "BRAVE_API_KEY from the environment"
    assert {s["variable"] for s in report["settings"]} >= {"IKIGAI_WEB_TIMEOUT"}
    assert report["cache"].endswith("ikigai-web-tools")
    assert report["problems"] == []
    assert len(report["optional"]) == NEEDING - 1
    assert KEY not in out


def test_doctor_exit_codes_from_the_command_line(host_dirs):
    out = web_tools("doctor", cwd=host_dirs)
    last = f"All good ({NEEDING} optional tools not set up)."
    assert (out.returncode, out.stdout.splitlines()[-1]) == (0, last)
    broken = web_tools("doctor", cwd=host_dirs, env={"IKIGAI_WEB_TIMEOUT": "soon"})
    assert (broken.returncode, broken.stdout.splitlines()[-1]) == (1, "1 problem found.")


def test_doctor_with_no_tool_at_all(capsys, monkeypatch):
    monkeypatch.setattr(discovery, "installation", lambda: discovery.Source("installation", None))
    _, out = main(capsys, "doctor")
    assert out.startswith("Tools: none found (see the tool directories below).\n")


def test_doctor_names_the_fallback_to_tool_scripts(capsys, monkeypatch):
    scripts = discovery.Source("installation", BIN, frozenset({"web-fetch-tool"}))
    monkeypatch.setattr(discovery, "installation", lambda: scripts)
    _, out = main(capsys, "doctor")
    assert f"installation  {BIN}  (this distribution's *-tool scripts only)" in out
    assert list(rows(out)) == ["web_fetch"]


def test_doctor_with_a_config_dir_that_is_a_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "not-a-dir").write_text("")
    monkeypatch.setenv("IKIGAI_CONFIG_DIR", str(tmp_path / "not-a-dir"))
    _, out = main(capsys, "doctor")
    path = tmp_path / "not-a-dir" / "credentials.json"
    assert f"Credentials file: {path} (Not a directory)" in out
    assert f"  - {path} could not be read (Not a directory)" in out


# --- doctor --online -------------------------------------------------------------------------


def brave_only() -> discovery.Found:
    found = discovery.discover([discovery.installation()])
    tools, _ = discovery.choose(found, ["web_search_brave", "web_fetch"], [])
    return discovery.Found(tools, [], found.sources)


def test_online_makes_one_small_search_through_the_tool(fake_server, monkeypatch):
    body = json.loads((FIXTURES / "search.json").read_text())
    url = fake_server.route("/res/v1/web/search", Reply(body=body))
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", url)
    report = doctor.examine(brave_only(), online=True)
    assert report.problems == []
    checks = {check.name: check for check in report.tools}
    assert checks["web_search_brave"].online == "ok (1 result)"
    assert checks["web_fetch"].online == ""
    [seen] = fake_server.seen
    assert seen.query["count"] == ["1"]
    assert seen.query["q"] == [doctor.ONLINE_QUERY]
    assert seen.headers["X-Subscription-Token"] == KEY
    assert "[online: ok (1 result)]" in doctor.render(report)


def test_online_reports_the_error_code_and_message(fake_server, monkeypatch):
    error = {"type": "ErrorResponse", "error": {"code": "UNAUTHORIZED", "detail": "bad token"}}
    url = fake_server.route("/res/v1/web/search", Reply(401, error))
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", url)
    report = doctor.examine(brave_only(), online=True)
    brave = next(check for check in report.tools if check.name == "web_search_brave")
    assert brave.status == "problem"
    assert brave.online.startswith("AUTH_INVALID: Brave answered HTTP 401")
    assert brave.detail == "BRAVE_API_KEY from the environment"
    assert report.problems == [f"web_search_brave: online check failed: {brave.online}"]


def test_online_never_shows_a_key_a_tool_prints(capsys, host_dirs, fake_tool, monkeypatch):
    # A third-party tool in the user's directory replaces brave's and prints keys: the one
    # brave uses, and the one in the credentials file, which the environment's shadows.
    said = "key $BRAVE_API_KEY rejected (also file-shadowed-LEAKCANARY-33)"
    answer = '{"success": false, "error": "%s", "error_code": "AUTH_INVALID"}'
    call = f"printf '{answer}\\n' \"{said}\""
    fake_tool(host_dirs / "home" / ".ikigai" / "tools", "web-search-brave-tool", call=call)
    config = Path(os.environ["IKIGAI_CONFIG_DIR"])
    (config / "credentials.json").write_text('{"BRAVE_API_KEY": "file-shadowed-LEAKCANARY-33"}')
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-doctor-LEAKCANARY-31")
    for args in (("doctor", "--online"), ("doctor", "--online", "--json")):
        _, out = main(capsys, *args)
        assert "AUTH_INVALID: key *** rejected (also ***)" in out
        assert "LEAKCANARY" not in out


def test_online_skips_providers_without_credentials(capsys, fake_server):
    report = doctor.examine(brave_only(), online=True)
    assert fake_server.seen == []
    assert [check.online for check in report.tools] == ["", ""]


def test_online_from_the_command_line(capsys, fake_server, monkeypatch):
    url = fake_server.route("/res/v1/web/search", Reply(body={"web": {"results": []}}))
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", url)
    code, out = main(capsys, "doctor", "--online")
    assert code == 0  # the other providers lack credentials: optional, and not called
    assert "[online: ok (0 results)]" in out
    assert len(fake_server.seen) == 1


def test_minimal_call_asks_for_one_result_whatever_the_parameter_is_called():
    def tool(*names: str) -> discovery.Tool:
        schema = {"parameters": {"type": "object", "properties": {name: {} for name in names}}}
        return discovery.Tool("x", Path("x-tool"), "user", schema)

    assert doctor.minimal_call(tool("query", "num")) == {"query": "ikigai", "num": 1}
    assert doctor.minimal_call(tool("query", "max_results")) == {
        "query": "ikigai",
        "max_results": 1,
    }
    assert doctor.minimal_call(tool("query")) == {"query": "ikigai"}


def test_shown_values():
    assert [doctor.setting_text(v) for v in (True, False, (), ("a", "b"), 25.0, 2.5, 7, "x")] == [
        "on", "off", "none", "a,b", "25", "2.5", "7", "x",
    ]  # fmt: skip


def test_clear_cache(capsys, monkeypatch):
    from ikigai_web.common import cache
    from ikigai_web.common.settings import cache_dir
    from ikigai_web.host import cli

    cache.put("ns", "k", [1], 60)
    assert cli.main(["clear-cache"]) == 0
    assert capsys.readouterr().out == f"cleared {cache_dir()}\n"
    assert not cache_dir().exists()

    def refuse() -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache, "clear", refuse)
    assert cli.main(["clear-cache"]) == 1
    assert "could not clear the cache" in capsys.readouterr().err


def test_doctor_says_whether_web_fetch_can_render(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_BROWSER", str(tmp_path / "no-such-chromium"))
    _, out = main(capsys, "doctor")
    line = next(x for x in out.splitlines() if x.startswith("Rendering pages"))
    assert "not available" in line
    assert "ikigai-web-tools[browser]" in line
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("IKIGAI_WEB_FETCH_BROWSER", str(fake))
    _, out = main(capsys, "doctor")
    assert f"Rendering pages that need JavaScript (web-fetch): available, with {fake}" in out


def test_forget_refuses_a_name_that_is_no_provider_and_says_which_it_may_mean(capsys):
    from ikigai_web.common.errors import ErrorCode
    from ikigai_web.tools.fallback.recall import Recall, remembered

    noted = Recall(["brave"])
    noted.failed("brave", (ErrorCode.RATE_LIMIT, "Brave answered 429", 600))
    noted.save()
    for names in (["bravve"], ["brave", "web_search_bravve"], ["nothing-like-it"]):
        assert cli.main(["forget", *names]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith(f"web-tools forget: no search provider is named {names[-1]!r}")
        meant = "; did you mean 'brave'? " if "brav" in names[-1] else ". "
        assert f"{meant}Nothing was forgotten (providers: brave, " in err
        assert [row["tool"] for row in remembered()[0]] == ["web_search_brave"]  # kept
    assert cli.main(["forget", "Web_Search_Brave"]) == 0
    assert capsys.readouterr().out == "forgot 1 note and 0 holds about brave\n"
    assert remembered()[0] == []
