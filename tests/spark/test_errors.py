"""Bad input: an unreachable master, a host that does not resolve, no Java,
executors that cannot build the model -- one line, exit code 2, in bounded
time (subprocess timeouts), never a hang or a Java stack trace."""
from __future__ import annotations

import os
import sys

import pytest

from checker.search.engine import CheckOptions
from checker.search.spark import ExecutorSetupError, SparkUnavailableError, check_spark
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

    def build(variant, constants):
        jugs = diehard.build(variant, constants)
        jugs.name = "driver-only-jugs"   # (the model contract: the built model's name is its ModelDef's)
        return jugs

    register(ModelDef(name="driver-only-jugs", doc="only in this process",
                      variants={"standard": (Constant("BigCapacity", int, 5), Constant("SmallCapacity", int, 3),
                                             Constant("Goal", int, 4))},
                      build=build, properties="invariants.examples:diehard_properties"))
    try:
        with pytest.raises(ExecutorSetupError, match="cannot build model 'driver-only-jugs'.*unknown model") as e:
            check_spark({"model": "driver-only-jugs"}, CheckOptions(), master=LOCAL_MASTER,
                        run_dir=tmp_path / "run")
        assert e.value.exit_code == 2 and "\n" not in e.value.one_line()
    finally:
        MODELS.pop("driver-only-jugs", None)


class _Listener:
    """A plain TCP listener on 127.0.0.1 that accepts and never answers: it
    stands in for a master URL that is not a Spark master."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        try:
            while True:
                self.conns.append(self.sock.accept()[0])
        except OSError:
            pass

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture
def not_a_master():
    listener = _Listener()
    yield f"spark://127.0.0.1:{listener.port}"
    listener.close()


def test_a_tcp_listener_that_is_not_a_master_keeps_the_drivers_result(tmp_path, not_a_master):
    """The driver finishes diehard (a violation at 6 steps) while Spark
    starts; the master never takes the application: exit 2, one line, and
    the result is written and shown all the same (its trace too)."""
    proc = run_cli([DIEHARD, "--master", not_a_master, "--out", str(tmp_path)], timeout=120)
    assert proc.returncode == 2
    line = _one_error_line(proc)
    assert "took no Spark application" in line and "is it a Spark standalone master" in line
    assert "Invariant NotSolved is violated after 6 steps." in proc.stdout
    runs = list((tmp_path / "toy-diehard").iterdir())
    assert len(runs) == 1 and (runs[0] / "summary.json").is_file()
    assert (runs[0] / "trace-NotSolved.txt").is_file()


def test_a_failed_start_leaves_no_orphan_run_folder(tmp_path):
    """Nothing done (the master is refused at once): no run folder is left."""
    proc = run_cli([DIEHARD, "--master", "spark://127.0.0.1:1", "--out", str(tmp_path)], timeout=90)
    assert proc.returncode == 2
    _one_error_line(proc)
    left = list((tmp_path / "toy-diehard").iterdir()) if (tmp_path / "toy-diehard").exists() else []
    assert left == []


def test_levels_the_driver_finished_stay_resumable(tmp_path, not_a_master):
    """A search the driver could not finish alone: its finished levels are
    kept, and the one line says how to go on."""
    spec = str(ROOT / "specs" / "kraft-kip966-reference.toml")
    proc = run_cli([spec, "--master", not_a_master, "--out", str(tmp_path), "--depth", "11"], timeout=180)
    assert proc.returncode == 2
    line = _one_error_line(proc)
    assert "took no Spark application" in line and "levels the driver finished are kept" in line
    run = next((tmp_path / "kraft-kip966-reference").iterdir())
    assert f"--resume {run}" in line
    assert (run / "levels" / "level-00001" / "stats.json").is_file()


def test_ctrl_c_under_spark_is_one_line(tmp_path, process_group):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it)
    while the executors run a level: "kmc: interrupted", exit 130, no py4j
    traceback; the finished levels stay."""
    import signal
    import subprocess
    import time
    from spark_helpers import kmc_spark_command
    spec = str(ROOT / "specs" / "kraft-kip966-reference.toml")
    proc = process_group(kmc_spark_command() + [spec, "--master", LOCAL_MASTER, "--out", str(tmp_path)],
                         cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "level 9:" in line:
            break
    time.sleep(2)  # level 10 is on the executors now
    os.killpg(proc.pid, signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    err = "".join(lines) + rest
    assert proc.returncode == 130, err
    assert "kmc: interrupted" in err
    assert "Traceback" not in err and "ERROR:root" not in err and "py4j" not in err
    run = next((tmp_path / "kraft-kip966-reference").iterdir())
    assert (run / "levels" / "level-00009" / "stats.json").is_file()
