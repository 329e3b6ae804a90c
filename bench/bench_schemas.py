"""What the tools' definitions cost a host in every request: the bytes of their schemas.

A host sends every discovered tool's schema to the model with each request, so each tool
installed costs its schema's size (about a token per 4 bytes) every time. This prints that for
all the tools, and for the subsets the README suggests installing instead.
"""

from __future__ import annotations

import subprocess
import sys

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


def main():
    sizes = {path.name: schema_bytes(path.name) for path in sorted(LAUNCHERS.glob("*-tool"))}
    total = sum(sizes.values())
    print("tool definitions a host sends with every request (schema bytes, ~4 bytes a token):")
    for label, names in SUBSETS.items():
        size = total if names is None else sum(sizes[n] for n in names)
        count = len(sizes) if names is None else len(names)
        saved = f", {1 - size / total:.0%} less" if names else ""
        print(f"  {label:40} {count} tools {size:6,} bytes ~{size // 4:5,} tokens{saved}")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
