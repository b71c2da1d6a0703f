"""`kmc graph`: the exported state graph read back with networkx equals the
model's graph (TLC's, for kip966-b2), actions label the edges, violating
states are marked, big graphs are refused."""
from __future__ import annotations

import json
import gzip
import subprocess
import sys
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from kraft_specs import kip966_b2

ROOT = Path(__file__).resolve().parents[2]
KMC = [sys.executable, "-m", "checker.front.cli"]
TLC_GRAPH = ROOT / "tests" / "conformance" / "data" / "graphs" / "kip966-b2.json"

def kmc(*args, cwd=None):
    return subprocess.run(KMC + [str(a) for a in args], capture_output=True, text=True, cwd=cwd or ROOT)


def _tlc_graph() -> dict:
    path = TLC_GRAPH if TLC_GRAPH.exists() else TLC_GRAPH.with_suffix(".json.gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def test_graphml_read_back_equals_tlcs_graph(tmp_path):
    spec = tmp_path / "kip966-b2.toml"
    spec.write_text(kip966_b2(fence=0))
    out = tmp_path / "g.graphml"
    r = kmc("graph", spec, "--format", "graphml", "--out", out)
    assert r.returncode == 0, r.stderr
    g = nx.read_graphml(out, force_multigraph=True)
    tlc = _tlc_graph()
    assert g.number_of_nodes() == len(tlc["states"]) == 19
    assert Counter(d["level"] for _, d in g.nodes(data=True)) == \
        Counter(s["level"] for s in tlc["states"])
    assert sum(1 for _, d in g.nodes(data=True) if d["initial"]) == 1
    # transitions once per (from, to, action): TLC lists one per witness
    ours = Counter(d["label"] for _, _, d in g.edges(data=True))
    theirs = Counter(t["action"] for t in {(t["from"], t["to"], t["action"]): t
                                           for t in tlc["transitions"]}.values())
    assert ours == theirs
    assert not any(d["violates"] for _, d in g.nodes(data=True))
    assert "controller: leader 1" in g.nodes["0"]["label"]


def test_dot_marks_violating_states_and_labels_edges(tmp_path):
    r = kmc("graph", ROOT / "specs" / "toy-diehard.toml", "--format", "dot")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.startswith('digraph "diehard/standard" {')
    assert text.count('violates="NotSolved"') == 2   # big = 4: two states
    assert '[label="FillSmallJug"]' in text
    assert "16 states" in r.stderr


def test_graphml_of_a_toy_has_every_transition(tmp_path):
    out = tmp_path / "tp.graphml"
    r = kmc("graph", ROOT / "specs" / "toy-twophase.toml", "--format", "graphml", "--out", out)
    assert r.returncode == 0, r.stderr
    g = nx.read_graphml(out, force_multigraph=True)
    assert g.number_of_nodes() == 288
    from checker.search import registry
    model, _ = registry.build("twophase", None, {})
    seen, todo, edges = set(), list(model.init_states()), set()
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        for a, t in model.successors(s):
            edges.add((s, t, str(a)))
            todo.append(t)
    assert g.number_of_edges() == len(edges)


@pytest.mark.parametrize("args,needle", [
    (("--max-states", "100"), "more than 100 states"),
    (("--format", "svg"), "svg"),
])
def test_refusals_are_one_line(args, needle):
    r = kmc("graph", ROOT / "specs" / "kraft-kip966-reference.toml", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error:") and needle in lines[0]
    assert "Traceback" not in r.stderr
