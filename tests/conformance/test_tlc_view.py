"""With the reference .cfg's VIEW, kmc's BFS merges states as TLC with one
worker does on the kip966 reference configuration: 226,060 distinct states
within 11 steps and 726,095 within 13 (TLC built from tlaplus/tlaplus,
-workers 1, VIEW view, CONSTRAINT TLCGet("level") <= N+1; measured for
issue 13, the 13-step figure on 2026-11-23: 5,281,028 generated). With the
view the count depends on exploration order, so only one worker compares.
Within 16 steps TLC with one worker found 3,336,939 (2026-11-25, 24,052,013
generated, 1,278.5 s): the [expect] of specs/kraft-kip966-reference-view.toml,
which `kmc regress` checks."""
from __future__ import annotations

from pathlib import Path

import pytest

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check

SPEC = Path(__file__).resolve().parents[2] / "specs" / "kraft-kip966-reference-view.toml"


@pytest.mark.parametrize("depth,distinct", [
    (11, 226_060),
    pytest.param(13, 726_095, marks=pytest.mark.slow),
])
def test_reference_view_is_tlcs_count(depth, distinct):
    spec = load_spec(SPEC, {}, depth=depth)
    model, properties = spec.build()
    result = check(model, properties, CheckOptions(max_depth=depth, view=spec.view))
    assert result.distinct == distinct
    assert result.outcome == "pass"
