"""The compiled hot path (checker/search/_native.c) against its pure-Python twin.

Same bytes for every value of real state spaces, the same (parts,
fingerprint, changed variables) per successor, a FingerprintSet that answers
as a set does, and whole runs with KMC_NATIVE=0 giving the same figures and
counterexample as the compiled path (CI runs the conformance figures both
ways through this file).
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest

from checker.search import encoding, native
from checker.search.encoding import _py_encode, fingerprint_function
from checker.search.engine import _python_successor
from checker.search.registry import build

ROOT = Path(__file__).resolve().parents[2]
needs_native = pytest.mark.skipif(not native.ENABLED, reason=f"hot path: {native.status()}")


def test_native_is_built_unless_turned_off():
    """A normal install compiles checker/search/_native.c (gcc and the Python headers are
    on this kind of machine): a silent fall-back to pure Python would only show
    as a slower run, so it fails here."""
    if os.environ.get("KMC_NATIVE", "1") == "0":
        assert not native.ENABLED
    else:
        assert native.ENABLED, native.status()


def _states(model_name, variant, constants, limit=4000):
    """Up to `limit` reachable states, breadth first, and their successors' pairs."""
    model, _ = build(model_name, variant, constants)
    frontier = list(model.init_states())
    seen = set(frontier)
    pairs = []
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                pairs.append((s, t))
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return model, list(seen), pairs


CONFIGS = [
    ("kraft", "kip966", {"BrokerCount": 3, "InitReplicationFactor": 3, "MinISR": 2,
                         "Values": ["A", "B"], "FenceBrokerLimit": 1, "DataLossShutdownLimit": 1}),
    ("kraft", "v3_5", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1,
                       "UncleanShutdownLimit": 1, "AvoidLastReplicaStanding": False}),
    ("kraft", "kip966_storage", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 2}),
    ("zk", "leader_epoch", {}),
    ("twophase", "standard", {}),
]


@needs_native
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_same_bytes_for_every_value(config):
    _, states, _ = _states(*config)
    n = 0
    for s in states:
        for v in s:
            assert native._native.encode(v) == _py_encode(v), v
            n += 1
    assert n > 1000


@needs_native
def test_same_bytes_for_edge_values():
    values = [None, True, False, 0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32,
              2**63, 2**64 - 1, -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1,
              -2**63, "", "x", "é" * 40, "a" * 300, "b" * 70000, b"", b"xy", 1.5, -0.0, (),
              tuple(range(15)), tuple(range(16)), tuple(range(70000)), frozenset(),
              frozenset({1, 2, 300}), frozenset({(1, "a"), (2, frozenset({5}))}),
              frozenset(range(40)), frozenset("a" * i for i in range(20)),
              frozenset({frozenset(), frozenset({0})}), {1, 2}, (True, 1, frozenset({True}))]
    for v in values:
        assert native._native.encode(v) == _py_encode(v), v
        assert encoding.encode(v) == _py_encode(v), v
    # refused by the compiled encoder, taken by the Python one (the wrapper)
    for v in ([1, frozenset({2})], {"k": (1,)}):
        with pytest.raises(TypeError):
            native._native.encode(v)
        assert encoding.encode(v) == _py_encode(v)
    for v in (2**64, -2**63 - 1, object()):
        with pytest.raises(TypeError):
            native._native.encode(v)


@needs_native
def test_successor_matches_the_python_path():
    model, _, pairs = _states(*CONFIGS[0], limit=3000)
    fp = fingerprint_function(64)
    encs = encoding.VariableEncoders(len(model.variables))
    rng = random.Random(7)
    for indices in (None, (0, 3, 17)):
        select = (b"".join if indices is None
                  else (lambda parts, ix=indices: b"".join(parts[i] for i in ix)))
        seen_c = native._native.FingerprintSet()
        seen_py: set = set()
        for parent, succ in islice(rng.sample(pairs, len(pairs)), 4000):
            pparts = [_py_encode(v) for v in parent]
            got = native._native.successor(parent, pparts, succ, indices, fp, seen_c)
            want = _python_successor(encs, parent, pparts, succ, select, fp, seen_py)
            assert (got is None) == (want is None)
            if got is not None:
                assert got[0] == want[0] and got[1] == want[1]
                changed = sum(1 << i for i, (a, b) in enumerate(zip(parent, succ)) if a is not b)
                assert got[2] == changed
        assert set(seen_c) == seen_py


@needs_native
def test_successor_masks_every_variable_past_64():
    """A state of more than 64 variables: the mask has a bit for each
    (model/examples/wide.py; a 64-bit mask used to stand for them all and a
    property reading only variable 64 was never checked)."""
    from model.examples.wide import Flags
    fp = fingerprint_function(64)
    parent = Flags(*(0,) * 65)
    pparts = [_py_encode(v) for v in parent]
    encs = encoding.VariableEncoders(65)
    for changed_at in ((64,), (0, 64), (3, 63), (63,), (0,)):
        succ = parent._replace(**{f"v{i:02d}": 1 for i in changed_at})
        got = native._native.successor(parent, pparts, succ, None, fp, set())
        want = _python_successor(encs, parent, pparts, succ, b"".join, fp, set())
        assert got[2] == want[2] == sum(1 << i for i in changed_at)
        assert got[0] == want[0] and got[1] == want[1]


def test_a_property_past_variable_64_is_checked_on_both_paths():
    """LastUnset reads only v64 of the wide toy: violated at depth 65 by the
    compiled path as by KMC_NATIVE=0."""
    script = ("from checker.search import registry\n"
              "from checker.search.engine import check\n"
              "m, props = registry.build('wide', None, {})\n"
              "r = check(m, props)\n"
              "print([(v.property, v.depth) for v in r.violations], r.distinct)\n")
    for pure in ("0", "1"):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             cwd=ROOT, env=dict(os.environ, KMC_NATIVE=pure), timeout=120)
        assert out.stdout.split() == ["[('LastUnset',", "65)]", "66"], (pure, out.stderr)


_BAD_ARGUMENTS = """
from checker.search import _native
from checker.search.encoding import fingerprint_function
fp = fingerprint_function(64)
parent, succ = (1, 2), (1, 3)
for args in [
    (parent, [b"a", b"b"], succ, [0, 1], fp, set()),        # select a list
    (parent, [b"a", b"b"], succ, (0, "x"), fp, set()),      # an index not an int
    (parent, [b"a", b"b"], succ, (0, 5), fp, set()),        # an index out of range
    (parent, [1, 2], succ, None, fp, set()),                # parts not bytes
    (parent, (None, b"b"), succ, None, fp, set()),
    (parent, [b"a"], succ, None, fp, set()),                # parts of another length
    (parent, [b"a", b"b"], succ, None, 3, set()),           # fingerprint not a function
    (parent, [b"a", b"b"], [1, 3], None, fp, set()),        # a state not a tuple
]:
    try:
        _native.successor(*args)
    except (TypeError, ValueError, IndexError) as e:
        print(type(e).__name__)
    else:
        print("accepted")
for capacity in (2**62, 2**63 - 1, -1):
    try:
        _native.FingerprintSet(capacity)
    except (ValueError, OverflowError, MemoryError) as e:
        print(type(e).__name__)
"""


@needs_native
def test_compiled_functions_check_their_arguments():
    """Wrong arguments raise (in a child process: a crash must not take the
    test run with it); a huge FingerprintSet capacity is refused at once."""
    out = subprocess.run([sys.executable, "-c", _BAD_ARGUMENTS], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["TypeError", "TypeError", "IndexError", "TypeError", "TypeError",
                                  "ValueError", "TypeError", "TypeError",
                                  "OverflowError", "OverflowError", "ValueError"]


@needs_native
def test_batch_columns_match_the_python_path():
    """codec.pack_states' columns (the spark engine's shuffled batches and
    level rows): the same bytes compiled and in Python, for batches of real
    successors (siblings share their parent's parts), a batch of one state,
    an empty one and one whose variable has more than 65,535 distinct parts;
    what the compiled columns refuse goes the Python way."""
    from checker.search import codec
    model, _, pairs = _states(*CONFIGS[0], limit=3000)
    encoded: dict = {}

    def parts(state):
        return [encoded.setdefault(id(v), (v, _py_encode(v)))[1] for v in state]

    batches = [[parts(t) for _, t in pairs[i:i + 500]] for i in range(0, len(pairs), 500)]
    batches += [[parts(pairs[0][1])], [], [[i.to_bytes(3, "big"), b"x"] for i in range(70_000)],
                [tuple(p) for p in batches[0]]]
    for batch in batches:
        want = codec.pack([len(batch), codec._py_columns(batch)])
        assert codec.pack([len(batch), native._native.columns(batch)]) == want
        assert codec.pack_states(batch) == want
    assert any(len(col) == 3 and col[1] == "I" for col in codec.unpack(codec.pack_states(batches[-2]))[1])
    for odd in ([[b"a", b"b"], [b"a"]], [[b"a", 1]], [(b"a",), "ab"]):
        with pytest.raises(TypeError):
            native._native.columns(odd)
    assert codec.pack_states([[b"a", 1], [b"a", 2]]) == codec.pack([2, codec._py_columns([[b"a", 1], [b"a", 2]])])


@needs_native
def test_fingerprint_set_answers_as_a_set():
    rng = random.Random(1)
    s = native._native.FingerprintSet()
    ref: set = set()
    for i in range(200_000):
        v = rng.getrandbits(64) if i % 3 else rng.randrange(0, 40)
        assert s.add_new(v) == (v not in ref)
        ref.add(v)
    assert len(s) == len(ref) and set(s) == ref
    assert all(v in s for v in list(ref)[:5000])
    assert 2**64 not in s and -1 not in s and "x" not in s
    for bad in (-1, 2**64, "x"):
        with pytest.raises((ValueError, TypeError)):
            s.add(bad)
    s.update([5, 6, 5])
    assert 6 in s
    assert s.__sizeof__() < 24 * len(s)  # ~16 bytes a state at this load, never a set's ~70


def _kmc_json(spec, *args, pure):
    env = dict(os.environ, KMC_NATIVE="0" if pure else "1")
    out = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", str(spec), "--json",
                          "--quiet", "--engine", "local", *args],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("spec,args", [
    ("specs/kraft-kip966-quick.toml", ()),
    ("specs/kraft-v3_5-last-replica-standing.toml", ()),
    ("specs/storage/kip966-minisr-lossy-any-strategy.toml", ()),
    ("specs/zk-leader_epoch-data-loss.toml", ()),
])
def test_pure_python_path_same_answers(spec, args, tmp_path):
    a = _kmc_json(ROOT / spec, "--out", str(tmp_path / "c"), *args, pure=False)
    b = _kmc_json(ROOT / spec, "--out", str(tmp_path / "p"), *args, pure=True)
    for key in ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
                "per_action_distinct", "depth", "violated", "sometimes"):
        assert a[key] == b[key], key
    for va, vb in zip(a["violations"], b["violations"]):
        assert va == vb


def test_conformance_figures_on_the_pure_python_path():
    """TLC's figures (tests/conformance) hold with KMC_NATIVE=0 too."""
    if os.environ.get("KMC_NATIVE", "1") == "0":
        pytest.skip("this run is the pure-Python path already")
    env = dict(os.environ, KMC_NATIVE="0")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/conformance/test_tlc_figures.py",
                          "tests/conformance/test_tlc_violations.py"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:]
    assert " passed" in out.stdout and "failed" not in out.stdout


@needs_native
def test_shipped_zip_runs_compiled(tmp_path):
    """The zip of kmc a Spark driver ships (spark/session.py, code_zip) holds
    its compiled module: kmc imported from that zip, in a fresh process away
    from the working tree (as an executor of a cluster), runs compiled, with
    the same bytes; without it in the zip, pure Python."""
    from checker.search.spark.session import code_zip
    zipped = code_zip(tmp_path / "zip")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import checker; from checker.search import native, "
             "encoding; print(checker.__file__); print(native.ENABLED); "
             "print(encoding.encode(frozenset({1, 'a', (2, None)})).hex())")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KMC_NATIVE")}
    # away from the working tree the zip is where `checker` is found first (the venv's
    # editable finder comes after the path, and finds no compiled module below a zipped package)
    out = subprocess.run([sys.executable, "-c", probe, str(zipped)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    where, enabled, encoded = out.stdout.split()
    assert where.startswith(str(zipped)) and enabled == "True"
    assert encoded == _py_encode(frozenset({1, "a", (2, None)})).hex()
    # a zip without the build (as code_zip made before): the pure-Python path, not an error
    import zipfile
    bare = tmp_path / "bare.zip"
    with zipfile.ZipFile(zipped) as src, zipfile.ZipFile(bare, "w") as dst:
        for item in src.infolist():
            if "_native" not in item.filename or item.filename.endswith(".py"):
                dst.writestr(item, src.read(item))
    out = subprocess.run([sys.executable, "-c", probe, str(bare)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1:] == ["False", encoded]


@needs_native
def test_claim_table_rehashed_in_parts_by_several_processes():
    """The auto engine's shared seen set grows with each worker rehashing a
    part at once (forked processes here): every fingerprint keeps its
    smallest key, nothing else is in it, and a part past the parts or a
    capacity not larger is refused."""
    from checker.search import _native
    rng = random.Random(7)
    fps = rng.sample(range(1, 1 << 63), 3000) + [0]
    table = _native.ClaimTable(1 << 16, 1 << 12)
    table.add_old(b"".join(f.to_bytes(8, "little") for f in fps[:1000]))
    claims = _native.Claims(table)
    claims.at(5)
    claims.begin(0)
    for fp in fps[1000:]:   # (a look-up gives the successor its key, then add claims it)
        assert fp not in claims
        claims.add(fp)
    keys = claims.take_keys()
    pids = []
    for part in range(3):
        pid = os.fork()
        if pid == 0:
            table.rehash(1 << 13, part, 3)
            os._exit(0)
        pids.append(pid)
    assert all(os.waitpid(p, 0)[1] == 0 for p in pids)
    table.switch(1 << 13)
    assert table.load() == (len(fps), 1 << 13)
    assert all(table.has_old(fp) for fp in fps[:1000])
    assert not any(table.has_old(fp) for fp in fps[1000:])
    owned = table.owned(keys, b"".join(f.to_bytes(8, "little") for f in fps[1000:]), (1 << 64) - 1)
    assert len(owned) // 4 == len(fps) - 1000   # each still holds the key it was claimed with
    assert not table.has_old(12345)
    for bad in [(1 << 13, 0, 1), (1 << 14, 3, 3), (1 << 14, 0, 0), (3 << 13, 0, 1)]:
        with pytest.raises(ValueError):
            table.rehash(*bad)
    with pytest.raises(ValueError):
        table.switch(1 << 13)


@needs_native
def test_successor_claims_in_the_shared_table_as_in_and_add_do():
    """successor() with a worker's Claims as its seen set (one probe of the
    table) decides as `fp in claims` then `claims.add(fp)`: an earlier
    level's fingerprint or one claimed earlier in BFS order is seen, one
    claimed later is taken over with the smaller key, a new one claimed;
    every look-up takes the next key, the claimed ones recorded; a full
    table raises ClaimTableFull."""
    from checker.search import _native
    parent, succ = (1, 2), (1, 3)
    pparts = [_native.encode(1), _native.encode(2)]

    def run(view, fps):
        it = iter(fps)
        return [_native.successor(parent, pparts, succ, None, lambda b: next(it), view) for _ in fps]

    old, before, later, new = 11, 22, 33, 44
    outcomes = {}
    for how in ("successor", "in-and-add"):
        table = _native.ClaimTable(1 << 16, 1 << 12)
        table.add_old(old.to_bytes(8, "little"))
        other = _native.Claims(table)
        other.at(1)        # an earlier part of the level claims `before`
        other.begin(0)
        assert before not in other
        other.add(before)
        other.at(100)      # a later one `later`
        other.begin(0)
        assert later not in other
        other.add(later)
        mine = _native.Claims(table)
        mine.at(5)
        mine.begin(0)
        fps = [later, before, old, new]
        if how == "successor":
            claimed = [r is not None for r in run(mine, fps)]
        else:
            claimed = []
            for fp in fps:
                claimed.append(fp not in mine)
                if claimed[-1]:
                    mine.add(fp)
        keys = mine.take_keys()
        mine_fps = b"".join(f.to_bytes(8, "little") for f in (later, new))
        outcomes[how] = (claimed, keys, table.owned(keys, mine_fps, (1 << 64) - 1), table.load())
    key = lambda ordinal: ((5 << 24) | ordinal) + 1
    assert outcomes["successor"] == outcomes["in-and-add"]
    claimed, keys, owned, load = outcomes["successor"]
    assert claimed == [True, False, False, True]
    assert keys == b"".join(k.to_bytes(8, "little") for k in (key(0), key(3)))
    assert len(owned) == 8 and load == (4, 1 << 12)   # both now this view's

    table = _native.ClaimTable(1 << 16, 1 << 12)
    table.add_old(b"".join(f.to_bytes(8, "little") for f in range(1, (1 << 12) // 16 * 15 + 1)))
    full = _native.Claims(table)
    full.at(0)
    full.begin(0)
    with pytest.raises(_native.ClaimTableFull):
        run(full, [1 << 40])
    assert run(full, [7]) == [None]   # (a fingerprint there is found, full or not)
