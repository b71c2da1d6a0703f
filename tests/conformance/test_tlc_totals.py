"""TLC's totals for the KIP-966 reference configuration bounded to N steps
(data/kraft-tlc-totals.json; how they were measured: data/PROVENANCE.md).

The figures the README, the Makefile, the reference spec and the benches
call TLC's are these rows: the spec's [expect] within 11 steps is TLC's
count (`kmc regress` holds kmc to it), and kmc's count within 13 steps is
TLC's. Within 9 and 10 steps tests/cli/test_checkpoint.py holds kmc to the
rows; with the .cfg's VIEW, tests/conformance/test_tlc_view.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checker.front.spec import load_spec
from tlc_reference import totals

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "kraft-kip966-reference.toml"
ROWS = totals()
REFERENCE = [r for r in ROWS.values() if r["name"].startswith("kip966-reference-")]


def test_the_rows_are_tlc_runs_of_the_reference_configuration():
    spec = load_spec(SPEC)
    assert {r["name"] for r in REFERENCE} >= {"kip966-reference-d11", "kip966-reference-d13",
                                              "kip966-reference-view-d11", "kip966-reference-view-d13"}
    for row in REFERENCE:
        assert row["variant"] == spec.variant
        assert {k: spec.constants[k] for k in row["constants"]} == row["constants"], row["name"]
        assert row["levels"] == row["depth"] + 1   # bounded: TLC's levels count the initial state
        assert row["tlc_version"].startswith("TLC2 Version ") and len(row["tlc_jar_sha256"]) == 64
        assert "-workers 1 " in row["tlc_run"] or "with 1 worker" in row["tlc_run"]
        assert ("--view" in row["command"]) == row["view"]
        assert f"--depth {row['depth']}" in row["command"]


def test_the_reference_spec_expects_tlcs_count_within_11_steps():
    spec = load_spec(SPEC)
    assert spec.depth == 11 and spec.projection is None   # every variable, as TLC without the VIEW
    assert spec.expect["distinct"] == ROWS["kip966-reference-d11"]["distinct"]


@pytest.mark.parametrize("path, name", [("README.md", "kip966-reference-d11"),
                                        ("Makefile", "kip966-reference-d11"),
                                        ("bench/spark_vs_local.py", "kip966-reference-d13")])
def test_the_figures_called_tlcs_are_the_rows(path, name):
    assert f"{ROWS[name]['distinct']:,}" in (ROOT / path).read_text()


@pytest.mark.slow
def test_within_13_steps_kmc_counts_what_tlc_counts(tmp_path):
    # kmc itself on the default engine (auto: every core), as a user runs it
    r = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", str(SPEC), "--depth", "13",
                        "--out", str(tmp_path), "--json", "-q"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    row = ROWS["kip966-reference-d13"]
    assert result["outcome"] == "pass"
    assert result["distinct"] == row["distinct"]
    assert len(result["per_level_distinct"]) == row["levels"]
