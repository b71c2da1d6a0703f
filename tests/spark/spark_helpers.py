"""Helpers of the spark engine's tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from checker.search.engine import CheckOptions, CheckResult, check
from checker.search.registry import build, select_properties

ROOT = Path(__file__).resolve().parents[2]
LOCAL_MASTER = "local[2,3]"  # two cores, up to 3 attempts per task (for the retry tests)
# levels of at least this many states are shuffled between partitions (the
# engine's default is higher: the test specs' levels are small)
SMALL_LEVEL = 50

# kraft kip966, 2 brokers, one lossy shutdown: the complete state space (TLC:
# 14,304 distinct states, 39 levels; reference config kip966-b2d1)
KRAFT_QUICK = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1,
               "InitIsrSize": 2, "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 1,
               "FenceBrokerLimit": 0, "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0}
# kraft v3.5, 2 brokers, one fence, one unclean shutdown: TLC finds
# NoCommittedRecordLostGlobally violated after 4 steps (config v3_5-b2f1u1-lrs
# of tests/conformance/data/kraft-tlc-violations.json)
KRAFT_V35_LOSSY = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1,
                   "InitIsrSize": 2, "CleanShutdownLimit": 0, "UncleanShutdownLimit": 1,
                   "FenceBrokerLimit": 1, "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0,
                   "AvoidLastReplicaStanding": False}


def local_result(config: dict, options: CheckOptions) -> CheckResult:
    model, props = build(config["model"], config.get("variant"), config.get("constants") or {})
    return check(model, select_properties(props, config.get("invariants")), options)


def assert_same(local: CheckResult, spark: CheckResult) -> None:
    """Every figure and every counterexample identical (wall time, memory aside)."""
    for f in ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
              "per_action_distinct", "depth", "sometimes", "properties", "states_left", "exhausted",
              "max_depth", "check_deadlock", "fingerprint_bits", "projection", "violated"):
        assert getattr(spark, f) == getattr(local, f), f"{f}: spark {getattr(spark, f)!r} != local {getattr(local, f)!r}"
    assert spark.collision_probability == local.collision_probability
    for lv, sv in zip(local.violations, spark.violations):
        assert (sv.property, sv.depth) == (lv.property, lv.depth)
        # the same parents were chosen: the very same trace, action by action, state by state
        assert [str(a) for a, _ in sv.trace] == [str(a) for a, _ in lv.trace]
        assert [s for _, s in sv.trace] == [s for _, s in lv.trace]


def kmc_spark_command() -> list[str]:
    """`kmc check --engine spark` in a fresh interpreter."""
    return [sys.executable, "-m", "checker.front.cli", "check", "--engine", "spark"]


def run_cli(args: list[str], env: dict | None = None, timeout: float = 300, cwd: Path | None = None,
            unset: tuple = ()):
    full_env = {k: v for k, v in os.environ.items() if k not in unset}
    full_env.update(env or {})
    return subprocess.run(kmc_spark_command() + args, capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd or ROOT, stdin=subprocess.DEVNULL)
