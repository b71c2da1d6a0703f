"""A throwaway Spark standalone cluster on 127.0.0.1: one master and two
workers (one core, 1 GiB each) started from the installed pyspark, each in
its own process group, on free ports; stopped (killed) whatever happens."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent


def _wait(predicate, timeout: float, what: str, procs) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: a cluster process exited with {p.returncode}")
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def _master_json(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def standalone_cluster(work: Path, workers: int = 2):
    home = spark_home()
    env = dict(os.environ)
    env.update({"SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_MEMORY": "256m",
                "SPARK_WORKER_DIR": str(work / "work"), "SPARK_LOG_DIR": str(work / "logs"),
                "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", "python3")})
    (work / "logs").mkdir(parents=True, exist_ok=True)
    port, ui = free_port(), free_port()
    procs: list[subprocess.Popen] = []

    def start(name: str, args: list[str]) -> None:
        log = open(work / "logs" / f"{name}.log", "wb")
        procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, cwd=work,
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
        log.close()

    try:
        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui)])
        _wait(lambda: _master_json(ui).get("status") == "ALIVE", 90, "master", procs)
        url = f"spark://127.0.0.1:{port}"
        for i in range(workers):
            start(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                 "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
                                 "--work-dir", str(work / f"work{i}")])
        _wait(lambda: _master_json(ui).get("aliveworkers") == workers, 90, "workers", procs)
        yield url
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # the daemon and the executors it started
        for p in procs:
            p.wait(timeout=30)


def executor_pids(app_id: str) -> list[int]:
    """The executor JVMs of an application (found through /proc)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in cmd and app_id.encode() in cmd:
            pids.append(int(d.name))
    return pids
