"""The documentation says what the code does.

The tables of tools, settings, credentials and endpoints in the README and docs/, and the
same lists in docs/protocol.md, are compared with the code's own lists: `[project.scripts]`,
`Settings.every()`, `PROVIDERS` (and SearXNG's optional login), the endpoint overrides the
tools read, the error codes and the warning codes. The example files under docs/examples/
are loaded with the project's own loaders. Links between the documents must lead somewhere.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ikigai_web.common import redact
from ikigai_web.common.credentials import event, locate, optional, resolve
from ikigai_web.common.errors import ErrorCode
from ikigai_web.common.settings import Settings
from ikigai_web.fetch.reading.pagetype import PAGE_TYPES
from ikigai_web.search.registry import WITH_CREDENTIALS as PROVIDERS
from ikigai_web.tools.web_search_searxng import AUTH

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
README = (ROOT / "README.md").read_text()
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text()
TOOLS = (ROOT / "docs" / "tools.md").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
WEB_FETCH = (ROOT / "docs" / "web-fetch.md").read_text()
# A newcomer reads the README in a few minutes; the reference lives in docs/.
README_MOST_LINES = 200
EXAMPLES = ROOT / "docs" / "examples"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SCRIPTS = sorted(name for name in PYPROJECT["project"]["scripts"] if name.endswith("-tool"))
SETTINGS = Settings.every()
SETTINGS_HEADER = ["variable", "meaning", "allowed", "default"]
ENDPOINTS_HEADER = ["variable", "replaces", "default"]
# The example web-tools.toml shows each setting's default, but for these a sample is clearer.
SAMPLED = {"user_agent", "fetch_allow_hosts", "fetch_browser", "redis_url", "redis_secret",
           "rate_limits"}  # fmt: skip


def nested_keys() -> dict[str, str]:
    """Credential variable -> its nested key in credentials.json, from the code."""
    fields = [(p, f) for p in PROVIDERS.values() for f in p.fields]
    fields.append((PROVIDERS["searxng"], AUTH))
    return {var: f"web_search.{p.key}.{f.name}" for p, f in fields for var in f.env}


def endpoints() -> dict[str, str]:
    """Endpoint override variable -> its default, as the tools call `endpoint(VAR, DEFAULT)`."""
    found = {}
    for path in sorted((ROOT / "ikigai_web" / "tools").glob("*.py")):
        module = importlib.import_module(f"ikigai_web.tools.{path.stem}")
        for var, constant in re.findall(r'endpoint\(\s*"([A-Z0-9_]+)",\s*(\w+)', path.read_text()):
            found[var] = getattr(module, constant)
    return found


def warning_codes() -> set[str]:
    """Every warning code the code writes as a literal."""
    sources = [*(ROOT / "ikigai_web").rglob("*.py")]
    return {code for p in sources for code in re.findall(r'"code": "([A-Z_]+)"', p.read_text())}


def tables(text: str) -> list[list[list[str]]]:
    """Every markdown table of `text` as rows of cells, the separator row left out."""
    found: list[list[list[str]]] = []
    previous = False
    for line in text.splitlines():
        is_row = line.startswith("|")
        if is_row and not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
            row = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not previous:
                found.append([])
            found[-1].append(row)
        previous = is_row
    return found


def table(text: str, header: list[str]) -> list[list[str]]:
    """The rows of the one table whose header is `header`."""
    (rows,) = [t[1:] for t in tables(text) if t[0] == header]
    return rows


def variables(cell: str) -> list[str]:
    return re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)


def plain(cell: str) -> str:
    return cell.replace("`", "")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


# --- the README ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [README, TOOLS], ids=["README", "tools"])
def test_every_tool_is_listed_and_has_a_section_in_the_reference(text):
    rows = table(text, ["executable", "what it does", "needs"])
    assert sorted(re.findall(r"`([a-z0-9-]+-tool)`", " ".join(r[0] for r in rows))) == SCRIPTS
    assert len(rows) == len(SCRIPTS)
    sections = re.findall(r"^## ([a-z0-9-]+-tool)$", TOOLS, re.MULTILINE)
    assert sorted(sections) == SCRIPTS


def test_the_readme_starts_short_and_leads_to_the_reference():
    assert README.count("\n") <= README_MOST_LINES
    for heading in ("## Install", "## MCP clients", "## Keys and settings", "## Troubleshooting"):
        assert f"\n{heading}\n" in README
    assert "IKIGAI_WEB_FETCH_ALLOW_HOSTS" in README.split("## Troubleshooting")[1]
    documents = {path.name for path in (ROOT / "docs").glob("*.md")}
    assert set(re.findall(r"\]\(docs/([a-z-]+\.md)\)", README)) == documents


def _duckduckgo_on(fake_server: Any) -> dict[str, str]:
    """The environment that points DuckDuckGo at the loopback server, answering one result."""
    from conftest import Reply
    from toolbox import duckduckgo_answer

    body, kind = duckduckgo_answer("Ikigai - Wikipedia", "A reason for being.", IKIGAI)
    for path in ("/html/", "/lite/"):
        fake_server.route(path, Reply(body=body, headers={"Content-Type": kind}))
    url = fake_server.url
    return {"DUCKDUCKGO_HTML_URL": f"{url}/html/", "DUCKDUCKGO_LITE_URL": f"{url}/lite/"}


IKIGAI = "https://en.wikipedia.org/wiki/Ikigai"


@pytest.mark.loopback
def test_the_readmes_first_example_runs_in_a_clone_as_written(fake_server):
    first = next(line for line in README.splitlines() if line.startswith("$ "))
    argv = shlex.split(first.removeprefix("$ "))
    assert (ROOT / argv[0]).is_file(), argv[0]  # in the clone after `make`, not on a PATH
    env = os.environ | _duckduckgo_on(fake_server)
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Search Results for: what is ikigai\n"), done.stdout
    assert f"Source: {IKIGAI}" in done.stdout


@pytest.mark.loopback
def test_makes_demo_runs_its_search(fake_server):
    env = os.environ | _duckduckgo_on(fake_server)  # `-o launchers`: as built, not remade
    argv = ["make", "--no-print-directory", "-s", "-o", "launchers", "demo"]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    said, answer = done.stdout.splitlines()
    assert said.endswith("| libexec/ikigai/web-search-duckduckgo-tool")
    assert json.loads(answer)["results"][0]["url"] == IKIGAI


@pytest.mark.parametrize("text", [CONFIGURATION, PROTOCOL], ids=["configuration", "protocol"])
def test_the_settings_table_is_the_codes(text):
    rows = table(text, SETTINGS_HEADER)
    assert [variables(r[0]) for r in rows] == [[s.variable] for s in SETTINGS]
    assert [plain(r[3]) for r in rows] == [plain(s.shown_default) for s in SETTINGS]


@pytest.mark.parametrize("text", [CONFIGURATION, PROTOCOL], ids=["configuration", "protocol"])
def test_the_endpoint_table_is_the_codes(text):
    rows = table(text, ENDPOINTS_HEADER)
    assert {variables(r[0])[0]: plain(r[2]) for r in rows} == endpoints()
    assert len(rows) == len(endpoints())


@pytest.mark.parametrize("text", [README, CONFIGURATION], ids=["README", "configuration"])
def test_every_credential_variable_is_named(text):
    rows = table(text, ["variable", "nested key", "tool"])
    assert sorted(v for r in rows for v in variables(r[0])) == sorted(nested_keys())


def test_protocol_gives_every_credentials_nested_key_and_secrecy():
    rows = table(PROTOCOL, ["variable (flat key)", "nested key", "tool", "secret"])
    keys = {var: plain(r[1]) for r in rows for var in variables(r[0])}
    assert keys == nested_keys()
    fields = {var: f for p in PROVIDERS.values() for f in (*p.fields, AUTH) for var in f.env}
    secret = {var: plain(r[3]) == "yes" for r in rows for var in variables(r[0])}
    assert secret == {var: fields[var].secret for var in secret}


def test_protocol_gives_every_config_required_event():
    rows = table(PROTOCOL, ["tool", "`credentials`", "`env`", "`signup_url`"])
    documented = {plain(r[0]): [plain(c).split(", ") for c in r[1:3]] + [plain(r[3])] for r in rows}
    expected = {}
    for provider in PROVIDERS.values():
        data = event(provider)["data"]
        expected[data["tool"]] = [data["credentials"], data["env"], data["signup_url"]]
    assert documented == expected


def test_protocol_gives_every_error_code_and_warning_code():
    errors = table(PROTOCOL, ["code", "meaning", "tools"])
    assert [plain(r[0]) for r in errors] == [code.value for code in ErrorCode]
    warnings = table(PROTOCOL, ["code", "meaning"])
    documented = {plain(r[0]) for r in warnings}
    assert warning_codes() <= documented
    assert documented - warning_codes() == {"an error code"}


def test_protocol_names_every_tool():
    assert all(f"`{script}`" in PROTOCOL for script in SCRIPTS)


@pytest.mark.parametrize("text", [WEB_FETCH, PROTOCOL], ids=["web-fetch", "protocol"])
def test_the_page_types_listed_are_the_codes(text):
    """The one list of page types each document gives, after its first mention of `page_type`."""
    after = text[text.index("`page_type`") + len("`page_type`") :]
    listed = re.match(r"[^`]*((?:`[a-z]+`(?:,\s*|\s+or\s+)?)+)", after)
    assert listed is not None
    assert tuple(re.findall(r"`([a-z]+)`", listed[1])) == PAGE_TYPES


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_lead_somewhere_inside_the_repository(doc):
    text = doc.read_text()
    assert "../shared" not in text
    for target, anchor in re.findall(r"\]\((?!https?:)([^)#\s]*)(?:#([^)\s]+))?\)", text):
        path = (doc.parent / target).resolve() if target else doc
        assert path.exists(), f"{doc.name}: {target}"
        assert path.is_relative_to(ROOT), f"{doc.name}: {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(), re.MULTILINE)
            assert anchor in {slug(h) for h in headings}, f"{doc.name}: {target}#{anchor}"


def test_readme_points_to_the_projects_own_documents():
    for target in ("docs/protocol.md", "LICENSE", "CHANGELOG.md", "docs/examples/"):
        assert f"]({target}" in README


def test_the_licence_is_the_one_pyproject_declares():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")


def test_the_changelog_covers_every_tool():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## \[(Unreleased|\d+\.\d+\.\d+)\]", changelog, re.MULTILINE)
    assert all(f"`{script}`" in changelog for script in SCRIPTS)
    assert "`web-tools mcp`" in changelog


# --- the example files -----------------------------------------------------------------------


@pytest.fixture
def own_secrets(monkeypatch):
    """The example's placeholder values are registered as secrets here, not for other tests."""
    monkeypatch.setattr(redact, "_secrets", set())
    redact._pattern.cache_clear()
    yield
    redact._pattern.cache_clear()


def test_example_credentials_resolve_every_provider_from_the_nested_layout(
    isolated_env, own_secrets
):
    shutil.copy(EXAMPLES / "credentials.json", isolated_env / "credentials.json")
    data = json.loads((EXAMPLES / "credentials.json").read_text())
    assert list(data) == ["web_search"]
    assert sorted(data["web_search"]) == sorted(PROVIDERS)
    for provider in PROVIDERS.values():
        found = resolve(provider)
        assert sorted(found) == sorted(f.name for f in provider.fields)
        places = locate(provider)
        assert all(str(place.key).startswith("web_search.") for place in places.values() if place)
        assert None not in places.values()
    assert optional(PROVIDERS["searxng"], AUTH) == "user:password"


def test_example_settings_file_as_shipped_sets_nothing(isolated_env):
    shutil.copy(EXAMPLES / "web-tools.toml", isolated_env / "web-tools.toml")
    settings = Settings(environ={})
    assert settings.warnings() == []
    assert all(getattr(settings, s.name) == s.default for s in SETTINGS)
    assert all(settings.source(s) == "default" for s in SETTINGS)


def test_example_settings_file_uncommented_sets_every_setting(isolated_env):
    text = (EXAMPLES / "web-tools.toml").read_text()
    active = re.sub(r"^# ([a-z_]+ = .+)$", r"\1", text, flags=re.MULTILINE)
    (isolated_env / "web-tools.toml").write_text(active)
    assert sorted(tomllib.loads(active)) == sorted(s.name for s in SETTINGS)
    settings = Settings(environ={})
    assert settings.warnings() == []
    assert all(settings.source(s) != "default" for s in SETTINGS)
    differ = {s.name for s in SETTINGS if getattr(settings, s.name) != s.default}
    assert differ == SAMPLED
