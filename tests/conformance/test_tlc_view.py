"""With the reference .cfg's VIEW, kmc's BFS merges states as TLC with one
worker does on the kip966 reference configuration: 226,060 distinct states
within 11 steps and 726,095 within 13 (TLC built from tlaplus/tlaplus,
-workers 1, VIEW view, CONSTRAINT TLCGet("level") <= N+1; measured for
issue 13, the 13-step figure on 2026-11-23: 5,281,028 generated). With the
view the count depends on exploration order, so only one worker compares.
Within 16 steps TLC with one worker found 3,336,939 (2026-11-25, 24,052,013
generated, 1,278.5 s): the [expect] of specs/kraft-kip966-reference-view.toml,
which `kmc regress` checks level by level. The bound only stops the
expansion, so the counts within 11 and 13 steps are sums of that run's first
levels: this file runs the 11-step check itself and holds the [expect]'s
levels to all three of TLC's figures."""
from __future__ import annotations

from pathlib import Path

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check

SPEC = Path(__file__).resolve().parents[2] / "specs" / "kraft-kip966-reference-view.toml"


TLC = {11: 226_060, 13: 726_095, 16: 3_336_939}   # distinct within N steps, TLC with 1 worker


def test_reference_view_is_tlcs_count_within_11_steps():
    spec = load_spec(SPEC, {}, depth=11)
    model, properties = spec.build()
    result = check(model, properties, CheckOptions(max_depth=11, projection=spec.projection))
    assert result.distinct == TLC[11]
    assert result.outcome == "pass"
    assert result.per_level_distinct == load_spec(SPEC).expect["per_level_distinct"][:12]


def test_the_regressed_levels_give_tlcs_counts_within_11_13_and_16_steps():
    expect = load_spec(SPEC).expect
    levels = expect["per_level_distinct"]
    assert len(levels) == 17 and expect["distinct"] == TLC[16]
    assert {n: sum(levels[:n + 1]) for n in TLC} == TLC
