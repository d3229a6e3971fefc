"""No import cycles between ktrain's modules, lazy imports inside functions included (the layers
contract only orders packages; a cycle inside one package would slip past it)."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")  # installed with import-linter


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_ktrain_has_no_import_cycles() -> None:
    graph = grimp.build_graph("ktrain")
    # A package's __init__ re-exporting or lazily loading its own modules is not a cycle.
    edges = {
        module: {
            other
            for other in graph.find_modules_directly_imported_by(module)
            if not module.startswith(other + ".") and not other.startswith(module + ".")
        }
        for module in graph.modules
    }
    assert _cycles(edges) == []
