"""Property.reads is complete for every kraft property.

The engine checks a property on a new state only when a variable the
property declares it reads changed since the parent. A variable missing
from a declaration would hide violations, so here every predicate runs on
every state of real state spaces (all four variants, faults on) through a
state whose field accesses are recorded, and what it touched must be
declared. A seeded under-declaration must be caught by the same check.
"""
from __future__ import annotations

from collections import defaultdict

import pytest

from checker.search.engine import check, CheckOptions
from checker.search.registry import build
from invariants.kraft import _MIN_ISR_READS, _STORAGE_READS
from model.base import Property

CONFIGS = [
    ("kip966", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1,
                "LeaderShrinkIsrLimit": 1, "NoDataLossShutdownLimit": 1}),
    ("kip966", {"BrokerCount": 3, "InitReplicationFactor": 3, "MinISR": 2, "InitIsrSize": 2,
                "FenceBrokerLimit": 1, "DataLossShutdownLimit": 1, "NoDataLossShutdownLimit": 1,
                "LeaderShrinkIsrLimit": 1, "Values": ["A", "B"]}),
    ("v3_5", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1, "UncleanShutdownLimit": 1,
              "CleanShutdownLimit": 1, "FenceBrokerLimit": 1, "AvoidLastReplicaStanding": False}),
    ("kip966_storage", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 2}),
    ("v3_5_storage", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1}),
    # min.insync.replicas as state (MinIsrChanges: lowered, then raised)
    ("kip966", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 2, "FenceBrokerLimit": 2,
                "LeaderShrinkIsrLimit": 1, "ReferenceQuirks": False, "MinIsrChanges": [1, 2]}),
    # the consumer's properties (Consumer = true only)
    ("v3_5", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1, "UncleanShutdownLimit": 1,
              "FenceBrokerLimit": 1, "AvoidLastReplicaStanding": False, "Consumer": True}),
]
LIMIT = 20_000  # states per configuration (the first depth bound past it)


def _recording_class(cls, log: set):
    """A subclass of the state's NamedTuple that records each field read."""
    ns = {}
    for i, name in enumerate(cls._fields):
        ns[name] = property(lambda self, i=i, name=name: (log.add(name), tuple.__getitem__(self, i))[1])

    def getitem(self, k):
        log.update(cls._fields[k] if isinstance(k, slice) else (cls._fields[k],))
        return tuple.__getitem__(self, k)

    def iterate(self):
        log.update(cls._fields)
        return tuple.__iter__(self)

    ns.update(__getitem__=getitem, __iter__=iterate)
    return type("Recording" + cls.__name__, (cls,), ns)


def recorded_reads(variant, constants) -> tuple[dict, list]:
    """Every property checked on every state within LIMIT (the engine's BFS,
    each predicate wrapped to run on a recording copy of the state, with no
    reads declared so that it runs on every state). An invariant with parts
    (Property.parts) has each part recorded too, as "name#i", and the
    states where the parts' conjunction disagreed with it under "name!"."""
    model, props = build("kraft", variant, constants)
    log: set = set()
    reads = defaultdict(set)
    recording = _recording_class(type(next(iter(model.init_states()))), log)

    def recorder(p):
        def predicate(s):
            log.clear()
            whole = p.predicate(tuple.__new__(recording, s))
            reads[p.name].update(log)
            if p.parts:
                conjunction = True
                for i, (_, part) in enumerate(p.parts):
                    log.clear()
                    conjunction = part(tuple.__new__(recording, s)) and conjunction
                    reads[f"{p.name}#{i}"].update(log)
                if conjunction != whole:
                    reads[f"{p.name}!"].add(s)
            return True  # keep going: every state, every property

        return Property(p.name, "always", predicate)

    options = CheckOptions(max_depth=None)
    depth = 1
    while True:  # the deepest bound within LIMIT states
        options.max_depth = depth
        result = check(model, [], options)
        if result.distinct > LIMIT or result.exhausted:
            break
        depth += 1
    check(model, [recorder(p) for p in props], options)
    return reads, props


@pytest.fixture(scope="module")
def recorded():
    """Per property, the variables its predicate touched over every config;
    a property whose storage variants' version reads more (_STORAGE_READS)
    is compared per kind of variant, under "name@storage" there."""
    union = defaultdict(set)
    declared = {}
    for variant, constants in CONFIGS:
        reads, props = recorded_reads(variant, constants)
        own = variant.endswith("_storage")
        dynamic = bool(constants.get("MinIsrChanges"))  # ... and with MinIsrChanges, "name@min_isr"

        def key_of(name):
            if own and name in _STORAGE_READS:
                return f"{name}@storage"
            return f"{name}@min_isr" if dynamic and name in _MIN_ISR_READS else name
        for key, touched in reads.items():  # properties, and parts ("name#i", "name!")
            union[key_of(key)] |= touched
        for p in props:
            declared[key_of(p.name)] = p.reads
    return union, declared


def test_every_read_is_declared_and_every_declared_read_happens(recorded):
    """Equality, not inclusion: an inclusion alone would also pass on states
    too shallow to reach a property's deeper reads (nothing committed yet)."""
    union, declared = recorded
    assert len(declared) >= 20
    for name, reads in declared.items():
        assert reads is not None, f"{name} declares no reads"
        assert union[name] == set(reads), (name, sorted(union[name]), sorted(reads))


def test_each_part_reads_what_it_declares_and_the_parts_make_the_whole(recorded):
    """Property.parts: the engine runs on a successor only the parts whose
    variables changed, so each part's declaration must be complete, and
    their conjunction must be the property on every state (recorded over
    every config)."""
    union, declared = recorded
    parts = recorded_parts()
    assert list(parts) == ["TypeOK"]
    for name, declarations in parts.items():
        for i, reads in enumerate(declarations):
            assert union[f"{name}#{i}"] == set(reads), (name, i)
        assert not union[f"{name}!"], name


def recorded_parts() -> dict:
    """Per property with parts, each part's declared reads (any config's)."""
    model, props = build("kraft", *CONFIGS[0])
    return {p.name: [reads for reads, _ in p.parts] for p in props if p.parts}


def test_an_under_declared_property_is_caught_by_the_check(recorded):
    union, declared = recorded
    fewer = set(declared["LeaderCompletenessProperty"]) - {"partition_data"}
    assert union["LeaderCompletenessProperty"] - fewer == {"partition_data"}


def test_the_engine_skips_only_what_reads_allow():
    """A property declaring too little is checked too rarely: a violation that
    needs a re-check after an undeclared variable changed goes unseen, while the
    honest declaration (and None) finds it; so the engine really uses reads."""
    model, props = build("kraft", "v3_5", {"BrokerCount": 2, "InitReplicationFactor": 2,
                                           "MinISR": 1, "UncleanShutdownLimit": 1,
                                           "AvoidLastReplicaStanding": False})
    lc = next(p for p in props if p.name == "LeaderCompletenessProperty")
    options = CheckOptions(max_depth=9)  # the loss takes 7 steps
    honest = check(model, [lc], options)
    undeclared = check(model, [Property(lc.name, lc.kind, lc.predicate, reads=None)], options)
    narrow = check(model, [Property(lc.name, lc.kind, lc.predicate, reads=("inv_true_hwm",))],
                   options)
    assert honest.violated == undeclared.violated == ["LeaderCompletenessProperty"]
    assert honest.violations[0].depth == undeclared.violations[0].depth
    assert narrow.violations == [] or narrow.violations[0].depth > honest.violations[0].depth
