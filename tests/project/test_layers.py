"""The package's floors: each room imports only the rooms below it, lazily or not, and no two
modules import each other, however far round (docs/development.md, "Layout")."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ikigai_web"
# Bottom to top. A room may import the rooms before it in this list, never one after it.
# web-fetch's reading side never touches the network; its network side reads error pages and
# what the browser shows; the pipeline above both runs the stages in order.
FLOORS = ("common", "net", "fetch.reading", "fetch.network", "fetch", "search", "tools", "host")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every ikigai_web module `name` imports anywhere in its text: at the top, in a function,
    under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            found |= {
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            }
    return {m for m in found if m in modules}


@cache
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _floor(module: str) -> int:
    parts = module.split(".")
    room = ".".join(parts[1:3]) if ".".join(parts[1:3]) in FLOORS else ".".join(parts[1:2])
    return FLOORS.index(room) if room in FLOORS else -1  # ikigai_web itself: below all


def test_each_room_imports_only_the_rooms_below_it():
    upward = {(a, b) for a, imported in _graph().items() for b in imported if _floor(b) > _floor(a)}
    assert upward == set()


def test_the_ground_floor_imports_nothing_above_it():
    assert all(_floor(b) == 0 for a, bs in _graph().items() if _floor(a) == 0 for b in bs)


def test_no_module_imports_itself_through_others():
    graph = _graph()
    cycles = []
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])
    assert cycles == []


TESTS = Path(__file__).resolve().parents[1]
# What tests a whole installation rather than one room: the docs, the names, the install.
WHOLE = "project"
LONGEST_TEST_FILE = 1000  # lines: a longer one is split by what its parts test


def test_the_tests_mirror_the_package_and_no_test_file_is_over_a_thousand_lines():
    test_files = sorted(TESTS.rglob("test_*.py"))
    rooms = {p.parent.relative_to(TESTS).as_posix() for p in test_files}
    package_rooms = {p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")}
    assert rooms - {WHOLE} <= package_rooms
    too_long = [p.name for p in test_files if len(p.read_text().splitlines()) > LONGEST_TEST_FILE]
    assert too_long == []
