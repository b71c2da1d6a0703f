"""With the reference .cfg's VIEW, kmc's BFS merges states as TLC with one
worker does: 226,060 distinct states within 11 steps of the kip966 reference
configuration (TLC built from tlaplus/tlaplus, 1 worker, VIEW view, CONSTRAINT
TLCGet("level") <= 12; measured for issue 13). With the view the count
depends on exploration order, so only one worker compares."""
from __future__ import annotations

from pathlib import Path

from checker.engine import CheckOptions, check
from checker.spec import load_spec

SPEC = Path(__file__).resolve().parents[2] / "specs" / "kraft-kip966-reference-view.toml"


def test_reference_view_within_11_steps_is_tlcs_count():
    spec = load_spec(SPEC, {}, depth=11)
    model, properties = spec.build()
    result = check(model, properties, CheckOptions(max_depth=11, view=spec.view))
    assert result.distinct == 226_060
    assert result.outcome == "pass"
