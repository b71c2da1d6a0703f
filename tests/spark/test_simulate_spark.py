"""`kmc simulate --engine spark`: the walks spread over executors are the
local engine's for the same seed (figures, first violation by walk number,
shrunk trace), swarm weights included; start-up and bad masters as
`kmc check --engine spark`: one line, exit 2, no run folder left unless a
result the driver finished alone is written first."""
from __future__ import annotations

import dataclasses
import json
import socket
import threading
from pathlib import Path

import pytest

from checker.front import simulate_cli
from checker.search.simulate import Limits
from spark_helpers import LOCAL_MASTER, ROOT

SIM = ROOT / "specs" / "simulate"
LOSS = SIM / "kip966-storage-3b-minisr-power-losses-balanced.toml"
SAFE = SIM / "kip966-storage-3b-minisr-minus-one-power-loss.toml"
DIEHARD = ROOT / "specs" / "toy-diehard.toml"


def _config(path, seed=1, **changes):
    spec, st = simulate_cli.load(path)
    model, props = spec.build()
    cfg = simulate_cli.sim_config(spec, model, props, st.depth or 100, seed, st.weights, st.swarm,
                                  spec.check_deadlock)
    return spec, dataclasses.replace(cfg, **changes)


def _both(path, walks, seed=1, **changes):
    spec, cfg = _config(path, seed, **changes)
    local = simulate_cli.simulate(spec, cfg, Limits(walks=walks))
    spark = simulate_cli.simulate(spec, cfg, Limits(walks=walks), engine="spark", master=LOCAL_MASTER,
                                  driver_walks=False)
    return local, spark


def _same(local, spark):
    a, b = local.result, spark.result
    for f in ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
              "per_action_distinct", "depth", "sometimes", "violated"):
        assert getattr(a, f) == getattr(b, f), f
    ta, tb = local.totals, spark.totals
    assert (ta.walks, ta.steps, dict(ta.lengths), ta.witnesses) == (tb.walks, tb.steps, dict(tb.lengths), tb.witnesses)
    assert {k: v for k, v in (ta.violation or {}).items() if k != "at"} == \
        {k: v for k, v in (tb.violation or {}).items() if k != "at"}
    assert [v.trace for v in a.violations] == [v.trace for v in b.violations]
    assert tb.where.get("spark", 0) > 0 and "local" not in tb.where


def test_same_seed_same_walks_on_either_engine(spark):
    """The first violation is on walk 109 (batch 1): the executors run the
    batches of a wave at once, the driver drops those after the violating
    one; the figures, the violating walk and its shrunk trace are the
    local engine's."""
    local, swarm = _both(LOSS, walks=5000)
    assert local.totals.violation["walk"] == 109 and local.result.violations[0].depth == 22
    _same(local, swarm)


def test_swarm_weights_per_batch_on_either_engine(spark):
    local, swarm = _both(SAFE, walks=700, seed=4, depth=40)
    assert local.result.outcome == "pass" and local.totals.walks == 700
    _same(local, swarm)


def test_kmc_simulate_engine_spark(spark, tmp_path):
    from click.testing import CliRunner
    from checker.front.cli import cli
    r = CliRunner().invoke(cli, ["simulate", str(DIEHARD), "--engine", "spark", "--master", LOCAL_MASTER,
                                 "--walks", "300", "--seed", "3", "--out", str(tmp_path), "--json", "-q"])
    assert r.exit_code == 1, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["config"]["engine"] == "spark" and s["violated"] == ["NotSolved"] and s["depth"] == 6
    assert s["seed"] == 3 and s["walks"] == 11
    run_dir = Path(s["results_dir"])
    assert (run_dir / "summary.json").is_file() and (run_dir / "trace-NotSolved.itf.json").is_file()
    local = CliRunner().invoke(cli, ["simulate", str(DIEHARD), "--walks", "300", "--seed", "3",
                                     "--out", str(tmp_path), "--json", "-q"])
    ls = json.loads(local.stdout.strip().splitlines()[-1])
    for k in ("walks", "steps", "distinct", "generated", "per_level_distinct", "per_action_distinct"):
        assert s[k] == ls[k], k


# ---- start-up and bad masters (subprocesses: each starts its own JVM) ----

def _simulate_cli(args, timeout):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "checker.front.cli", "simulate", "--engine", "spark", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


def _one_error_line(proc) -> str:
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "at org.apache" not in proc.stderr
    return errors[0]


def test_refused_master_one_line_no_run_folder(tmp_path):
    proc = _simulate_cli([DIEHARD, "--master", "spark://127.0.0.1:1", "--out", tmp_path, "-q"], timeout=90)
    assert proc.returncode == 2
    assert "cannot reach Spark master spark://127.0.0.1:1" in _one_error_line(proc)
    assert not (tmp_path / "toy-diehard").exists() or not any((tmp_path / "toy-diehard").iterdir())


@pytest.fixture
def not_a_master():
    """A plain TCP listener on 127.0.0.1 that accepts and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    conns = []

    def accept():
        try:
            while True:
                conns.append(sock.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    yield f"spark://127.0.0.1:{sock.getsockname()[1]}"
    for c in conns:
        c.close()
    sock.close()


def test_not_a_master_keeps_the_drivers_result(tmp_path, not_a_master):
    """The driver finds and shrinks diehard's violation while Spark starts;
    the master never takes the application: exit 2, one line, and the
    result is written and shown first."""
    proc = _simulate_cli([DIEHARD, "--master", not_a_master, "--walks", "300", "--seed", "3",
                          "--out", tmp_path, "-q"], timeout=150)
    assert proc.returncode == 2
    line = _one_error_line(proc)
    assert "took no Spark application" in line
    assert "Invariant NotSolved is violated after 6 steps." in proc.stdout
    runs = list((tmp_path / "toy-diehard").iterdir())
    assert len(runs) == 1 and (runs[0] / "summary.json").is_file() and (runs[0] / "trace-NotSolved.txt").is_file()


def test_not_a_master_while_the_driver_walks(tmp_path, not_a_master):
    """A run the driver cannot finish alone: exit 2, one line, no run folder."""
    proc = _simulate_cli([SAFE, "--master", not_a_master, "--time", "600", "--out", tmp_path, "-q"], timeout=150)
    assert proc.returncode == 2
    assert "took no Spark application" in _one_error_line(proc)
    folder = tmp_path / SAFE.stem
    assert not folder.exists() or not any(folder.iterdir())


def test_same_lasso_on_spark_as_on_one_core_and_every_core(spark):
    """Temporal properties: the first lasso (walk, loop, instance) and the
    figures are the same on the swarm, on one core and on every core; the
    lasso is fair and violating through the model alone."""
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "liveness"))
    from lasso_check import check_lasso
    from checker.front.temporal_spec import temporal_of
    path = ROOT / "specs" / "quorum" / "liveness-epoch-limit-stuck-prospective.toml"
    spec, cfg = _config(path, seed=5)
    local, swarm = _both(path, walks=400, seed=5)
    auto = simulate_cli.simulate(spec, cfg, Limits(walks=400), engine="auto")
    _same(local, swarm)
    assert local.totals.violation["kind"] == "lasso"
    for other in (swarm, auto):
        assert {k: x for k, x in other.totals.violation.items() if k != "at"} == \
            {k: x for k, x in local.totals.violation.items() if k != "at"}
        assert [(v.trace, v.loop) for v in other.result.violations] == \
            [(v.trace, v.loop) for v in local.result.violations]
    (v,) = swarm.result.violations
    model, _ = spec.build()
    check_lasso(model, v, temporal_of(model)[v.property], list(cfg.fairness))
