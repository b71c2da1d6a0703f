"""Traces that read the same across models: no "elects leader none" (kraft
says the partition is left without a leader), kraft's metadata updates are
arrows from the controller, zk's hw_truncation records (which carry no
leader epoch) are not said to be in "leader epoch -1", each view's key says
how it numbers brokers and offsets, and a spark run's report says where its
levels ran."""
from __future__ import annotations

from types import SimpleNamespace

from click.testing import CliRunner
from trace_helpers import ROOT, kmc_group, only_run_dir

from checker.output.console import _spark_levels
from checker.output.runs import open_run
from checker.output.views import view_for

ZK_HW = ROOT / "specs" / "zk-hw_truncation-data-loss.toml"


def test_kraft_says_no_leader_and_draws_metadata_updates(lrs_run):
    text = (lrs_run / "trace-LeaderCompletenessProperty.txt").read_text()
    assert "elects leader none" not in text
    assert ("UncleanShutdown(1) - broker 1 shuts down uncleanly and loses its log; the controller "
            "leaves the partition without a leader (leader 1 removed, leader epoch 2)") in text
    run = open_run(lrs_run)
    trace = run.trace("LeaderCompletenessProperty")
    view = view_for(run.model)
    updates = [(a.src, a.dst, a.sent, a.end, a.fate) for a in view.arrows(trace) if a.kind == "MetadataUpdate"]
    steps = [i for i, (action, _) in enumerate(trace) if action is not None
             and action.name == "ReceiveMetadataUpdate"]
    assert steps and updates == [(0, trace[i][0].params[0], i, i, "received") for i in steps]
    keys = dict(view.abbreviations)
    assert {"epoch N", "e N", "-"} <= set(keys) and "count from 1" in keys["Broker N, offsets"]


def test_zk_records_without_an_epoch_are_not_in_epoch_minus_one(tmp_path):
    r = CliRunner().invoke(kmc_group(), ["check", str(ZK_HW), "--out", str(tmp_path), "--quiet"])
    assert r.exit_code == 1, r.output
    text = next(only_run_dir(tmp_path).glob("trace-*.txt")).read_text()
    assert "epoch -1" not in text
    assert ("Produce(broker-0, A) - a producer writes A to leader broker-0 (offset 0; the message "
            "format records no leader epoch)") in text
    view = view_for(open_run(only_run_dir(tmp_path)).model)
    assert "count from 0" in dict(view.abbreviations)["broker-N, offsets"]


def test_a_spark_report_says_where_its_levels_ran():
    def result(engine):
        return SimpleNamespace(engine=engine)
    assert _spark_levels(result({"name": "spark", "driver_levels": 8, "executor_levels": 0})) == (
        "Spark's executors ran no level: the driver ran all 8 while Spark's JVM started (a state "
        "space this small ends first; docs/engines.md).")
    assert _spark_levels(result({"name": "spark", "driver_levels": 6, "executor_levels": 7})) == (
        "Levels: 6 in the driver while Spark's JVM started, 7 on Spark's executors.")
    assert _spark_levels(result({"name": "local"})) == ""
