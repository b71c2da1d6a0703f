"""TLC's liveness verdicts (data/kraft-tlc-liveness.json, see data/PROVENANCE.md)
equal kmc's: every property of the reference's LIVENESS section, on small
configurations of both variants, under the reference's Liveness (weak
fairness of eleven actions per broker) and under it less one action. Where
TLC finds a violation kmc finds one too, and kmc's lasso is a behaviour of
the model (every step one of its successors, the cycle closing) whose cycle
is fair and which violates the property (checked through the model alone,
tests/liveness/lasso_check.py). Where TLC says the property holds, kmc's
graph has TLC's number of states (the whole state space). The configurations
of up to 15,000 states run on the auto engine too (its workers recording the
graph), with the same verdicts and lassos checked the same way."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from checker.search import registry
from checker.search.engine import CheckOptions
from checker.front.temporal_spec import parse_fairness, temporal_of
from checker.search.liveness.config import LivenessConfig
from checker.search.liveness.run import check_liveness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "liveness"))
from lasso_check import check_lasso  # noqa: E402

DATA = Path(__file__).parent / "data"
FILES = ("kraft-tlc-liveness.json",       # the reference measurements
         "kraft-tlc-liveness-more.json")  # more configurations (data/PROVENANCE.md)
SLOW_DISTINCT = 100_000                   # groups with a bigger graph run as `slow`,
KNOWN_BIG = {"kip966-b2-shrink1-dataloss1"}  # and this one (176,736 states; TLC stops early)


def _rows(files=FILES) -> list[dict]:
    rows = []
    for name in files:
        with open(DATA / name) as f:
            rows += json.load(f)
    return rows


def _groups() -> dict:
    """Rows by (configuration, fairness): one kmc run checks them all."""
    groups: dict = {}
    for row in _rows():
        key = (row["name"], json.dumps(row["fairness"]))
        groups.setdefault(key, []).append(row)
    return groups


GROUPS = _groups()


def test_the_file_covers_both_variants_and_both_fairness_kinds():
    rows = _rows(FILES[:1])
    assert {r["variant"] for r in rows} == {"kip966", "v3_5"}
    assert any(r["fairness"] == "reference" for r in rows)
    assert any(isinstance(r["fairness"], list) for r in rows)
    assert any(r["verdict"] == "violated" for r in rows)


def _id(key) -> str:
    name, fairness = key
    return name + ("" if json.loads(fairness) == "reference" else "-listed-fairness")


def _params():
    """Each group on the local engine; those up to AUTO_DISTINCT states on the
    auto engine too, going parallel from a frontier of AUTO_THRESHOLD states."""
    for key, rows in GROUPS.items():
        most = max(r.get("distinct", 0) for r in rows)
        big = most > SLOW_DISTINCT or key[0] in KNOWN_BIG
        yield pytest.param(key, "local", id=_id(key), marks=[pytest.mark.slow] if big else [])
        if not big and most <= AUTO_DISTINCT:
            yield pytest.param(key, "auto", id=_id(key) + "-auto")


AUTO_DISTINCT = 15_000
AUTO_THRESHOLD = 8


@pytest.mark.parametrize("key,engine", list(_params()))
def test_verdicts_equal_tlc(key, engine):
    rows = GROUPS[key]
    first = rows[0]
    model, _ = registry.build("kraft", first["variant"], first["constants"])
    temporal = temporal_of(model)
    fairness_spec = first["fairness"]
    fairness = parse_fairness(None if fairness_spec == "reference" else fairness_spec, model)
    names = [r["property"] for r in rows]
    config = LivenessConfig([temporal[n] for n in names], fairness, fairness_spec)
    result = check_liveness(model, [], config, CheckOptions(), engine=engine,
                            threshold=AUTO_THRESHOLD, workers=2)
    assert result.liveness["checked"]
    if engine == "auto" and result.distinct > 100:   # the workers recorded part of the graph
        assert result.engine["handover_level"] is not None
    lassos = {v.property: v for v in result.violations}
    for row in rows:
        got = result.liveness["properties"][row["property"]]["verdict"]
        assert got == row["verdict"], (row["name"], row["property"])
        if row["verdict"] == "holds":
            assert result.distinct == row["distinct"]
        else:
            check_lasso(model, lassos[row["property"]], temporal[row["property"]], fairness)
