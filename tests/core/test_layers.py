"""The import graph is a tree a newcomer can follow (docs/ARCHITECTURE.md,
"Layers"): every import of model/, invariants/ and checker/ (function-level
ones included) points down the layers

    checker/front -> checker/output -> checker/search -> invariants -> model

or stays inside its own layer, and no modules import each other in a circle."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("model", "invariants", "checker")
# lowest first; a module's layer is the longest prefix that names it
LAYERS = ("model", "invariants", "checker.search", "checker.output", "checker.front")


def _modules() -> dict[str, Path]:
    mods = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def _resolve(name: str, mods: dict) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> nx.DiGraph:
    mods = _modules()
    graph = nx.DiGraph()
    for mod, path in mods.items():
        graph.add_node(mod)
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [_resolve(a.name, mods) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else _resolve(base, mods)
                           for a in node.names]
            graph.add_edges_from((mod, t) for t in targets if t and t != mod)
    return graph


def layer(mod: str) -> int:
    if mod == "checker":  # the package's docstring only
        return LAYERS.index("checker.search")
    return max(i for i, name in enumerate(LAYERS) if mod == name or mod.startswith(name + "."))


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_graph_sees_the_layers(graph):
    """Not vacuous: the walk finds the modules and imports it should."""
    assert graph.has_edge("checker.front.cli", "checker.output.results")
    assert graph.has_edge("checker.search.spark.tasks", "checker.search.engine")
    assert graph.has_edge("model.registry", "model.kraft")
    assert {layer(m) for m in graph} == set(range(len(LAYERS)))


def test_no_import_circles(graph):
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == []


def test_imports_point_down_the_layers(graph):
    upward = [f"{a} -> {b}" for a, b in graph.edges if layer(a) < layer(b)]
    assert upward == []


def _code_words(path: Path) -> str:
    """The names and string constants of a module's code (docstrings and
    comments left out: they may use Kafka as the example)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    words = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            words.append(n.id)
        elif isinstance(n, ast.Attribute):
            words.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            words.append(n.value)
    return "\n".join(words)


def test_checker_holds_no_kafka_knowledge():
    """The Kafka presentation and wording live in model/ (model/<name>/view.py,
    model/budget.py): checker/'s code names no Kafka variable, message or
    constant."""
    names = ("FetchRequest", "AlterPartition", "NO_LEADER", "broker-", "ZkWrite", "BrokerCount",
             "MinISR", "FlushPolicy", "UncleanRecoveryStrategy", "LeaderEpoch",
             # a model's page styles and wording (model/view.py LOG_CSS, the views' legend)
             "r-Leader", "OFFLINE_DIRTY", "fenced", "producer", "Kafka", "kraft", "FenceBroker")
    assert "BrokerCount" in _code_words(ROOT / "model" / "budget.py")  # the walk sees constants
    hits = [f"{p.relative_to(ROOT)}: {n}" for p in sorted((ROOT / "checker").rglob("*.py"))
            for n in names if n in _code_words(p)]
    assert hits == []
