"""The engine's incremental, cached encoding of kraft states is their
canonical encoding, whatever path or cache produced it (checker/search/encoding.py,
checker/search/engine.py expand_chunk)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from checker.search import encoding
from checker.search.encoding import (clear_caches, decode_state, encode_state, parts_to_bytes,
                              state_fingerprint)
from checker.search.engine import ExpandContext, expand_chunk
from checker.search.registry import build

ROOT = Path(__file__).resolve().parents[2]

# the kip966 reference configuration (specs/kraft-kip966-reference.toml)
CONSTANTS = dict(BrokerCount=3, InitReplicationFactor=3, Values=["A"], MinISR=2, InitIsrSize=2,
                 NoDataLossShutdownLimit=0, DataLossShutdownLimit=1, FenceBrokerLimit=1,
                 LeaderShrinkIsrLimit=0, ReassignmentLimit=0)


def levels(model, depth: int):
    """BFS with expand_chunk: the frontier entries (state, parts, fp) of each level."""
    ctx = ExpandContext.create(model, [])
    frontier = [ctx.entry(s) for s in model.init_states()]
    seen = {e[2] for e in frontier}
    out = [frontier]
    for _ in range(depth):
        frontier = [(e[0], e[1], e[2]) for e in expand_chunk(ctx, frontier, seen).new]
        out.append(frontier)
    return ctx, out


def test_incremental_parts_equal_encoding_from_scratch_and_after_a_round_trip():
    model, _ = build("kraft", "kip966", CONSTANTS)
    ctx, lvls = levels(model, 5)
    entries = [e for lv in lvls for e in lv]
    assert len(entries) > 2000
    clear_caches()
    for state, parts, fp in entries:
        # the parts the engine built from its parent's (shared objects, warm caches)
        # are the state's encoding from scratch ...
        assert parts == list(encode_state(state))
        # ... and a state rebuilt from its bytes (no object in common) encodes alike
        rebuilt = model.from_plain(decode_state(parts_to_bytes(parts)))
        assert rebuilt == state
        assert list(encode_state(rebuilt)) == parts
        assert ctx.entry(rebuilt)[2] == fp == state_fingerprint(state)


def test_every_successor_encodes_as_from_scratch_including_duplicates():
    # duplicates reach an already seen state by another path (other objects)
    model, _ = build("kraft", "kip966", CONSTANTS)
    ctx, lvls = levels(model, 4)
    for state, parts, fp in lvls[-1][:300]:
        res = expand_chunk(ctx, [(state, parts, fp)], set())  # every successor is "new" here
        for succ, sparts, sfp, _, _ in res.new:
            encoding._cache.clear()
            assert sparts == list(encode_state(succ))
            assert sfp == state_fingerprint(succ)


_CHILD = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from tests.core.test_encoding_kraft import CONSTANTS, levels
from checker.search.registry import build
model, _ = build("kraft", "kip966", CONSTANTS)
_, lvls = levels(model, 4)
fps = sorted(e[2] for lv in lvls for e in lv)
print(json.dumps({"n": len(fps), "digest": hashlib.sha256(repr(fps).encode()).hexdigest()}))
"""


def test_fingerprints_are_the_same_in_every_process_and_hash_seed():
    outs = []
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT)], env=env, cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        outs.append(json.loads(out))
    model, _ = build("kraft", "kip966", CONSTANTS)
    _, lvls = levels(model, 4)
    fps = sorted(e[2] for lv in lvls for e in lv)
    here = {"n": len(fps), "digest": hashlib.sha256(repr(fps).encode()).hexdigest()}
    assert outs[0] == outs[1] == here
