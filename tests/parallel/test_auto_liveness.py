"""Liveness on the auto engine: the state graph its workers record is the
local engine's, array for array -- the same states in the same order, the
same edges with the same action ids, the same atoms' values -- whatever
level it hands over at and however the levels' chunks are split between
the workers (with 128-bit fingerprints, and with the self-loops `kmc graph`
keeps); so the verdicts and the lassos are the local engine's. Every
spec of specs/liveness and specs/quorum/liveness-* gives the local engine's
verdicts on auto, each lasso a fair behaviour of the model violating its
property (checked through the model alone)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from checker.front.spec import load_spec
from checker.front.temporal_spec import temporal_of, validate
from checker.search.engine import CheckOptions
from checker.search.liveness.graph import GraphSearch
from checker.search.liveness.run import check_liveness
from checker.search.parallel import AutoExpander
from checker.search.registry import build
from invariants.temporal import negation

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "liveness"))
from kraft_specs import kip966_b2  # noqa: E402
from lasso_check import check_lasso  # noqa: E402


@pytest.fixture(params=[16, 2048], ids=["chunks16", "chunks2048"])
def chunk_size(request, monkeypatch):
    """Small chunks: a level is split between the workers (each dedups
    against its own view of the seen set, the parent keeps what is new)."""
    from checker.search import parallel
    monkeypatch.setattr(parallel, "CHUNK_STATES", request.param)
    return request.param


def _graphs(model_name, variant, constants, options, keep_self_loops=False, threshold=1):
    """The local and the auto engine's graphs of one model, atoms: every
    temporal property's predicates; and the auto run's engine record."""
    out = []
    for expander in (None, AutoExpander(threshold, workers=2)):
        model, _ = build(model_name, variant, constants)
        atoms = [a for prop in temporal_of(model).values() for inst in prop.instances
                 for a in negation(inst.formula).atoms]
        search = GraphSearch(model, [], options, atoms, keep_self_loops=keep_self_loops, expander=expander)
        result = search.run()
        out.append((search.graph(), result))
    (local, _), (auto, result) = out
    return local, auto, result.engine


def assert_same_graph(a, b):
    assert a.n == b.n and a.edges == b.edges
    assert list(a.fps) == list(b.fps)
    assert list(a.level) == list(b.level) and a.init == b.init
    assert list(a.off) == list(b.off) and list(a.dst) == list(b.dst) and list(a.act) == list(b.act)
    assert a.actions == b.actions
    assert a.labels == b.labels
    assert a.self_loops == b.self_loops


@pytest.mark.parametrize("self_loops", [False, True], ids=["", "self-loops"])
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("threshold", [1, 40])
def test_twophase_graph_is_the_local_engines(chunk_size, bits, threshold, self_loops):
    local, auto, info = _graphs("twophase", None, {}, CheckOptions(fingerprint_bits=bits),
                                keep_self_loops=self_loops, threshold=threshold)
    assert info["handover_level"] is not None and "pool" in info["levels"]
    assert local.n == 288 and any(any(lab) for lab in local.labels)
    assert bool(local.self_loops) == self_loops
    assert_same_graph(local, auto)


def test_kraft_graph_is_the_local_engines(chunk_size, tmp_path):
    spec = tmp_path / "b2.toml"
    spec.write_text(kip966_b2(fence=1))
    constants = load_spec(spec).constants
    local, auto, info = _graphs("kraft", "kip966", constants, CheckOptions(), threshold=50)
    assert info["handover_level"] is not None
    assert local.n == 14613 and local.edges > local.n
    assert_same_graph(local, auto)


def _spec_params():
    paths = sorted((ROOT / "specs" / "liveness").glob("*.toml")) + \
        sorted((ROOT / "specs" / "quorum").glob("liveness-*.toml"))
    for path in paths:
        distinct = load_spec(path).expect.get("distinct", 0)
        yield pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if distinct > 20_000 else [])


@pytest.mark.parametrize("path", list(_spec_params()))
def test_every_liveness_spec_has_the_local_verdicts_on_auto(path):
    spec = load_spec(path)
    config = validate(spec)
    results = {}
    for engine in ("local", "auto"):
        model, props = spec.build()
        results[engine] = (model, check_liveness(model, props, config, CheckOptions(), engine=engine,
                                                 threshold=8, workers=2))
    (_, local), (model, auto) = results["local"], results["auto"]
    assert auto.engine["handover_level"] is not None
    assert auto.liveness["checked"]
    assert auto.liveness["properties"] == local.liveness["properties"]
    assert auto.liveness["graph"] == local.liveness["graph"]
    assert (auto.distinct, auto.outcome) == (local.distinct, local.outcome)
    temporal = temporal_of(model)
    lassos = [v for v in auto.violations if hasattr(v, "loop")]
    assert [v.property for v in lassos] == [v.property for v in local.violations if hasattr(v, "loop")]
    for v in lassos:
        check_lasso(model, v, temporal[v.property], config.fairness)


def test_a_predicate_failing_in_a_worker_is_an_evaluation_error(chunk_size):
    """A temporal property's predicate raising EvaluationError on a state a
    worker found: the run stops with the evaluation error (exit 3), on auto
    as on local."""
    from checker.search.errors import EngineEvaluationError
    from checker.search.liveness.config import LivenessConfig
    from invariants.temporal import AlwaysEventually, TemporalProperty, single
    from model.base import EvaluationError

    def at_start(state):   # judged on the initial state only (labelled before the hand-over)
        if state.node != 0:
            raise EvaluationError(f"node {state.node} cannot be judged")
        return True

    prop = TemporalProperty("P", single(AlwaysEventually(at_start)), reads=("node",))
    for engine in ("local", "auto"):
        model, _ = build("randgraph", None, {"Nodes": 300, "Degree": 3, "Initial": 1, "Seed": 4})
        assert [s.node for s in model.init_states()] == [0]
        with pytest.raises(EngineEvaluationError, match="cannot be judged"):
            check_liveness(model, [], LivenessConfig([prop], [], []), CheckOptions(), engine=engine,
                           threshold=1, workers=2)
