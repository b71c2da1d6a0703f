"""`kmc check` with temporal properties: verdicts and exit codes, the liveness
section of summary.json, the lasso files (text, JSON, ITF with its loop,
HTML with the cycle marked), `kmc regress` rows, and every refusal as one
`kmc: error:` line with exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checker.output import itf
from kraft_specs import kip966_b2

ROOT = Path(__file__).resolve().parents[2]
KMC = [sys.executable, "-m", "checker.front.cli"]

TWOPHASE_FAIR = ["WF:TMCommit", "WF:TMAbort", "WF:RMPrepare", "WF:RMRcvCommitMsg",
                 "WF:RMRcvAbortMsg", "WF:TMRcvPrepared"]

def kmc(*args, cwd=None, env=None):
    return subprocess.run(KMC + [str(a) for a in args], capture_output=True, text=True, cwd=cwd or ROOT,
                          env={**os.environ, **(env or {})})


def twophase_spec(tmp_path, fairness, properties=("EventuallyAllDecided", "PreparedRMDecides"),
                  extra="", name="tp"):
    spec = tmp_path / f"{name}.toml"
    spec.write_text(f'model = "twophase"\nproperties = {json.dumps(list(properties))}\n'
                    f"fairness = {json.dumps(fairness)}\n{extra}")
    return spec


def run_dir(out: Path) -> Path:
    (spec_dir,) = [p for p in out.iterdir() if p.is_dir()]
    (run,) = [p for p in spec_dir.iterdir() if p.is_dir()]
    return run


def test_holds_under_fairness_exit_0(tmp_path):
    spec = twophase_spec(tmp_path, TWOPHASE_FAIR)
    r = kmc("check", spec, "--out", tmp_path / "res", "--json", "-q")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["outcome"] == "pass"
    live = obj["liveness"]
    assert live["checked"] and live["graph"]["states"] == 288
    assert live["properties"]["EventuallyAllDecided"]["verdict"] == "holds"
    assert live["properties"]["PreparedRMDecides"]["instances"] == {
        "r=r1": "holds", "r=r2": "holds", "r=r3": "holds"}
    assert live["fairness"] == TWOPHASE_FAIR


def test_violated_without_one_fairness_exit_1_and_lasso_files(tmp_path):
    fair = [f for f in TWOPHASE_FAIR if f != "WF:RMRcvAbortMsg"]
    spec = twophase_spec(tmp_path, fair)
    out = tmp_path / "res"
    r = kmc("check", spec, "--out", out, "-q")
    assert r.returncode == 1, r.stderr
    assert "Temporal property EventuallyAllDecided is violated: some RM never commits nor aborts" \
        in r.stdout
    assert "RMRcvAbortMsg(r1)" in r.stdout and "no fairness forces" in r.stdout
    run = run_dir(out)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["outcome"] == "violation"
    assert set(summary["violated"]) == {"EventuallyAllDecided", "PreparedRMDecides"}
    v = next(v for v in summary["violations"] if v["property"] == "EventuallyAllDecided")
    assert v["kind"] == "liveness" and v["stuttering"] and v["cycle_steps"] == 0
    assert v["prefix_steps"] == v["loop"] == v["depth"] == 4   # TMAbort + three RMPrepare
    text = (run / "trace-EventuallyAllDecided.txt").read_text()
    assert "Stuttering: the behaviour stays in state 4 for ever." in text
    obj = json.loads((run / "trace-EventuallyAllDecided.itf.json").read_text())
    assert itf.validate(obj) == []
    assert obj["loop"] == 4 and len(obj["states"]) == 5
    page = (run / "trace-EventuallyAllDecided.html").read_text()
    assert 'id="loopback"' in page and 'class="step cycle"' in page
    trace = json.loads((run / "trace-EventuallyAllDecided.json").read_text())
    assert trace["loop"] == 4 and trace["kind"] == "liveness"


def test_a_real_cycle_is_marked_in_every_file(tmp_path):
    spec = tmp_path / "dh.toml"
    spec.write_text('model = "diehard"\ninvariants = ["TypeOK"]\nproperties = ["AlwaysEventuallySolved"]\n'
                    'fairness = ["WF:FillSmallJug", "WF:FillBigJug", "WF:EmptySmallJug", '
                    '"WF:EmptyBigJug", "WF:SmallToBig", "WF:BigToSmall"]\n')
    out = tmp_path / "res"
    r = kmc("check", spec, "--out", out, "-q")
    assert r.returncode == 1, r.stderr
    run = run_dir(out)
    summary = json.loads((run / "summary.json").read_text())
    (v,) = summary["violations"]
    assert not v["stuttering"] and v["cycle_steps"] > 0
    text = (run / "trace-AlwaysEventuallySolved.txt").read_text()
    assert f"--- cycle: the steps below repeat for ever, from state {v['loop']} ---" in text
    assert f"Back to state {v['loop']}: the cycle repeats for ever." in text
    obj = json.loads((run / "trace-AlwaysEventuallySolved.itf.json").read_text())
    assert itf.validate(obj) == []
    # the ITF leaves out the return step: the state after the last is states[loop]
    assert len(obj["states"]) == v["depth"] and obj["loop"] == v["loop"]
    page = (run / "trace-AlwaysEventuallySolved.html").read_text()
    assert page.count('class="step cycle"') == v["cycle_steps"] + 1


def test_kraft_lasso_headline_in_kafka_terms(tmp_path):
    spec = tmp_path / "nounfence.toml"
    fair = [f"WF:{a}" for a in ("BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
                                "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse",
                                "SendFetchRequest", "ReceiveFetchRequest", "ReceiveFetchResponse",
                                "ReceiveBrokerRegRequest", "ReceiveAlterPartitionRequest")]
    spec.write_text(kip966_b2('invariants = []\nproperties = ["EventuallyUnfenced"]\n'
                              f'fairness = {json.dumps(fair)}'))
    r = kmc("check", spec, "--out", tmp_path / "res", "--json", "-q")
    assert r.returncode == 1, r.stderr
    obj = json.loads(r.stdout)
    ce = obj["liveness"]["properties"]["EventuallyUnfenced"]["counterexample"]
    assert ce["headline"].startswith(f"broker {ce['instance'][-1]} stays FENCED for ever")
    assert "UnfenceBroker" in ce["headline"]


def test_property_option_and_reference_fairness(tmp_path):
    spec = tmp_path / "b2.toml"
    spec.write_text(kip966_b2("invariants = []"))
    r = kmc("check", spec, "--property", "EventuallyUnfenced", "--property", "EventuallyRuns",
            "--out", tmp_path / "res", "--json", "-q")
    assert r.returncode == 0, r.stderr
    live = json.loads(r.stdout)["liveness"]
    assert live["fairness_spec"] == "reference" and "WF:UnfenceBroker" in live["fairness"]
    assert {n: e["verdict"] for n, e in live["properties"].items()} == {
        "EventuallyUnfenced": "holds", "EventuallyRuns": "holds"}


# the auto engine going parallel from a frontier of 5 states, on two workers
PARALLEL = {"KMC_AUTO_THRESHOLD": "5", "KMC_AUTO_WORKERS": "2"}


def test_auto_engine_by_default_same_verdicts_and_lasso_as_local(tmp_path):
    fair = [f for f in TWOPHASE_FAIR if f != "WF:RMRcvAbortMsg"]
    spec = twophase_spec(tmp_path, fair)
    got = {}
    for engine in ("auto", "local"):
        args = ("--engine", engine) if engine == "local" else ()   # auto: the default
        r = kmc("check", spec, *args, "--out", tmp_path / engine, "--json", "-q", env=PARALLEL)
        assert r.returncode == 1, r.stderr
        got[engine] = json.loads(r.stdout)
    auto, local = got["auto"], got["local"]
    assert auto["config"]["engine"] == "auto" and local["config"]["engine"] == "local"
    assert auto["auto"]["handover_level"] is not None and "pool" in auto["auto"]["levels"]
    assert auto["liveness"]["properties"] == local["liveness"]["properties"]
    assert auto["liveness"]["graph"] == local["liveness"]["graph"]
    assert auto["violations"] == local["violations"]
    assert (run_dir(tmp_path / "auto") / "trace-EventuallyAllDecided.txt").read_text() == \
        (run_dir(tmp_path / "local") / "trace-EventuallyAllDecided.txt").read_text()


BAD = [
    ("depth", 'properties = ["EventuallyAllDecided"]\nfairness = []\ndepth = 3\n', (), "depth bound"),
    ("cli-depth", 'properties = ["EventuallyAllDecided"]\nfairness = []\n', ("--depth", "3"),
     "depth bound"),
    ("projection", 'properties = ["EventuallyAllDecided"]\nfairness = []\nprojection = "no_msgs"\n', (),
     "the projection drops msgs"),
    ("projection-reads", 'properties = ["EventuallyAllDecided"]\nfairness = []\nprojection = ["tmState", "msgs"]\n',
     (), "which temporal property EventuallyAllDecided reads"),
    ("spark", 'properties = ["EventuallyAllDecided"]\nfairness = []\n', ("--engine", "spark"),
     "spark engine keeps no state graph"),
    ("unknown", 'properties = ["Nope"]\nfairness = []\n', (), "unknown temporal property 'Nope'"),
    ("cli-unknown", "", ("--property", "Nope"), "unknown temporal property 'Nope'"),
    ("invariant-as-temporal", 'properties = ["TCConsistent"]\nfairness = []\n', (),
     "TCConsistent is a state property"),
    ("temporal-as-invariant", 'invariants = ["EventuallyAllDecided"]\n', (),
     "EventuallyAllDecided is a temporal property"),
    ("fairness-action", 'properties = ["EventuallyAllDecided"]\nfairness = ["WF:Commit"]\n', (),
     "unknown fairness action 'Commit'"),
    ("fairness-kind", 'properties = ["EventuallyAllDecided"]\nfairness = ["XF:TMCommit"]\n', (),
     "WF or SF"),
    ("fairness-type", 'properties = ["EventuallyAllDecided"]\nfairness = 3\n', (), "fairness must be"),
    ("fairness-alone", 'fairness = ["WF:TMCommit"]\n', (), "no temporal property"),
    ("no-reference", 'properties = ["EventuallyAllDecided"]\n', (), "no reference fairness"),
]


@pytest.mark.parametrize("name,text,args,needle", BAD, ids=[b[0] for b in BAD])
def test_refusals_are_one_line_exit_2(tmp_path, name, text, args, needle):
    spec = tmp_path / f"{name}.toml"
    spec.write_text('model = "twophase"\n' + text)
    r = kmc("check", spec, *args, "--out", tmp_path / "res", "-q", env=PARALLEL)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error:"), r.stderr
    assert needle in lines[0]


def test_regress_checks_a_liveness_expectation(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    fair = [f for f in TWOPHASE_FAIR if f != "WF:RMRcvAbortMsg"]
    twophase_spec(folder, fair, ("EventuallyAllDecided",),
                  extra='[expect]\noutcome = "violation"\nviolated = "EventuallyAllDecided"\n'
                        'depth = 4\ndistinct = 288\n', name="broken")
    twophase_spec(folder, TWOPHASE_FAIR, ("EventuallyAllDecided",),
                  extra='[expect]\noutcome = "pass"\ndistinct = 288\n', name="fine")
    r = kmc("regress", folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("OK") >= 2


def test_kmc_trace_renders_a_lasso_again(tmp_path):
    fair = [f for f in TWOPHASE_FAIR if f != "WF:RMRcvAbortMsg"]
    spec = twophase_spec(tmp_path, fair, ("EventuallyAllDecided",))
    out = tmp_path / "res"
    assert kmc("check", spec, "--out", out, "-q").returncode == 1
    run = run_dir(out)
    shown = kmc("trace", "show", run)
    assert shown.returncode == 0, shown.stderr
    assert "Temporal property EventuallyAllDecided is violated" in shown.stdout
    assert "Stuttering: the behaviour stays in state 4 for ever." in shown.stdout
    obj = json.loads(kmc("trace", "itf", run).stdout)
    assert obj["loop"] == 4 and itf.validate(obj) == []
    page = tmp_path / "again.html"
    assert kmc("trace", "html", run, "-o", page).returncode == 0
    assert 'id="loopback"' in page.read_text()
