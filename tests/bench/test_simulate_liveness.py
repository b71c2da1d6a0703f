"""bench/simulate_liveness.py: its liveness-off spec is the liveness spec less
its temporal properties (the same constants, invariants and [simulate])."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import simulate_liveness  # noqa: E402
from checker.front.spec import load_spec  # noqa: E402


def test_the_liveness_off_spec_drops_only_the_temporal_properties(tmp_path):
    on = load_spec(simulate_liveness.SPEC)
    off = load_spec(simulate_liveness.without_properties(simulate_liveness.SPEC, tmp_path))
    assert on.properties and not off.properties
    assert (off.constants, off.invariants, off.simulate) == (on.constants, on.invariants, on.simulate)


def test_every_spec_it_times_expects_a_liveness_violation():
    for path in simulate_liveness.LIVENESS_FINDS:
        spec = load_spec(path)
        assert spec.properties and spec.expect.get("violated"), path
