"""A model's evaluation error is a result (checker/front/cli.py): exit 3, a
short line naming the action (and the known quirk, when one is the cause),
and a run folder with the trace to the state whose successors raised."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
FIXED = ROOT / "specs" / "kraft-kip966-minisr1-two-values-quirks-fixed.toml"


def quirky_spec(tmp_path: Path, quirks: bool) -> Path:
    """The quirks-fixed spec of kip966 (MinISR 1, values A and B) with one
    fence and a depth bound, the reference's quirks kept or not."""
    text = FIXED.read_text().replace("FenceBrokerLimit = 0", "FenceBrokerLimit = 1")
    text = text.replace("ReferenceQuirks = false", f"ReferenceQuirks = {str(quirks).lower()}")
    text = text.replace('variant = "kip966"', 'variant = "kip966"\ndepth = 6')
    p = tmp_path / "kip966-minisr1.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("engine", ["local", "auto"])
def test_the_reference_quirk_is_named_and_its_trace_written(tmp_path, engine, monkeypatch):
    if engine == "auto":   # every level on the worker pool: the trace rebuilt from a worker's error
        monkeypatch.setenv("KMC_AUTO_THRESHOLD", "1")
        monkeypatch.setenv("KMC_AUTO_WORKERS", "2")
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["check", str(quirky_spec(tmp_path, True)), "--engine", engine,
                                 "--out", str(out), "-q"])
    assert r.exit_code == 3, r.output
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("kmc: error:")]
    assert len(line) <= 220
    assert "WriteRecordToLeader(1)" in line and "SubSeq" in line
    assert line.endswith("known reference quirk (6): set ReferenceQuirks = false")
    (run_dir,) = [p for p in out.glob("*/*") if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["outcome"] == "error"
    error = summary["error"]
    assert error["action"] == "WriteRecordToLeader(1)" and error["depth"] == 3
    assert error["hint"] == "known reference quirk (6): set ReferenceQuirks = false"
    text = (run_dir / "trace-EvaluationError.txt").read_text()
    assert text.startswith("Evaluation error in WriteRecordToLeader(1) from the state after 3 steps")
    assert "Step 3:" in text and "Step 4:" not in text
    steps = json.loads((run_dir / "trace-EvaluationError.json").read_text())
    assert steps["depth"] == 3 and len(steps["steps"]) == 4
    assert (run_dir / "report.html").is_file()
    # the console shows the trace too, and says the spec's [expect] is not met
    assert "Evaluation error in WriteRecordToLeader(1)" in r.stdout
    assert "outcome error, expected pass" in r.stdout


def test_without_the_quirk_no_error(tmp_path):
    r = CliRunner().invoke(cli, ["check", str(quirky_spec(tmp_path, False)), "--engine", "local",
                                 "--out", str(tmp_path / "out"), "-q"])
    assert r.exit_code in (0, 1), r.output
    assert "evaluation error" not in r.output.lower()
