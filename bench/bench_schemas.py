"""What the tools' definitions cost a host in every request: the bytes of their schemas.

A host sends every discovered tool's schema to the model with each request, so each tool
installed costs its schema's size (about a token per 4 bytes) every time. This prints that for
all the tools, for the subsets the docs suggest installing instead, and for what `web-tools mcp`
serves by default on a machine without keys (the providers not set up left out). Then the whole
answer of `web-tools mcp` to `tools/list`, as it goes on the wire (the JSON-RPC line): with this
project's output schemas, what a client that forwards them to its model pays, and without
(`--no-output-schemas`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from unittest import mock

from verdict import LAUNCHERS, exit_code

SUBSETS = {
    "every tool": None,
    "web-search-auto-tool + web-fetch-tool": ["web-search-auto-tool", "web-fetch-tool"],
    "web-search-brave-tool + web-fetch-tool": ["web-search-brave-tool", "web-fetch-tool"],
    "web-search-auto-tool alone": ["web-search-auto-tool"],
}


def schema_bytes(name: str) -> int:
    out = subprocess.run([str(LAUNCHERS / name), "--schema"], capture_output=True, check=True)
    return len(out.stdout.strip())


def served_without_keys() -> list[str]:
    """The tools `web-tools mcp` serves by default on a machine with no key set."""
    from ikigai_web.common.credentials import PROVIDERS
    from ikigai_web.host import discovery
    from ikigai_web.host.listing import serving

    keys = {var for p in PROVIDERS.values() for f in p.fields for var in f.env}
    environ = {k: v for k, v in os.environ.items() if k not in keys}
    with (
        tempfile.TemporaryDirectory() as empty,
        mock.patch.dict(os.environ, environ | {"IKIGAI_CONFIG_DIR": empty}, clear=True),
    ):
        found = discovery.discover([discovery.Source(discovery.INSTALLATION, LAUNCHERS)])
        tools = serving(found.tools).served.values()
    return [tool.path.name for tool in tools]


def listed_bytes() -> dict[str, int]:
    """The bytes of `web-tools mcp`'s answer to tools/list, by how it was started, on a
    machine without keys."""
    from bench_mcp import KEY_SUFFIXES, WEB_TOOLS, listed

    ways = {
        "default (3 tools)": [],
        "default, --no-output-schemas": ["--no-output-schemas"],
        "--all (8 tools)": ["--all"],
        "--all --no-output-schemas": ["--all", "--no-output-schemas"],
    }
    clean = {k: v for k, v in os.environ.items() if not k.endswith(KEY_SUFFIXES)}
    with tempfile.TemporaryDirectory() as empty:
        env = clean | {"IKIGAI_CONFIG_DIR": empty, "HOME": empty, "XDG_CACHE_HOME": empty}
        return {way: listed([str(WEB_TOOLS), "mcp", *args], env).size for way, args in ways.items()}


def main():
    sizes = {path.name: schema_bytes(path.name) for path in sorted(LAUNCHERS.glob("*-tool"))}
    total = sum(sizes.values())
    SUBSETS["web-tools mcp, no key set (its default)"] = served_without_keys()
    print("tool definitions a host sends with every request (schema bytes, ~4 bytes a token):")
    for label, names in SUBSETS.items():
        size = total if names is None else sum(sizes[n] for n in names)
        count = len(sizes) if names is None else len(names)
        saved = f", {1 - size / total:.0%} less" if names else ""
        print(f"  {label:41} {count} tools {size:6,} bytes ~{size // 4:5,} tokens{saved}")
    print("web-tools mcp's whole answer to tools/list (the JSON-RPC line, output schemas and all):")
    for way, size in listed_bytes().items():
        print(f"  {way:41} {size:6,} bytes ~{size // 4:5,} tokens")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
