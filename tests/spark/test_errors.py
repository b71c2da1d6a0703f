"""Bad input: an unreachable master, a host that does not resolve, no Java,
executors that cannot build the model -- one line, exit code 2, in bounded
time (subprocess timeouts), never a hang or a Java stack trace."""
from __future__ import annotations

import os
import sys

import pytest

from checker.engine import CheckOptions
from checker.spark import ExecutorSetupError, SparkUnavailableError, check_spark
from spark_helpers import LOCAL_MASTER, ROOT, run_cli

DIEHARD = str(ROOT / "specs" / "toy-diehard.toml")


def _one_error_line(proc) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("kmc: error:")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "at org.apache" not in proc.stderr
    assert "Exception in thread" not in proc.stderr
    return errors[0]


@pytest.mark.parametrize("master, wording", [
    ("spark://127.0.0.1:1", "cannot reach Spark master spark://127.0.0.1:1"),
    ("spark://no-such-host.invalid:7077", "cannot resolve Spark master host 'no-such-host.invalid'"),
    ("yarn", "unsupported Spark master 'yarn'"),
])
def test_unusable_master(tmp_path, master, wording):
    proc = run_cli([DIEHARD, "--master", master, "--out", str(tmp_path)], timeout=90)
    assert proc.returncode == 2
    assert wording in _one_error_line(proc)


def test_unreachable_master_in_process(spark, tmp_path):
    """The running session is left alone when the new master is unreachable."""
    with pytest.raises(SparkUnavailableError, match="cannot reach Spark master") as e:
        check_spark({"model": "diehard"}, CheckOptions(), master="spark://127.0.0.1:1",
                    run_dir=tmp_path / "run")
    assert e.value.exit_code == 2
    assert not spark.sparkContext._jsc.sc().isStopped()


@pytest.mark.parametrize("env, unset, wording", [
    ({"JAVA_HOME": "/nonexistent/java"}, (), "JAVA_HOME=/nonexistent/java has no executable bin/java"),
    ({"PATH": os.path.dirname(sys.executable)}, ("JAVA_HOME",), "no `java` on PATH"),
])
def test_missing_java(tmp_path, env, unset, wording):
    proc = run_cli([DIEHARD, "--out", str(tmp_path)], env=env, unset=unset, timeout=90)
    assert proc.returncode == 2
    assert wording in _one_error_line(proc)


def test_executors_that_cannot_build_the_model(spark, tmp_path):
    """A model registered in the driver process only: the executors do not
    know it (they import kmc from the shipped code)."""
    from model.base import Constant, ModelDef
    from model.examples import diehard
    from model.registry import MODELS, register
    register(ModelDef(name="driver-only-jugs", doc="only in this process",
                      variants={"standard": (Constant("BigCapacity", int, 5), Constant("SmallCapacity", int, 3),
                                             Constant("Goal", int, 4))},
                      build=diehard.build))
    try:
        with pytest.raises(ExecutorSetupError, match="cannot build model 'driver-only-jugs'.*unknown model") as e:
            check_spark({"model": "driver-only-jugs"}, CheckOptions(), master=LOCAL_MASTER,
                        run_dir=tmp_path / "run")
        assert e.value.exit_code == 2 and "\n" not in e.value.one_line()
    finally:
        MODELS.pop("driver-only-jugs", None)
