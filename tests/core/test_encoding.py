"""Canonical encoding and fingerprints (checker/search/encoding.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from enum import IntEnum
from pathlib import Path
from typing import NamedTuple

import pytest

from checker.search.encoding import (decode, encode, encode_state, encode_successor, fingerprint_function,
                              parts_to_bytes, state_fingerprint, projection_selector)

ROOT = Path(__file__).resolve().parents[2]


class Color(IntEnum):
    RED = 0
    GREEN = 1


class Rec(NamedTuple):
    a: int
    b: object


class S(NamedTuple):
    x: object
    y: object
    z: object


def test_set_and_tuple_with_same_elements_differ():
    assert encode(frozenset({1, 2})) != encode((1, 2))
    assert encode(frozenset()) != encode(())
    assert encode(frozenset({(1, 2)})) != encode(((1, 2),))


def test_set_encoding_ignores_construction_order():
    words = [f"broker-{i}" for i in range(50)]
    s1 = frozenset(words)
    s2 = frozenset(reversed(words))
    s3 = frozenset(sorted(words, key=lambda w: w[::-1]))
    assert encode(s1) == encode(s2) == encode(s3)


def test_nested_values_round_trip_as_tuples_and_frozensets():
    value = (Rec(1, frozenset({Rec(2, None), Rec(3, (True, "x"))})), Color.GREEN, frozenset(),
             frozenset({frozenset({1}), frozenset()}), -5, 2**40, "é")
    back = decode(encode(value))
    assert back == value
    assert type(back[0]) is tuple and type(back[0][1]) is frozenset
    assert back[1] == 1 and type(back[1]) is int  # an IntEnum is its int


def test_intenum_namedtuple_and_bool_encodings():
    assert encode(Color.GREEN) == encode(1)
    assert encode(Rec(1, 2)) == encode((1, 2))
    assert encode(True) != encode(1)
    assert encode(None) != encode(0) != encode(False)


def test_unsupported_types_are_refused():
    with pytest.raises(TypeError):
        encode((1, 2.5j))
    with pytest.raises(TypeError):
        encode(frozenset({object()}))
    with pytest.raises(TypeError):
        encode((frozenset({(3, frozenset({2j}))}),))
    # a failed encoding leaves no residue in the (reused) packers
    assert encode((1, 2)) == b"\x92\x01\x02"
    assert decode(encode((frozenset({(3, frozenset({4}))}),))) == (frozenset({(3, frozenset({4}))}),)


def test_joined_parts_are_injective():
    # ("ab", "c") and ("a", "bc") would collide if the parts were joined raw
    # without self-delimiting encodings
    f = fingerprint_function(64)
    sel = projection_selector(("x", "y"), None)
    assert f(sel(encode_state(("ab", "c")))) != f(sel(encode_state(("a", "bc"))))
    assert encode_state(("ab", "c")) != encode_state(("a", "bc"))


def test_parts_to_bytes_is_the_array_encoding():
    s = S(1, frozenset({"a", "b"}), Rec(2, None))
    assert parts_to_bytes(encode_state(s)) == encode(s)
    assert decode(parts_to_bytes(encode_state(s))) == tuple(s)
    wide = tuple(range(40))
    assert parts_to_bytes(encode_state(wide)) == encode(wide)


def test_successor_reuses_parent_bytes_of_unchanged_variables():
    parent = S(frozenset({1, 2}), (1, 2, 3), "x")
    pparts = encode_state(parent)
    succ = parent._replace(y=(1, 2, 4))
    parts = encode_successor(parent, pparts, succ)
    assert parts[0] is pparts[0] and parts[2] is pparts[2]
    assert parts[1] == encode((1, 2, 4))
    assert parts == list(encode_state(succ))


def test_fingerprint_widths_and_projections():
    s = S(1, 2, 3)
    fp64 = state_fingerprint(s, 64)
    fp128 = state_fingerprint(s, 128)
    assert 0 <= fp64 < 2**64 and 0 <= fp128 < 2**128
    assert fp64 != state_fingerprint(S(1, 2, 4), 64)
    # a projection ignores the other variables and its spelling order
    assert state_fingerprint(s, projection=("x", "y")) == state_fingerprint(S(1, 2, 99), projection=("y", "x"))
    assert state_fingerprint(s, projection=("x", "y", "z")) == fp64
    with pytest.raises(ValueError):
        projection_selector(("x", "y"), ("nope",))
    with pytest.raises(ValueError):
        fingerprint_function(32)


_CHILD = r"""
import json, sys
from typing import NamedTuple
from checker.search.encoding import encode_state, state_fingerprint
class S(NamedTuple):
    names: object
    nested: object
    n: object
states = [S(frozenset(f"broker-{i}" for i in range(k)),
            frozenset((f"m{j}", frozenset({f"r{j}", f"s{j}", "x"})) for j in range(k)), k)
          for k in range(12)]
print(json.dumps({"order": [list(s.names) for s in states],
                  "enc": [b"".join(encode_state(s)).hex() for s in states],
                  "fp": [state_fingerprint(s, 128) for s in states]}))
"""


def test_equal_states_encode_equally_across_hash_seeds():
    outputs = []
    for seed in ("0", "1", "12345", "987654321"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        outputs.append(json.loads(out))
    # the hash seeds really change set iteration order (so this test can fail) ...
    assert len({json.dumps(o["order"]) for o in outputs}) > 1
    # ... and never the encoding or the fingerprint
    assert all(o["enc"] == outputs[0]["enc"] for o in outputs)
    assert all(o["fp"] == outputs[0]["fp"] for o in outputs)


# ---- the cached, structural encoder against a plain reference ----------------------------

import random  # noqa: E402

import msgpack  # noqa: E402

from checker.search import encoding  # noqa: E402
from checker.search.encoding import VariableEncoders, clear_caches, encode_changed  # noqa: E402


def reference_encode(v) -> bytes:
    """The canonical encoding, as the module docstring defines it, without any cache."""
    if isinstance(v, (frozenset, set)):
        payload = b"".join(sorted(reference_encode(x) for x in v))
        return msgpack.packb(msgpack.ExtType(encoding.FROZENSET_EXT, payload))
    if isinstance(v, (tuple, list)):
        n = len(v)
        head = bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
        return head + b"".join(reference_encode(x) for x in v)
    return msgpack.packb(v)


class Pair(NamedTuple):
    left: object
    right: object


def random_value(rng: random.Random, pool: list, depth: int = 0):
    """Nested tuples / NamedTuples / frozensets of ints, bools, None, IntEnums,
    strs; reuses earlier objects from `pool` (as successors share their
    parent's), and mixes bools with the ints they equal."""
    if pool and rng.random() < 0.25:
        return rng.choice(pool)
    r = rng.random()
    if depth >= 3 or r < 0.3:
        v = rng.choice([0, 1, 2, 3, 200, -1, 2**40, True, False, None, Color.RED, Color.GREEN,
                        "a", "bc", 1.5])
    elif r < 0.55:
        v = frozenset(rng.choice([0, 1, 2, 3, True, False, Color.GREEN, 1.0]) for _ in range(rng.randint(0, 4)))
    elif r < 0.7:  # a set of anything hashable
        items = (random_value(rng, pool, depth + 1) for _ in range(rng.randint(0, 3)))
        v = frozenset(x for x in items if _hashable(x))
    elif r < 0.85:
        v = Pair(random_value(rng, pool, depth + 1), random_value(rng, pool, depth + 1))
    else:
        v = tuple(random_value(rng, pool, depth + 1) for _ in range(rng.randint(0, 18)))
    pool.append(v)
    return v


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def test_encode_equals_the_reference_whatever_the_cache_holds():
    rng = random.Random(1234)
    pool: list = []
    values = [random_value(rng, pool) for _ in range(3000)]
    expected = [reference_encode(v) for v in values]
    clear_caches()
    assert [encode(v) for v in values] == expected          # cold, then warm as it goes
    assert [encode(v) for v in values] == expected          # warm
    assert [encode(v) for v in reversed(values)] == expected[::-1]
    saved = encoding._CACHE_LIMIT, encoding._INT_SETS_LIMIT
    encoding._CACHE_LIMIT, encoding._INT_SETS_LIMIT = 7, 3  # evicted all the time
    try:
        clear_caches()
        assert [encode(v) for v in values] == expected
    finally:
        encoding._CACHE_LIMIT, encoding._INT_SETS_LIMIT = saved


def test_sets_of_equal_ints_and_bools_keep_their_own_encodings():
    # {True} == {1} == {1.0} and they hash alike: the by-value table of int
    # sets must never hand one the other's bytes, whichever comes first
    variants = [frozenset({1}), frozenset({True}), frozenset({1.0}), frozenset({Color.GREEN}),
                frozenset({0, 1}), frozenset({False, True}), frozenset({0, True})]
    for order in (variants, variants[::-1]):
        clear_caches()
        got = {v_i: encode(v) for v_i, v in enumerate(order)}
        assert [got[i] for i in range(len(order))] == [reference_encode(v) for v in order]
    assert encode(frozenset({1})) != encode(frozenset({True}))
    assert encode(frozenset({1})) == encode(frozenset({Color.GREEN}))  # an IntEnum is its int
    assert encode((frozenset({True}), frozenset({1}))) == reference_encode((frozenset({True}),
                                                                             frozenset({1})))


def test_variable_encoders_switch_to_encode_on_the_first_set():
    clear_caches()
    parent = S(1, (1, 2), "x")
    pparts = list(encode_state(parent))
    encs = VariableEncoders(3)
    assert all(e is encs[0] for e in encs)           # the C packer everywhere at first
    succ = parent._replace(y=(1, frozenset({2})))
    with pytest.raises(TypeError):
        encs[1](succ.y)                              # the C packer refuses a set ...
    parts = encode_changed(encs, parent, pparts, succ)
    assert parts == list(encode_state(succ))          # ... encode_changed falls back
    assert encs[1] is encode and encs[0] is not encode
    with pytest.raises(TypeError):                    # a value nobody can encode still fails
        encode_changed(encs, parent, pparts, parent._replace(x=2j))
    import pickle
    assert len(pickle.loads(pickle.dumps(encs))) == 3  # ships (fresh) to another process
