"""Which projects' own tools may run: a list the user writes, as direnv and editors keep one.

A project's `.ikigai/tools/` holds executables that come with the checkout: cloning a
repository must not be enough to have them run (by `web-tools list`, `doctor` or `mcp`, with
every API key in the environment) or to have them replace a tool. They run only once the user
has trusted the project's directory: `web-tools trust [DIR]`. The list is a file in the user's
config directory, one absolute path a line, read only when it is the user's own regular file
that nobody else may write to.
"""

from __future__ import annotations

import os
from pathlib import Path

from ikigai_web.common.files import read_regular
from ikigai_web.common.settings import config_dir

FILE_NAME = "trusted-projects"
MAX_BYTES = 256 * 1024


def list_path() -> Path:
    return config_dir() / FILE_NAME


def trusted() -> tuple[frozenset[Path], str]:
    """The trusted project directories, and why the list was not read when it was not."""
    path = list_path()
    try:
        data, info = read_regular(path, MAX_BYTES)
    except FileNotFoundError:
        return frozenset(), ""
    except (OSError, ValueError) as exc:
        return frozenset(), f"{path} is not used: {exc}"
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return frozenset(), f"{path} is not used: others may write to it (chmod 600 it)"
    lines = data.decode("utf-8", "replace").splitlines()
    return frozenset(Path(line) for line in lines if line.startswith("/")), ""


def is_trusted(project: Path) -> bool:
    return project.resolve() in trusted()[0]


class Unusable(Exception):  # noqa: N818 - says what the list is, as ValueError does
    """The list is there but not used (see `trusted`): rewriting it would drop its entries."""


def trust(project: Path) -> Path:
    """Add `project` to the list (made 0600 in a 0700 directory); the list's path."""
    return _write(_usable() | {project.resolve()})


def untrust(project: Path) -> Path:
    return _write(_usable() - {project.resolve()})


def _usable() -> frozenset[Path]:
    found, why = trusted()
    if why:
        msg = f"{why}; check the projects it lists, then run this again (it was left as it is)"
        raise Unusable(msg)
    return found


def _write(projects: frozenset[Path]) -> Path:
    path = list_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # whatever mode a file left there had
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{p}\n" for p in sorted(projects)))
    temp.replace(path)
    return path
