"""bench/spark_vs_local.py (quoted in docs/performance.md): each
engine in a child process of its own, pairs in alternating order, identical
results checked, and the median speedup in its JSON."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "spark_vs_local.py"
SPEC = ROOT / "specs" / "kraft-kip966-reference.toml"


def test_pairs_in_fresh_processes(tmp_path):
    out_json = tmp_path / "out.json"
    out = subprocess.run([sys.executable, str(BENCH), "--depth", "4", "--reps", "2", "--json", str(out_json)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out_json.read_text())
    spec = load_spec(str(SPEC), depth=4)
    model, props = spec.build()
    expected = check(model, props, CheckOptions(max_depth=4, check_deadlock=spec.check_deadlock,
                                                fingerprint_bits=spec.fingerprint_bits, projection=spec.projection))
    pairs = figures["pairs"]
    assert [p["order"] for p in pairs] == ["local-first", "spark-first"]
    assert figures["identical"] and all(p["identical"] for p in pairs)
    assert all(p["distinct"] == expected.distinct and p["generated"] == expected.generated for p in pairs)
    speedups = sorted(p["local"]["wall_s"] / p["spark"]["wall_s"] for p in pairs)
    assert abs(figures["median_speedup"] - sum(speedups) / 2) < 1e-9
    # every spark run started its own session: a fresh process each
    assert all(p["spark"]["startup_s"] > 0 and p["spark"]["levels"] for p in pairs)
    assert f"median speedup over 2 pair(s): {figures['median_speedup']:.2f}x" in out.stdout


def test_reps_must_be_positive():
    out = subprocess.run([sys.executable, str(BENCH), "--reps", "0"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--reps must be at least 1" in out.stderr
