"""bench/tlc_kraft_figures.py reads TLC's output right (TLC itself is not
run here): the figures of a complete and of a bounded run, a violation's
steps and actions, the checks that refuse a log whose counts disagree, the
model files it writes, and one error line for bad input."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tlc_kraft_figures.py"
_spec = importlib.util.spec_from_file_location("tlc_kraft_figures", SCRIPT)
tkf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tkf)

MAIN = "kafka_replication_kip_966"


def coverage(counts: dict, init: int = 1) -> str:
    lines = [f"<Init line 1, col 1 to line 2, col 2 of module {MAIN}>: 1:{init}"]
    for i, a in enumerate(tkf.ACTIONS["kip966"]):
        lines.append(f"<{a} line {10 + i}, col 1 to line {11 + i}, col 5 of module {MAIN}>: "
                     f"0:{counts.get(a, 0)}")
    return "The coverage statistics at 2026-11-27\n" + "\n".join(lines) + "\n"


def log(generated: int, distinct: int, depth: int, counts: dict) -> str:
    return ("TLC2 Version 2026.11.23\n" + coverage(counts) + "Model checking completed. "
            "No error has been found.\n"
            f"{generated} states generated, {distinct} distinct states found, 0 states left on queue.\n"
            f"The depth of the complete state graph search is {depth}.\n")


def test_a_complete_run():
    text = log(6, 4, 3, {"SendFetchRequest": 3, "PerformPartitionReassignment": 2})
    out = tkf.parse(text, "kip966", {1: 1, 2: 2, 3: 1}, 0, None)
    assert out["outcome"] == "ok" and (out["distinct"], out["generated"], out["levels"]) == (4, 6, 3)
    assert out["per_level_distinct"] == [1, 2, 1] and out["max_steps"] == 2
    assert out["per_action_generated"]["PerformPartitionReassignment"] == 2
    assert out["successors_beyond_bound"] is None


def test_a_bounded_run_keeps_the_successors_beyond_the_bound_apart():
    text = log(9, 3, 2, {"SendFetchRequest": 8})
    out = tkf.parse(text, "kip966", {1: 1, 2: 2, 3: 5}, 0, 1)
    assert out["per_level_distinct"] == [1, 2] and out["successors_beyond_bound"] == 5


@pytest.mark.parametrize("levels, counts, words", [
    ({1: 1, 2: 2}, {"SendFetchRequest": 5}, "KMCLEVEL lines"),        # 3 states, TLC says 4
    ({1: 1, 2: 2, 3: 1}, {"SendFetchRequest": 4}, "coverage"),         # 1 + 4 != 6
])
def test_counts_that_disagree_are_refused(levels, counts, words):
    with pytest.raises(tkf.Fail, match=words):
        tkf.parse(log(6, 4, 3, counts), "kip966", levels, 0, None)


def test_a_violation():
    text = ("TLC2 Version x\nError: Invariant NoCommittedRecordLostGlobally is violated.\n"
            f"State 1: <Initial predicate>\nState 2: <WriteRecordToLeader(1) line 5, col 1 to line 6, "
            f"col 2 of module {MAIN}>\nState 3: <PerformPartitionReassignment line 7, col 1 to line 8, "
            f"col 2 of module {MAIN}>\n")
    out = tkf.parse(text, "kip966", {}, 12, None)
    assert out["outcome"] == {"violation": "NoCommittedRecordLostGlobally", "steps": 2,
                              "actions": ["WriteRecordToLeader(1)", "PerformPartitionReassignment"]}
    assert out["distinct"] is None


def test_the_model_files(tmp_path):
    cfg = ("CONSTANTS\n" + "".join(f"    {k} = 0\n" for k in tkf.FOLDERS["kip966"][2])
           + "INIT Init\nNEXT Next\nVIEW view\nINVARIANT\nLeaderCompletenessProperty\n")
    (tmp_path / f"{MAIN}.cfg").write_text(cfg)
    variant, constants, depth = tkf.CONFIGS["kip966-b3-ra1-d10"]
    tkf.write_model(tmp_path, variant, constants, depth)
    mc = (tmp_path / "MC.cfg").read_text()
    assert "    Values = {A}\n" in mc and "    ReassignmentLimit = 1\n" in mc
    assert "\\* VIEW view" in mc and mc.endswith("LeaderCompletenessProperty\nKmcLevel\nCONSTRAINT DepthBound\n")
    assert 'TLCGet("level") <= 11' in (tmp_path / "MC.tla").read_text()


def test_bad_input_is_one_line():
    r = subprocess.run([sys.executable, str(SCRIPT), "--tlc-jar", str(SCRIPT), "--configs", "nope"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "tlc_kraft_figures.py: unknown configuration(s) nope"]


def test_verify_says_which_rows_differ(tmp_path, monkeypatch, capsys):
    """--verify: each row of a file measured again (TLC stood in for here),
    "same" or "DIFFERENT" with both sides, exit 1 when any row differs."""
    import json
    rows = [{"name": "a", "variant": "kip966", "constants": {}, "distinct": 4, "generated": 6, "levels": 3,
             "per_level_distinct": [1, 2, 1], "per_action_generated": {"SendFetchRequest": 5}},
            {"name": "v", "variant": "v3_5", "constants": {}, "violated": "LeaderCompletenessProperty",
             "steps": 1, "actions": ["UncleanShutdown(1)"]}]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    measured = {"a": dict(rows[0]),
                "v": {"outcome": {"violation": "LeaderCompletenessProperty", "steps": 1,
                                  "actions": ["UncleanShutdown(1)"]}}}

    def fake_run_tlc(jar, ref, variant, constants, depth, cpu, logdir, label):
        res = {**dict.fromkeys(("outcome", "distinct", "generated", "levels")), **measured[label]}
        return {**res, "tlc_version": "TLC2 Version x", "tlc_wall_s": 1.0, "date": "d",
                "load_avg_1m": [0, 0]}

    monkeypatch.setattr(tkf, "run_tlc", fake_run_tlc)
    assert tkf.verify(Path("jar"), Path("ref"), path, None, None) == 0
    assert capsys.readouterr().out.count(": same (") == 2
    measured["a"]["per_level_distinct"] = [1, 1, 2]
    assert tkf.verify(Path("jar"), Path("ref"), path, None, None) == 1
    out = capsys.readouterr().out
    assert "a: DIFFERENT" in out and "[1, 1, 2]" in out and "v: same" in out
