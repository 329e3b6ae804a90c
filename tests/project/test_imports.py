"""No import cycles between the project's modules, lazy imports inside functions included: a
cycle makes each module's meaning depend on the other's, and an import order on them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ikigai_web",)
# Left for the pacing work (issue 44) to break: pacing's RATE_LIMIT message is search's.
KNOWN = {frozenset({"ikigai_web.search.pacing", "ikigai_web.search.kit"})}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts).removesuffix(".__init__")] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `path` imports, wherever in it."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            named |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            named |= {a.name for a in node.names}
    return named & set(known)


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The modules that reach each other, each group once (pairs and longer loops alike)."""
    reach = {m: _reachable(graph, m) for m in graph}
    return {frozenset(m for m in reach[a] if a in reach[m]) | {a} for a in graph if a in reach[a]}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, ())
    return seen


def test_no_import_cycles_but_the_known_one():
    known = modules()
    graph = {name: imports(path, known) - {name} for name, path in known.items()}
    assert cycles(graph) <= KNOWN
    assert "ikigai_web.common.protocol" not in _reachable(graph, "ikigai_web.common.runner")


def test_a_cycle_is_found_however_long():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == {frozenset("abc")}
    assert cycles({"a": {"b"}, "b": set()}) == set()
