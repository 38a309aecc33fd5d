"""Imports run one way (issue 28): formulas -> projection -> select / sizing -> plots -> ui.

Read from the source with ``ast`` (imports inside functions included), so a lazy import
that closes a loop fails here with the files and lines that make it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "accelkit"

#: what the engine may import: the formulas, the tables and the vocabularies below it
ENGINE_MAY_IMPORT = {"accelkit._validate", "accelkit.catalog", "accelkit.comm", "accelkit.demand", "accelkit.errors",
                     "accelkit.memory", "accelkit.models", "accelkit.tables", "accelkit.units", "accelkit.vocabulary",
                     "accelkit.paths",
                     # the translations: stdlib and Babel only, below everything (the engine's configuration words)
                     "accelkit.i18n",
                     # names in the reader's language (a data table read with errors/i18n/paths/tables only)
                     "accelkit.names"}


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _existing(name):
    """The deepest accelkit module or package ``name`` refers to (``from x import y``: y may be a name)."""
    parts = name.split(".")
    while parts:
        p = PACKAGE.parent.joinpath(*parts)
        if p.is_dir() or p.with_suffix(".py").exists():
            return ".".join(parts)
        parts = parts[:-1]
    return None


def _imports():
    """{(importer, imported): [file:line, ...]} between accelkit modules."""
    found = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        me = _module_name(path)
        package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                names = [f"{module}.{a.name}" for a in node.names] if module else []
            for name in names:
                if not name.startswith("accelkit"):
                    continue
                target = _existing(name)
                if target and target != me and target != "accelkit":
                    found[(me, target)].append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def _group(module, level):
    """The node a module counts as: itself, or its top-level module or subpackage."""
    return module if level == "module" else ".".join(module.split(".")[:2])


def _cycles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("level", ["package", "module"])
def test_no_import_cycle(level):
    found = _imports()
    edges = defaultdict(list)
    for (a, b), where in found.items():
        ga, gb = _group(a, level), _group(b, level)
        if ga != gb:
            edges[(ga, gb)] += where
    cycles = _cycles(edges)
    lines = []
    for comp in cycles:
        lines.append("cycle between " + ", ".join(comp) + ":")
        lines += [f"  {a} imports {b} at {', '.join(w[:3])}" for (a, b), w in sorted(edges.items())
                  if a in comp and b in comp]
    assert not cycles, "\n".join(lines)


def test_the_engine_imports_only_what_lies_below_it():
    """Probes, validation, the decision and the UI call the engine, never the reverse."""
    found = _imports()
    bad = [f"{a} imports {b} at {', '.join(w[:2])}" for (a, b), w in sorted(found.items())
           if a.startswith("accelkit.projection") and not b.startswith("accelkit.projection")
           and b not in ENGINE_MAY_IMPORT]
    assert not bad, "the projection engine reaches above itself:\n" + "\n".join(bad)


def test_the_check_finds_a_planted_cycle():
    """The cycle finder itself: a -> b -> c -> a is one cycle, d -> a is not part of it."""
    assert _cycles({("a", "b"): [], ("b", "c"): [], ("c", "a"): [], ("d", "a"): []}) == [["a", "b", "c"]]
    assert _cycles({("a", "b"): [], ("b", "c"): []}) == []
