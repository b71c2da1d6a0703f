"""The model contract (docs/ARCHITECTURE.md, "How to add a model";
checker/search/contract.py), over every registered model: a model added to
model/registry.py is held to all of it without writing a test.

For each model (each variant, its default constants, the deepest depth bound
within LIMIT states; plus its quick specs under specs/ for the reads):
- the contract checks pass (registry.build runs them);
- the variables each property declares it reads are the variables its
  predicate reads, recorded on every state (and each part's);
- every state comes back from the engines' encodings as the same state:
  its canonical bytes (from_plain: kmc trace, Spark's level files), a
  packed batch rebuilt by the decoder (a frontier spilled past 50,000
  states, the auto engine's workers, the spark executors);
- the local engine, the local engine spilling every level, and the auto
  engine's forked workers give the same counts (tests/spark: Spark too);
- successors come in the same order in every process: hash(str) and, before
  Python 3.12, hash(None) change from one process to the next, so a model
  that enumerates a set in its iteration order walks other random walks and
  finds other counterexample traces with the same seed.

Then the contract's own errors: each is one line naming what to add.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

from checker.search import registry
from checker.search.codec import StateDecoder, pack_states
from checker.search.contract import ModelContractError, check_definition
from checker.search.encoding import decode_state, encode_state, parts_to_bytes
from checker.search.engine import CheckOptions, check
from checker.search.parallel import check_auto
from checker.search.reads import recording_class
from model.base import Constant, ModelDef, Property

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 3000   # states per configuration: the first depth bound past it


def _models() -> list[tuple[str, str]]:
    return [(name, variant) for name, defn in registry.models().items() for variant in defn.variants]


MODEL_VARIANTS = _models()
MODEL_NAMES = sorted({name for name, _ in MODEL_VARIANTS})


@functools.lru_cache(maxsize=None)
def small_depth(name: str, variant: str, constants: tuple = ()) -> int:
    """The deepest depth bound whose space holds at most about LIMIT states
    (or the whole space)."""
    model, _ = registry.build(name, variant, dict(constants))
    depth = 1
    while True:
        r = check(model, [], CheckOptions(max_depth=depth))
        if r.distinct > LIMIT or r.exhausted or depth >= 60:
            return depth
        depth += 1


def states_of(model, depth: int) -> list:
    """Every state within `depth` steps, in BFS order."""
    frontier = list(dict.fromkeys(model.init_states()))
    seen = set(frontier)
    out = list(frontier)
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        out += nxt
        frontier = nxt
    return out


# ---- every registered model ------------------------------------------------------

def test_every_registered_model_is_here():
    from model.registry import MODELS
    assert set(MODEL_NAMES) == set(MODELS) and {"kraft", "zk", "twophase"} <= set(MODEL_NAMES)


@pytest.mark.parametrize("name, variant", MODEL_VARIANTS)
def test_the_contract_holds(name, variant):
    model, props = registry.build(name, variant, {})   # (runs checker/search/contract.py)
    assert props and model.variables


def _configurations(name: str) -> list[tuple[str, dict, int]]:
    """(variant, constants, depth): each variant's defaults, then the
    model's quick specs under specs/ (their constants, at most LIMIT states)."""
    from checker.front.spec import load_spec
    from checker.front.regress import find_specs, is_scenario
    from checker.front import simulate_cli
    out = [(v, {}, small_depth(name, v)) for v in registry.model_def(name).variants]
    for path in find_specs(ROOT / "specs"):
        if is_scenario(path) or simulate_cli.is_simulate_spec(path):
            continue
        spec = load_spec(path)
        if spec.model == name and spec.expect.get("quick") and not spec.properties:
            constants = tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                     for k, v in spec.constants.items()))
            depth = small_depth(name, spec.variant, constants)
            if spec.depth is not None:
                depth = min(depth, spec.depth)
            out.append((spec.variant, spec.constants, depth))
    return out


def _union(a, b):
    """Two reads declarations as one (None: every variable)."""
    return None if a is None or b is None else tuple(sorted(set(a) | set(b)))


def recorded_reads(name: str) -> tuple[dict, dict]:
    """Per property (and per part, "name#i"), the variables its predicate
    read on every state of every configuration; and the declarations."""
    reads: dict = defaultdict(set)
    declared: dict = {}
    log: set = set()
    for variant, constants, depth in _configurations(name):
        model, props = registry.build(name, variant, constants)
        variables = tuple(model.variables)
        first = next(iter(model.init_states()))
        recording = recording_class(type(first), variables, log)

        def recorder(p):
            def predicate(s):
                log.clear()
                p.predicate(tuple.__new__(recording, s))
                reads[p.name].update(log)
                for i, (_, part) in enumerate(p.parts or ()):
                    log.clear()
                    part(tuple.__new__(recording, s))
                    reads[f"{p.name}#{i}"].update(log)
                return True   # every state, every property
            return Property(p.name, "always", predicate)

        for p in registry.properties_for(model):   # (as declared: build widens a too-narrow one)
            # a declaration that grows with the constants (kraft's storage variants and
            # MinIsrChanges; tests/kraft_invariants/test_reads.py checks each): their union
            declared[p.name] = _union(declared.get(p.name, ()), p.reads)
            for i, (part_reads, _) in enumerate(p.parts or ()):
                declared[f"{p.name}#{i}"] = _union(declared.get(f"{p.name}#{i}", ()), part_reads)
        check(model, [recorder(p) for p in props], CheckOptions(max_depth=depth))
    return reads, declared


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_declared_reads_are_the_reads_observed(name):
    """Every variable a predicate reads is declared (else the engine would
    skip a check it must make), and every declared one is read on some
    state (else a declaration names too much: checks made for nothing).
    `reads = None` declares every variable: it is checked on every state."""
    reads, declared = recorded_reads(name)
    for prop, wanted in declared.items():
        if wanted is None:
            continue
        assert reads[prop] == set(wanted), (
            f"{name}: {prop} declares reads {sorted(wanted)} but read {sorted(reads[prop])}")


@pytest.mark.parametrize("name, variant", MODEL_VARIANTS)
def test_every_state_round_trips_through_the_encodings(name, variant):
    model, _ = registry.build(name, variant, {})
    states = states_of(model, small_depth(name, variant))
    assert states
    parts = [encode_state(s) for s in states]
    # one state's canonical bytes (kmc trace, a trace replayed, Spark's look-ups)
    for s, p in zip(states, parts):
        back = model.from_plain(decode_state(parts_to_bytes(p)))
        assert back == s and encode_state(back) == p
    # a packed batch (a spilled frontier, the auto engine's workers, Spark's level files)
    for batch in range(0, len(parts), 512):
        decoder = StateDecoder(model)
        got = decoder.decode_batch(pack_states([list(p) for p in parts[batch:batch + 512]]))
        assert [s for s, _ in got] == states[batch:batch + 512]
        assert [tuple(p) for _, p in got] == parts[batch:batch + 512]


_ORDER_PROBE = """
import json, sys, zlib
sys.path.insert(0, sys.argv[1])
from checker.search import registry
from checker.search.encoding import encode_state
digest = 0
for variant, constants, depth in json.loads(sys.argv[2]):
    model, _ = registry.build(sys.argv[3], variant, constants)
    frontier = list(dict.fromkeys(model.init_states()))
    seen = set(frontier)
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for a, t in model.successors(s):
                digest = zlib.crc32(str(a).encode() + b"".join(encode_state(t)), digest)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
print(digest, len(seen))
"""


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_successors_come_in_the_same_order_in_every_process(name):
    import json
    import os
    import subprocess
    configurations = json.dumps(_configurations(name))
    got = set()
    for hash_seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", _ORDER_PROBE, str(ROOT), configurations, name],
                             env=env, capture_output=True, text=True, check=True).stdout
        got.add(out)
    assert len(got) == 1, got


def _counts(r) -> dict:
    return {"distinct": r.distinct, "generated": r.generated, "levels": r.per_level_distinct,
            "per_action_generated": r.per_action_generated,
            "per_action_distinct": r.per_action_distinct, "sometimes": r.sometimes,
            "violations": [(v.property, v.depth, [str(a) for a, _ in v.trace]) for v in r.violations]}


@pytest.mark.parametrize("name, variant", MODEL_VARIANTS)
def test_every_engine_counts_the_same(name, variant):
    model, props = registry.build(name, variant, {})
    depth = small_depth(name, variant)
    local = check(model, props, CheckOptions(max_depth=depth))
    spilled = check(model, props, CheckOptions(max_depth=depth, spill_states=1))
    auto = check_auto(model, props, CheckOptions(max_depth=depth), threshold=1, workers=2)
    info = auto.engine   # where each level ran
    assert _counts(spilled) == _counts(local)
    assert _counts(auto) == _counts(local)
    if local.distinct > len(local.per_level_distinct):  # (a level to hand over)
        assert "pool" in info["levels"]


# ---- the contract's errors ---------------------------------------------------------------

class Counter:
    """A toy model: one counter up to a bound."""

    name = "contract-toy"
    variables = ("n",)
    action_names = ("Inc",)

    def __init__(self, variant, bound=3):
        self.variant, self.bound = variant, bound

    def init_states(self):
        yield _S(0)

    def successors(self, s):
        from model.base import Action
        if s.n < self.bound:
            yield Action("Inc"), s._replace(n=s.n + 1)

    def from_plain(self, values):
        return _S(*values)


from typing import NamedTuple  # noqa: E402


class _S(NamedTuple):
    n: int


class _Two(NamedTuple):
    n: int
    m: int


def _register(model_factory, properties=None, name="contract-toy", **named):
    from model.registry import register
    register(ModelDef(name=name, doc="a throw-away model of the contract tests",
                      variants={"standard": (Constant("Bound", int, 3),)},
                      build=lambda variant, c: model_factory(variant),
                      properties=properties or (lambda m: [
                          Property("Small", "always", lambda s: s.n < 10, reads=("n",))]),
                      **named))


@pytest.fixture
def throwaway():
    from model.registry import MODELS
    yield _register
    MODELS.pop("contract-toy", None)


def _contract_error(match: str):
    with pytest.raises(ModelContractError, match=match) as e:
        registry.build("contract-toy", None, {})
    assert e.value.exit_code == 2 and "\n" not in e.value.one_line()
    assert "How to add a model" in str(e.value)


def test_a_model_that_keeps_the_contract_builds(throwaway):
    throwaway(Counter)
    model, props = registry.build("contract-toy", None, {})
    assert check(model, props).distinct == 4


def test_a_model_without_from_plain_is_refused_when_built(throwaway):
    class NoFromPlain(Counter):
        from_plain = None
    throwaway(NoFromPlain)
    _contract_error("no method from_plain.*50,000 states")


def test_a_from_plain_that_does_not_rebuild_the_state_is_refused(throwaway):
    class PlainTuple(Counter):
        def from_plain(self, values):
            return tuple(values)   # equal to the state, but no NamedTuple: s.n would fail later
    throwaway(PlainTuple)
    _contract_error("from_plain does not rebuild an initial state as it was.*_S")

    class Raising(Counter):
        def from_plain(self, values):
            raise KeyError("n")
    throwaway(Raising)
    _contract_error("does not come back from its canonical form: KeyError")


@pytest.mark.parametrize("change, match", [
    (lambda m: setattr(m, "name", "other"), "built model's name is 'other'"),
    (lambda m: setattr(m, "variables", ("n", "n")), "distinct variable names"),
    (lambda m: setattr(m, "action_names", "Inc"), "action_names"),
    (lambda m: setattr(m, "projections", {"p": ("nope",)}), "projection 'p'.*nope"),
    (lambda m: setattr(m, "trace_view", 3), "trace_view must be a method"),
])
def test_what_a_built_model_must_have(throwaway, change, match):
    def make(variant):
        m = Counter(variant)
        change(m)
        return m
    throwaway(make)
    _contract_error(match)


def test_properties_must_read_known_variables(throwaway):
    throwaway(Counter, lambda m: [Property("P", "always", lambda s: True, reads=("m",))])
    _contract_error("property P declares reads of unknown variable")
    throwaway(Counter, lambda m: [Property("P", "always", lambda s: True),
                                  Property("P", "sometimes", lambda s: True)])
    _contract_error("property name 'P' is used twice")


def test_a_too_narrow_reads_declaration_is_said_and_widened(throwaway, capsys):
    """A property that reads a variable its `reads` leaves out would be
    skipped where only that variable changed: kmc notices it when the model
    is built (checker/search/reads.py), says so in one line and checks the
    property on every state, so the run still finds the violation."""
    from checker.search import reads

    class Two(Counter):
        variables = ("n", "m")

        def init_states(self):
            yield _Two(0, 0)

        def successors(self, s):
            from model.base import Action
            if s.n < 3:
                yield Action("Inc"), s._replace(n=s.n + 1)
            if s.m < 3:
                yield Action("IncM"), s._replace(m=s.m + 1)

        def from_plain(self, values):
            return _Two(*values)

    Two.action_names = ("Inc", "IncM")
    reads._said.clear()
    throwaway(Two, lambda m: [Property("Sum", "always", lambda s: s.n + s.m < 5, reads=("n",)),
                              Property("Fine", "always", lambda s: s.m < 9, reads=("m",))])
    model, props = registry.build("contract-toy", None, {})
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kmc: warning: model 'contract-toy': property Sum "
                                                  "reads m beyond its declared reads"), err
    assert [p.reads for p in props] == [None, ("m",)]
    assert [v.property for v in check(model, props).violations] == ["Sum"]
    registry.build("contract-toy", None, {})
    assert capsys.readouterr().err == ""   # once per process


def test_a_broken_model_definition_is_one_line_when_listed(throwaway):
    from model.registry import MODELS
    MODELS["contract-toy"] = ModelDef(name="contract-toy", doc="x",
                                      variants={"standard": (Constant("Bound", int, "three"),)},
                                      build=lambda v, c: Counter(v))
    with pytest.raises(ModelContractError, match="constant Bound's default 'three'"):
        registry.models()
    check_definition(MODELS["kraft"])   # (the real ones pass)


def test_a_broken_model_is_one_error_line_on_the_command_line(throwaway, tmp_path):
    from click.testing import CliRunner
    from checker.front.cli import cli

    class NoFromPlain(Counter):
        from_plain = None
    throwaway(NoFromPlain)
    spec = tmp_path / "toy.toml"
    spec.write_text('model = "contract-toy"\n')
    r = CliRunner().invoke(cli, ["check", str(spec), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("kmc: error: ") and r.stderr.count("\n") == 1 and "from_plain" in r.stderr


def _package(tmp_path, name: str, view: str | None) -> None:
    """A model package whose model class and ModelDef are in its __init__.py."""
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from model.base import ModelDef, Property

        class Model:
            name = "contract-toy"

        def build(variant, constants):
            return Model()

        MODEL = ModelDef(name="contract-toy", doc="a package", variants={"standard": ()},
                         build=build, properties=lambda m: [])
    """))
    if view is not None:
        (pkg / "view.py").write_text(textwrap.dedent(view))


def test_a_model_class_in_its_package_init_gets_its_own_view(tmp_path, monkeypatch, throwaway):
    """The view is the ModelDef's, wherever the model class is defined."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _package(tmp_path, "kmc_contract_pkg_a", """
        from model.view import TraceView
        class ToyView(TraceView):
            pass
        TRACE_VIEW = ToyView
    """)
    import kmc_contract_pkg_a
    try:
        from model.registry import MODELS
        MODELS["contract-toy"] = kmc_contract_pkg_a.MODEL
        with pytest.raises(ModelContractError, match="kmc_contract_pkg_a.view exists but its ModelDef "
                                                     "names no view"):
            registry.models()
        MODELS["contract-toy"] = dataclasses.replace(kmc_contract_pkg_a.MODEL,
                                                     view="kmc_contract_pkg_a.view:TRACE_VIEW")
        registry.models()
        assert registry.view_class(kmc_contract_pkg_a.Model()).__name__ == "ToyView"
    finally:
        sys.modules.pop("kmc_contract_pkg_a", None)
        sys.modules.pop("kmc_contract_pkg_a.view", None)


def test_a_view_that_is_no_trace_view_is_refused(tmp_path, monkeypatch, throwaway):
    monkeypatch.syspath_prepend(str(tmp_path))
    _package(tmp_path, "kmc_contract_pkg_b", "X = 1\n")
    try:
        throwaway(Counter, view="kmc_contract_pkg_b.view:X")
        _contract_error("its ModelDef's view 'kmc_contract_pkg_b.view:X' must be a model.view.TraceView subclass")
        throwaway(Counter, view="kmc_contract_pkg_b.view:TRACE_VIEW")
        with pytest.raises(ModelContractError, match="names no attribute of kmc_contract_pkg_b.view"):
            registry.build("contract-toy", None, {})
        throwaway(Counter, view="kmc_contract_pkg_nowhere.view:TRACE_VIEW")
        with pytest.raises(ModelContractError, match="does not import"):
            registry.build("contract-toy", None, {})
    finally:
        sys.modules.pop("kmc_contract_pkg_b", None)
        sys.modules.pop("kmc_contract_pkg_b.view", None)


def test_what_a_model_definition_names_is_looked_up_once(throwaway):
    """Properties, temporal properties, fairness, view, facts and mutants:
    each from the ModelDef (here as objects), through checker.search.registry."""
    from model.base import Mutant
    from model.view import TraceView

    class ToyView(TraceView):
        pass

    def facts(model, state):
        return {"count": state.n}

    throwaway(Counter, view=ToyView, facts=facts, fairness=lambda m: ["WF:Inc"],
              mutants={"a": ("site a", "does a"), "b": Mutant("site b", "does b", ("other",))})
    model, props = registry.build("contract-toy", None, {})
    assert [p.name for p in props] == ["Small"] == [p.name for p in registry.properties_for(model)]
    assert registry.view_class(model) is ToyView
    assert registry.facts_function(model) is facts
    assert registry.reference_fairness_for(model) == ["WF:Inc"]
    assert registry.temporal_properties_for(model) == []
    defn = registry.model_def("contract-toy")
    assert list(registry.mutants_of(defn)) == ["a", "b"]
    assert list(registry.mutants_of(defn, "standard")) == ["a"]
    throwaway(Counter, fairness=lambda m: ["WF:Nope"])
    _contract_error("reference fairness entry 'WF:Nope'")


def test_a_model_without_properties_is_refused_when_listed(throwaway):
    from model.registry import MODELS
    MODELS["contract-toy"] = ModelDef(name="contract-toy", doc="x", variants={"standard": ()},
                                      build=lambda v, c: Counter(v))
    with pytest.raises(ModelContractError, match="names no properties"):
        registry.models()


def test_constants_choices_and_bounds_are_the_registry_s(throwaway):
    """A model that checks nothing of its constants itself (no
    model.constants.resolve_constants) still gets only the values its
    Constants allow: the registry checks choices and bounds for every model."""
    from model.registry import MODELS
    from checker.search.errors import SpecError
    MODELS["contract-toy"] = ModelDef(
        name="contract-toy", doc="x", build=lambda v, c: Counter(v),
        properties=lambda m: [Property("Small", "always", lambda s: s.n < 10, reads=("n",))],
        variants={"standard": (Constant("AckPolicy", str, "all", choices=("all", "leader")),
                               Constant("Bound", int, 3, minimum=1, maximum=5),
                               Constant("Names", (list, str), ["a"], choices=("a", "b")))})
    registry.build("contract-toy", None, {"AckPolicy": "leader", "Bound": 5, "Names": ["b", "a"]})
    for constants, match in [({"AckPolicy": "dsik"}, "constant AckPolicy must be one of 'all', 'leader', got 'dsik'"),
                             ({"Bound": 0}, "constant Bound must be at least 1, got 0"),
                             ({"Bound": 6}, "constant Bound must be at most 5, got 6"),
                             ({"Names": ["a", "c"]}, "constant Names must be a list of one of 'a', 'b', got 'c'")]:
        with pytest.raises(SpecError, match=match) as e:
            registry.build("contract-toy", None, constants)
        assert e.value.exit_code == 2
    MODELS["contract-toy"] = dataclasses.replace(MODELS["contract-toy"], variants={"standard": (
        Constant("AckPolicy", str, "none", choices=("all", "leader")),)})
    with pytest.raises(ModelContractError, match="default 'none' is not one of its choices"):
        registry.models()


def test_a_mutant_of_other_variants_is_refused():
    """kraft's ELR mutants guard code only the KIP-966 variants have: on
    v3_5 such a mutant would change nothing, a spec naming it is refused."""
    from checker.search.errors import SpecError
    registry.build("kraft", "kip966", {"Mutants": ["skip_elr_for_fenced_replica"]})
    with pytest.raises(SpecError, match="mutant 'skip_elr_for_fenced_replica' does not apply to "
                                        "variant 'v3_5' of model 'kraft'"):
        registry.build("kraft", "v3_5", {"Mutants": ["skip_elr_for_fenced_replica"]})
