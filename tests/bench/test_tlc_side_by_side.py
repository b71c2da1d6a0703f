"""bench/tlc_side_by_side.py: its kmc part on a tiny complete state space, its
checks, and the TLC configuration it writes (TLC itself is not run here)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tlc_side_by_side.py"

# TLC's figures for reference configuration kip966-b2s1: from
# tests/conformance/data/kraft-tlc.json (TLC built from tlaplus/tlaplus cc6b616 on
# Vanlightly/kafka-tlaplus 823615e, kip-966 folder, -workers 1 -deadlock, no
# VIEW): 367 distinct, 718 generated, 18 levels (17 steps).
B2S1_CONSTANTS = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1,
                  "InitIsrSize": 2, "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 0,
                  "FenceBrokerLimit": 0, "LeaderShrinkIsrLimit": 1, "ReassignmentLimit": 0}
B2S1 = {"distinct": 367, "generated": 718, "depth": 17}
ROW_FIELDS = {"distinct", "generated", "depth", "wall_s", "distinct_per_s", "generated_per_s",
              "peak_rss_kb", "bytes_per_distinct"}


def load_script():
    spec = importlib.util.spec_from_file_location("tlc_side_by_side", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def core() -> str:
    return str(min(os.sched_getaffinity(0)))


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def test_kmc_only_tiny_config_json(tmp_path):
    out = tmp_path / "bench.json"
    r = run("--configs", "tiny", "--kmc-only", "--kmc-cpu", core(), "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "load average before:" in r.stdout and "load average after:" in r.stdout
    assert "tiny   kmc         367        718    17" in r.stdout
    data = json.loads(out.read_text())
    assert data["with_tlc"] is False and data["void"] == []
    assert len(data["loadavg_before"]) == 3 and len(data["loadavg_after"]) == 3
    [row] = data["runs"]
    assert row["config"] == "tiny" and row["variant"] == "kip966" and row["run"] == 1
    assert row["constants"] == B2S1_CONSTANTS
    assert row["tlc"] is None and row["counts_equal"] is True
    kmc = row["kmc"]
    assert ROW_FIELDS <= set(kmc)
    assert {k: kmc[k] for k in B2S1} == B2S1
    assert kmc["wall_s"] > 0 and kmc["peak_rss_kb"] > 0
    assert kmc["bytes_per_distinct"] == pytest.approx(kmc["peak_rss_kb"] * 1024 / 367)
    assert kmc["generated_per_s"] == pytest.approx(718 / kmc["wall_s"])


def test_counts_unlike_tlcs_make_the_comparison_void(tmp_path, monkeypatch, capsys):
    mod = load_script()
    monkeypatch.setitem(mod.CONFIGS["tiny"], "tlc", {**B2S1, "generated": 719})
    out = tmp_path / "bench.json"
    assert mod.main(["--configs", "tiny", "--kmc-only", "--kmc-cpu", core(), "--json", str(out)]) == 1
    cap = capsys.readouterr()
    assert "COUNTS DIFFER: generated: kmc 718 vs TLC's recorded figures 719" in cap.out
    assert "the comparison is void" in cap.err
    data = json.loads(out.read_text())
    assert data["runs"][0]["counts_equal"] is False and data["void"]


@pytest.mark.parametrize("args, message", [
    (["--configs", "Z", "--kmc-only"], "unknown configuration Z"),
    (["--configs", "tiny"], "TLC needs --tlc-jar and --reference-spec"),
    (["--kmc-only", "--repeat", "0"], "--repeat must be at least 1"),
    (["--kmc-only", "--kmc-cpu", "999"], "core 999 is not one"),
    (["--tlc-jar", "/nonexistent.jar", "--reference-spec", "/"], "--tlc-jar /nonexistent.jar: no such file"),
])
def test_bad_input_one_line_exit_2(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("tlc_side_by_side.py: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


CFG = """CONSTANTS
    BrokerCount = 3
    Values = { A }
    AvoidLastReplicaStanding = TRUE
    FENCED = FENCED

INIT Init
NEXT Next

\\* Comment the VIEW line when doing liveness checks
VIEW view
INVARIANT
LeaderCompletenessProperty
"""


def test_tlc_config_sets_constants_and_drops_the_view(tmp_path):
    mod = load_script()
    (tmp_path / "kafka_replication_v3_5.tla").write_text("---- MODULE kafka_replication_v3_5 ----\n====\n")
    (tmp_path / "kafka_replication_v3_5.cfg").write_text(CFG)
    cfg = {"variant": "v3_5", "constants": {"BrokerCount": 2, "Values": ["A", "B"],
                                            "AvoidLastReplicaStanding": False}}
    assert mod.write_tlc_config(cfg, tmp_path) == "kafka_replication_v3_5.tla"
    text = (tmp_path / "MC.cfg").read_text()
    assert "    BrokerCount = 2\n    Values = {A, B}\n    AvoidLastReplicaStanding = FALSE\n" in text
    assert "\n\\* VIEW view\n" in text and "\nVIEW" not in text
    assert "LeaderCompletenessProperty" in text
    with pytest.raises(mod.Fail, match="constant MinISR is not set once"):
        mod.write_tlc_config({"variant": "v3_5", "constants": {"MinISR": 1}}, tmp_path)


def test_tlc_log_parsing(tmp_path):
    mod = load_script()
    log = tmp_path / "tlc.log"
    log.write_text("Progress(3) at x: 9 states generated, 5 distinct states found, 2 states left on queue.\n"
                   "Model checking completed. No error has been found.\n"
                   "855577 states generated, 283873 distinct states found, 0 states left on queue.\n"
                   "The depth of the complete state graph search is 33.\n")
    assert mod.tlc_result(log) == {"distinct": 283873, "generated": 855577, "depth": 32}
    log.write_text("Error: Invariant LogMatchingProperty is violated.\n"
                   "12 states generated, 10 distinct states found, 3 states left on queue.\n")
    with pytest.raises(mod.Void, match="did not finish"):
        mod.tlc_result(log)
