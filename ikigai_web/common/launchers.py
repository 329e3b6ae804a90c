"""`python -m ikigai_web.common.launchers DEST BIN`: write the `libexec/ikigai/` launcher of every
tool.

A launcher is a POSIX shell script. It answers `--schema` with the schema written into it
here, so a host's discovery scan starts no interpreter at all (the host allows 1 s, and an
interpreter that imports even `re` takes twice its bare start-up); any other call execs the
tool's console script in BIN. `make` rewrites the launchers on every run.

BIN is written in as an absolute path. When it is gone (the checkout was moved, the
installation removed, the venv's Python uninstalled), the launcher fails `--schema` as it
fails a call: no schema, exit 127, one line on stderr saying what to re-run. A host then
skips the tool instead of offering one whose every call would fail.
"""

from __future__ import annotations

import sys
from importlib import import_module
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from ikigai_web.common.protocol import schema_json

DISTRIBUTION = "ikigai-web-tools"
# A launcher is its schema (under the host's 8 KiB) and a few lines around it.
_LAUNCHER_MOST = 16 * 1024
MARK = "written by `make` from"
# Exit status of a command that cannot be found, as the shell itself uses it.
GONE_STATUS = 127
TEMPLATE = """#!/bin/sh
# {script}: {mark} {module}; do not edit.
if [ ! -x {target} ] || [ ! -x {python} ]; then
  printf '%s\\n' {gone} >&2
  exit {status}
fi
if [ "$#" -eq 1 ] && [ "$1" = "--schema" ]; then
  printf '%s\\n' {schema}
  exit 0
fi
exec {target} "$@"
"""


def tools() -> dict[str, str]:
    """Tool script name -> `module:function`: this distribution's `*-tool` console scripts.

    Only `*-tool` scripts are tools; the distribution has others (`web-tools`). Read from
    this distribution's own metadata: `entry_points()` parses every installed distribution's,
    some 30 ms a time, which the MCP server's start-up paid once per tool it found.
    """
    try:
        found = distribution(DISTRIBUTION).entry_points.select(group="console_scripts")
    except PackageNotFoundError:  # the package run from a tree that was never installed
        return {}
    return {ep.name: ep.value for ep in found if ep.name.endswith("-tool")}


def quote(text: str) -> str:
    """One shell word, single-quoted."""
    return "'" + text.replace("'", "'\\''") + "'"


def launcher(script: str, target: str, bin_dir: Path) -> str:
    module = target.split(":", maxsplit=1)[0]
    schema = schema_json(import_module(module).SCHEMA)
    executable = bin_dir.resolve() / script
    return TEMPLATE.format(
        script=script,
        mark=MARK,
        module=module,
        schema=quote(schema),
        target=quote(str(executable)),
        python=quote(str(executable.parent / "python")),
        gone=quote(gone_message(script, executable)),
        status=GONE_STATUS,
    )


def gone_message(script: str, executable: Path) -> str:
    """What a launcher says when what it runs is gone: which file, and what to re-run."""
    return (
        f"{script}: {executable} or the Python it runs on is gone (the checkout or "
        "installation this launcher was written for was moved or removed): run `make` again "
        "in the checkout, or `make install` for an installed copy"
    )


def target(path: Path) -> Path | None:
    """The script a launcher written here runs; None for any other file (third-party tools)."""
    import shlex

    try:
        with path.open("rb") as fh:
            text = fh.read(_LAUNCHER_MOST).decode(errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    if len(lines) < 2 or MARK not in lines[1] or not lines[-1].startswith("exec "):
        return None
    return Path(shlex.split(lines[-1])[1])


def write_all(dest: Path, bin_dir: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for script, target in sorted(tools().items()):
        path = dest / script
        if path.is_symlink():
            path.unlink()
        path.write_text(launcher(script, target, bin_dir))
        path.chmod(0o755)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1]), Path(sys.argv[2])):
        sys.stdout.write(f"{path}\n")
