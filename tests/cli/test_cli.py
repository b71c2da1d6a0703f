"""The kmc command line (checker/front/cli.py), through click's CliRunner."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front import cli as cli_module
from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
DIEHARD = ROOT / "specs" / "toy-diehard.toml"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def run_dirs(out: Path) -> list[Path]:
    return sorted(p for p in out.glob("*/*") if p.is_dir())


BAD_SPECS = {
    "unknown model": 'model = "nope"\n',
    "unknown variant": 'model = "twophase"\nvariant = "nope"\n',
    "unknown invariant": 'model = "twophase"\ninvariants = ["TCConsistent", "Nope"]\n',
    "unknown constant": 'model = "twophase"\n[constants]\nNope = 3\n',
    "unknown top-level key": 'model = "twophase"\ndepht = 3\n',
    "bool for int": 'model = "twophase"\n[constants]\nRMCount = true\n',
    "str for list": 'model = "twophase"\n[constants]\nRM = "r1"\n',
    "int in list of str": 'model = "twophase"\n[constants]\nRM = ["r1", 2]\n',
    "bool depth": 'model = "twophase"\ndepth = true\n',
    "negative depth": 'model = "twophase"\ndepth = -1\n',
    "malformed TOML": 'model = "twophase\n[constants\n',
    "model rejects constants": 'model = "twophase"\n[constants]\nRM = ["a", "a"]\n',
    "missing model": 'variant = "standard"\n',
    "bad fingerprint": 'model = "twophase"\nfingerprint = "md5"\n',
    "unknown projection": 'model = "twophase"\nprojection = "nope"\n',
    "unknown projection variable": 'model = "twophase"\nprojection = ["rmState", "nope"]\n',
    "bad expect outcome": 'model = "twophase"\n[expect]\noutcome = "fine"\n',
    "unknown expect key": 'model = "twophase"\n[expect]\nsteps = 3\n',
}


def assert_one_error_line(result):
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kmc: error: ")
    assert "Traceback" not in result.output and result.stdout == ""


@pytest.mark.parametrize("kind", BAD_SPECS)
def test_bad_spec_exits_2_with_one_line(kind, tmp_path):
    spec = write(tmp_path, BAD_SPECS[kind])
    result = run("check", spec, "--out", tmp_path / "out")
    assert_one_error_line(result)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [
    ["check", "no/such/spec.toml"],
    ["check", TWOPHASE, "--set", "RMCount=yes"],          # not a TOML value
    ["check", TWOPHASE, "--set", "RMCount"],              # no '='
    ["check", TWOPHASE, "--set", "RMCount=true"],         # bool is not int
    ["check", TWOPHASE, "--set", "Nope=1"],               # unknown constant
    ["check", TWOPHASE, "--set", "RMCount=-2"],           # the model rejects it
    ["check", TWOPHASE, "--depth", "many"],
    ["check", TWOPHASE, "--depth", "-3"],
    ["check", TWOPHASE, "--engine", "warp"],
    ["check", TWOPHASE, "--bogus"],
    ["check"],
    ["nosuchcommand"],
])
def test_bad_command_line_exits_2_with_one_line(args, tmp_path):
    result = run(*args, "--out", tmp_path / "out") if args and args[0] == "check" and len(args) > 1 \
        else run(*args)
    assert_one_error_line(result)


def test_missing_file_message_names_the_file(tmp_path):
    result = run("check", tmp_path / "absent.toml")
    assert_one_error_line(result)
    assert "absent.toml" in result.stderr


def test_pass_exits_0_and_writes_summary(tmp_path):
    result = run("check", TWOPHASE, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (rd,) = run_dirs(tmp_path)
    assert rd.parent.name == "toy-twophase"
    summary = json.loads((rd / "summary.json").read_text())
    assert summary["outcome"] == "pass" and summary["distinct"] == 288
    assert summary["config"]["constants"] == {"RM": ["r1", "r2", "r3"], "RMCount": 0}
    assert summary["expect"] == {"outcome": "pass", "distinct": 288}
    assert summary["sometimes"]["AllCommitted"]["witnessed"] is True
    assert set(summary["per_action_generated"]) == {"TMCommit", "TMAbort", "TMRcvPrepared", "RMPrepare",
                                                     "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"}
    for key in ("generated_per_s", "distinct_per_s", "peak_memory_kb", "collision_probability",
                "wall_time_s", "per_action_distinct", "depth_reached"):
        assert key in summary
    assert "288 distinct states found" in result.stdout
    assert not [p for p in rd.parent.iterdir() if p.name.startswith(".")]


def test_violation_exits_1_and_writes_traces(tmp_path):
    result = run("check", DIEHARD, "--out", tmp_path)
    assert result.exit_code == 1, result.output
    (rd,) = run_dirs(tmp_path)
    summary = json.loads((rd / "summary.json").read_text())
    assert summary["violated"] == ["NotSolved"] and summary["depth"] == 6
    trace = json.loads((rd / "trace-NotSolved.json").read_text())
    assert [s["action"]["name"] for s in trace["steps"][1:]] == summary["violations"][0]["actions"]
    assert trace["steps"][-1]["state"] == {"big": 4, "small": 3}
    text = (rd / "trace-NotSolved.txt").read_text()
    assert "Invariant NotSolved is violated after 6 steps." in text
    assert "Step 6: BigToSmall" in text and "big = 4" in text


def test_json_prints_exactly_one_object(tmp_path):
    result = run("check", DIEHARD, "--json", "--out", tmp_path)
    assert result.exit_code == 1
    obj = json.loads(result.stdout)  # the whole stdout is one JSON value
    assert isinstance(obj, dict)
    assert obj["outcome"] == "violation" and obj["violated"] == ["NotSolved"] and obj["depth"] == 6
    assert obj["per_level_distinct"][0] == 1 and obj["distinct"] >= 6 and obj["generated"] > obj["distinct"]
    assert "Invariant NotSolved" in result.stderr


def test_depth_option_and_none(tmp_path):
    bounded = json.loads(run("check", TWOPHASE, "--json", "--depth", "3", "--out", tmp_path).stdout)
    assert bounded["per_level_distinct"] == [1, 7, 21, 38] and bounded["distinct"] == 67
    assert bounded["config"]["depth"] == 3
    spec = write(tmp_path, TWOPHASE.read_text().replace('variant = "standard"', 'variant = "standard"\ndepth = 2'),
                 "bounded.toml")
    assert json.loads(run("check", spec, "--json", "--out", tmp_path).stdout)["distinct"] == 29
    unbounded = json.loads(run("check", spec, "--json", "--depth", "none", "--out", tmp_path).stdout)
    assert unbounded["distinct"] == 288 and unbounded["config"]["depth"] is None
    zero = json.loads(run("check", spec, "--json", "--depth", "0", "--out", tmp_path).stdout)
    assert zero["distinct"] == 1


def test_set_overrides_constants(tmp_path):
    result = run("check", TWOPHASE, "--json", "--set", "RMCount=5", "--quiet", "--out", tmp_path)
    obj = json.loads(result.stdout)
    assert obj["distinct"] == 8832 and obj["config"]["overrides"] == {"RMCount": 5}
    result = run("check", TWOPHASE, "--json", "--set", 'RM=["a", "b"]', "--out", tmp_path)
    obj = json.loads(result.stdout)
    assert obj["config"]["constants"]["RM"] == ["a", "b"] and obj["distinct"] < 288
    result = run("check", DIEHARD, "--json", "--set", "Goal=9", "--out", tmp_path)
    assert result.exit_code == 0 and json.loads(result.stdout)["outcome"] == "pass"


def test_continue_reports_every_violated_property(tmp_path):
    spec = write(tmp_path, 'model = "randgraph"\n[constants]\nNodes = 80\nSeed = 5\nTargets = [60]\n')
    first = json.loads(run("check", spec, "--json", "--out", tmp_path / "a").stdout)
    assert first["violated"] == ["NotOdd"]
    result = run("check", spec, "--json", "--continue", "--out", tmp_path / "b")
    assert result.exit_code == 1
    obj = json.loads(result.stdout)
    assert sorted(obj["violated"]) == ["NotOdd", "NotTarget"]
    (rd,) = run_dirs(tmp_path / "b")
    assert (rd / "trace-NotOdd.txt").exists() and (rd / "trace-NotTarget.json").exists()
    assert obj["depth"] == min(v["depth"] for v in obj["violations"])


def test_deadlock_option(tmp_path):
    spec = write(tmp_path, 'model = "randgraph"\ninvariants = ["NotTarget"]\n[constants]\nNodes = 40\nDegree = 2\nSeed = 3\n')
    assert run("check", spec, "--out", tmp_path).exit_code == 0
    result = run("check", spec, "--deadlock", "--json", "--out", tmp_path)
    assert result.exit_code == 1 and json.loads(result.stdout)["violated"] == ["Deadlock"]
    spec2 = write(tmp_path, spec.read_text().replace('invariants', 'check_deadlock = true\ninvariants'), "d2.toml")
    assert run("check", spec2, "--out", tmp_path).exit_code == 1
    assert run("check", spec2, "--no-deadlock", "--out", tmp_path).exit_code == 0


def test_evaluation_error_exits_3_naming_the_action(tmp_path):
    spec = write(tmp_path, 'model = "randgraph"\ninvariants = []\ncheck_deadlock = true\n[constants]\nNodes = 60\nSeed = 1\nErrorNode = 0\n')
    result = run("check", spec, "--out", tmp_path / "out")
    assert result.exit_code == 3, result.output
    errors = [l for l in result.stderr.splitlines() if l.startswith("kmc: error:")]
    assert len(errors) == 1 and "Node(node=0)" in errors[0] and "Traceback" not in result.output
    assert len(errors[0]) <= 220
    # the error is a result: a run folder with the trace to the state that raised
    (run_dir,) = run_dirs(tmp_path / "out")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["outcome"] == "error" and summary["error"]["depth"] == 0
    assert "node 0 cannot be evaluated" in (run_dir / "trace-EvaluationError.txt").read_text()


def test_interrupted_run_leaves_no_files(tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    import checker.search.parallel
    monkeypatch.setattr(cli_module, "run_check", interrupted)   # --engine local
    monkeypatch.setattr(checker.search.parallel, "check_auto", interrupted)   # the default engine, auto
    for engine in ("local", "auto"):
        result = run("check", TWOPHASE, "--engine", engine, "--out", tmp_path)
        assert result.exit_code == 130
        assert list(tmp_path.iterdir()) == []


def test_interrupt_while_writing_leaves_no_half_written_run(tmp_path, monkeypatch):
    from checker.output import traces

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setitem(traces.WRITERS, "itf", interrupted)  # after the text and JSON were written
    result = run("check", DIEHARD, "--out", tmp_path)
    assert result.exit_code == 130
    spec_dir = tmp_path / "toy-diehard"
    assert list(spec_dir.iterdir()) == []  # no run dir, no temp dir, no temp file


def test_list_names_models_constants_and_properties():
    result = run("list")
    assert result.exit_code == 0
    for word in ("twophase", "diehard", "randgraph", "RMCount (int, default 0)", "RM (list of str",
                 "TCConsistent [always]", "AllCommitted [sometimes]", "NotSolved", "projection no_msgs"):
        assert word in result.stdout


def test_main_script_entry_point_exit_codes(tmp_path):
    import subprocess
    import sys
    code = "import sys; from checker.front.cli import main; sys.argv = ['kmc'] + sys.argv[1:]; main()"
    r = subprocess.run([sys.executable, "-c", code, "check", str(DIEHARD), "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1
    r = subprocess.run([sys.executable, "-c", code, "check", str(tmp_path / "x.toml")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_unwritable_results_root_is_bad_input(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_error_line(run("check", DIEHARD, "--out", blocker))          # a file, not a directory
    assert_one_error_line(run("check", DIEHARD, "--out", blocker / "sub"))  # under a file
