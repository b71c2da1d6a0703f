"""Getting a SparkSession the kmc way: clear errors instead of hangs and Java
stack traces, Spark's own noise in a log file, kmc's code shipped to the
executors.

- Java: found the way bin/spark-class finds it ($JAVA_HOME/bin/java, else
  `java` on PATH) and asked its version before Spark is launched.
- Master: spark://HOST:PORT is resolved and connected to (bounded) before
  Spark tries to register with it (Spark itself would retry for minutes).
- The JVM is launched with its stdout/stderr going to a log file and a
  log4j2 configuration at WARN; the console progress bar and the web UI are off.
- model/, invariants/ and checker/ are zipped (deterministically) and added
  with addPyFile, so a worker needs nothing beyond the same Python packages
  (msgpack, xxhash, pyspark).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from checker.search.spark.errors import SparkUnavailableError

DEFAULT_MASTER = "local[*,4]"  # every core, up to 4 attempts per task
CONNECT_TIMEOUT_S = 10.0
# A standalone master must take the application within this time. Spark's
# own client retries for 60 s (3 x 20 s) and then fails with a Java stack
# trace: a TCP listener that is not a Spark master must fail sooner, and
# in one line.
REGISTER_TIMEOUT_S = 15.0
EXECUTOR_TIMEOUT_S = 60.0
DRIVER_JIT_OPTS = os.environ.get("KMC_SPARK_DRIVER_JIT", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
# The driver JVM loads several thousand of Spark's classes at every start.
# From a class-data-sharing archive of them (made once per Java and pyspark
# installation, as a run's JVM exits: driver_cds; about 120 MB in
# ~/.cache/kmc/spark-cds) it starts in about half the time and CPU
# (bench/README.md). The JVM maps an archive only with the very jar files it
# was made from, so each pyspark installation (each virtualenv) needs its
# own: the folder keeps the CDS_KEEP most recently used ones.
# KMC_SPARK_CDS=off: never; a folder: keep the archives there.
CDS_ENV = "KMC_SPARK_CDS"
CDS_DUMP_TIMEOUT_S = 60.0
CDS_KEEP = 2
CDS_DYNAMIC_MAGIC = (0xF00BABA8).to_bytes(4, "little")  # a dynamic archive's header

LOG4J2 = """\
# kmc: Spark's own logging, kept out of the terminal (the JVM's output goes to spark.log)
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
"""


# ---- Java ------------------------------------------------------------------------

def find_java() -> str:
    """The java binary Spark will run, or SparkUnavailableError."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not (java.is_file() and os.access(java, os.X_OK)):
            raise SparkUnavailableError(
                f"the spark engine needs Java 17 or newer, but JAVA_HOME={home} has no "
                f"executable bin/java (fix JAVA_HOME or unset it to use java from PATH)")
        return str(java)
    java = shutil.which("java")
    if java is None:
        raise SparkUnavailableError("the spark engine needs Java 17 or newer, but there is no "
                                    "`java` on PATH and JAVA_HOME is not set")
    return java


def java_version(java: str) -> int:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SparkUnavailableError(f"cannot run {java} -version: {e}") from None
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if out.returncode != 0 or not m:
        first = (text.strip().splitlines() or ["no output"])[0]
        raise SparkUnavailableError(f"{java} does not work: {first}")
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def check_java() -> str:
    java = find_java()
    v = java_version(java)
    if v < 17:
        raise SparkUnavailableError(f"the spark engine needs Java 17 or newer; {java} is Java {v}")
    return java


# ---- master ----------------------------------------------------------------------

def _in_thread(fn, timeout: float | None):
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box.get("value")


def check_master(master: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A standalone master must resolve and accept a TCP connection."""
    if master.startswith("local"):
        m = re.fullmatch(r"local(\[(\*|\d+)(,\s*\d+)?\])?", master)
        if not m:
            raise SparkUnavailableError(f"bad Spark master {master!r} (use local, local[N], "
                                        f"local[*], local[N,F] or spark://HOST:PORT)")
        if m.group(2) and m.group(2).isdigit() and int(m.group(2)) == 0:
            raise SparkUnavailableError(f"bad Spark master {master!r}: local[N] needs N >= 1 cores")
        return
    if not master.startswith("spark://"):
        raise SparkUnavailableError(f"unsupported Spark master {master!r}: use local[*] "
                                    f"(embedded) or spark://HOST:PORT (standalone cluster)")
    for hostport in master[len("spark://"):].split(","):
        host, sep, port = hostport.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise SparkUnavailableError(f"bad Spark master {master!r}: expected spark://HOST:PORT")
        try:
            infos = _in_thread(lambda: socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM),
                               timeout)
        except TimeoutError:
            raise SparkUnavailableError(f"cannot resolve Spark master host {host!r} "
                                        f"(no answer within {timeout:.0f} s)") from None
        except socket.gaierror as e:
            raise SparkUnavailableError(f"cannot resolve Spark master host {host!r}: {e.strerror}") from None
        error = None
        for family, stype, proto, _, addr in infos:
            try:
                with socket.socket(family, stype, proto) as s:
                    s.settimeout(timeout)
                    s.connect(addr)
                return
            except OSError as e:
                error = e
        reason = error.strerror if error is not None and error.strerror else str(error)
        raise SparkUnavailableError(f"cannot reach Spark master {master}: {reason}")


# ---- the session -------------------------------------------------------------------

class _Launched:
    session = None          # the SparkSession kmc created (or adopted)
    master: str | None = None
    log_path: Path | None = None
    zips: set = set()
    say = staticmethod(lambda line: None)  # kmc's progress notices (set_notices)


def set_notices(say) -> None:
    """Where the class-data archive being written as the JVM exits is
    announced (say(text), one line each; None: nowhere, as with --quiet)."""
    _Launched.say = staticmethod(say or (lambda line: None))


def java_option(opt: str) -> str:
    """One JVM option as Spark reads extraJavaOptions (split at whitespace,
    quotes and backslashes as in a shell): quoted when it holds a path with
    a space, say, so that it stays one option."""
    if not re.search(r"[\s\"'\\]", opt):
        return opt
    return '"' + opt.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _default_conf(master: str, log_dir: Path, cds_opt: str | None = None) -> dict:
    log4j = log_dir / "log4j2.properties"
    if not log4j.exists():
        log4j.write_text(LOG4J2)
    java_opts = f"{java_option(f'-Dlog4j2.configurationFile=file:{log4j}')} " \
                f"{java_option(f'-Dlog4j.configurationFile=file:{log4j}')}"
    # the driver JVM mostly starts up, schedules tasks and moves shuffle bytes
    # (the work is in the Python workers): with the C1 compiler only and one
    # GC thread it starts several seconds sooner and burns less CPU beside
    # the workers on a small machine (bench/README.md)
    driver_opts = f"{java_opts} {DRIVER_JIT_OPTS} {java_option(cds_opt) if cds_opt else ''}".strip()
    # a crash report goes beside spark.log, not into the working folder
    driver_opts += " " + java_option(f"-XX:ErrorFile={log_dir}/hs_err_pid%p.log")
    conf = {
        "spark.app.name": "kmc",
        "spark.master": master,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        "spark.driver.extraJavaOptions": driver_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.driver.memory": os.environ.get("KMC_SPARK_DRIVER_MEMORY", "2g"),
        "spark.executor.memory": os.environ.get("KMC_SPARK_EXECUTOR_MEMORY", "1g"),
    }
    if master.startswith("local"):
        conf["spark.driver.host"] = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
        conf["spark.driver.bindAddress"] = conf["spark.driver.host"]
    return conf


def local_cores(master: str | None) -> int | None:
    """The partitions kmc makes on a local master (one per core, at least
    two: SparkSearch._launch), known before Spark starts; None on a cluster."""
    master = master or DEFAULT_MASTER
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master)
    if m is None:
        return None
    if m.group(1) in (None, "*"):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(2, cores or 1) if m.group(1) else 2
    return max(2, int(m.group(1)))


def is_running(master: str | None) -> bool:
    """Would get_session(master) adopt a live session (no JVM to launch)?"""
    current = active_session()
    if current is None:
        return False
    try:
        return not current.sparkContext._jsc.sc().isStopped() and master in (None, current.sparkContext.master)
    except Exception:  # noqa: BLE001 - a dead JVM
        return False


class Starter:
    """fn() in a daemon thread (starting Spark while the driver works):
    done() without blocking; join() re-raises its error; `finished` is the
    perf_counter time it ended."""

    def __init__(self, fn):
        self._error: BaseException | None = None
        self.finished: float | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="kmc-spark-start")
        self._thread.start()

    def _run(self, fn) -> None:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - re-raised by join()
            self._error = e
        finally:
            self.finished = time.perf_counter()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def active_session():
    from pyspark.sql import SparkSession
    return SparkSession.getActiveSession() or _Launched.session


def get_session(master: str | None = None, log_dir: Path | None = None, conf: dict | None = None):
    """The SparkSession to run on: the active one when `master` is None or the
    same, else a new one (the JVM is launched once per process, its output
    going to log_dir/spark.log)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    if master is not None:
        check_master(master)  # before anything is stopped or launched
    _quiet_py4j()
    current = active_session()
    if current is not None:
        try:
            current_master = current.sparkContext.master
            alive = not current.sparkContext._jsc.sc().isStopped()
        except Exception:  # noqa: BLE001 - a dead JVM: start again
            alive, current_master = False, None
        if alive and (master is None or master == current_master):
            return current
        if alive:
            current.stop()
        _Launched.session = None
    master = master or DEFAULT_MASTER
    check_master(master)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no other interface is needed
    log_dir = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="kmc-spark-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    def spark_conf(cds: DriverCds | None):
        settings = _default_conf(master, log_dir, cds.option if cds else None)
        settings.update(conf or {})
        sconf = SparkConf(loadDefaults=False)
        for k, v in settings.items():
            sconf.set(k, v)
        return sconf

    cds = driver_cds() if SparkContext._gateway is None else None
    sconf = spark_conf(cds)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    if SparkContext._gateway is None:
        check_java()
        from pyspark.java_gateway import launch_gateway
        # the launcher JVM that builds spark-submit's command line: a short life
        os.environ.setdefault("SPARK_LAUNCHER_OPTS", "-XX:TieredStopAtLevel=1 -Xshare:auto")
        log_path = log_dir / "spark.log"
        log = open(log_path, "ab")
        try:
            try:
                gateway = launch_gateway(sconf, popen_kwargs={"stdout": log, "stderr": log})
            except Exception:  # noqa: BLE001 - once more without the archive (a JVM dies of a bad one)
                if cds is None or cds.pending is not None:
                    raise
                cds.archive.unlink(missing_ok=True)
                cds, sconf = None, spark_conf(None)
                gateway = launch_gateway(sconf, popen_kwargs={"stdout": log, "stderr": log})
        except Exception as e:  # noqa: BLE001 - PySparkRuntimeError and friends
            raise SparkUnavailableError(f"cannot start Spark's JVM ({type(e).__name__}: "
                                        f"{' '.join(str(e).split())[:300]}); see {log_path}") from None
        finally:
            log.close()  # the JVM holds its own descriptor
        _Launched.log_path = log_path
        if cds is not None and cds.pending is not None:
            cds.say = _Launched.say
            atexit.register(cds.keep, gateway.proc)
        sc = _new_context(master, log_path, lambda: SparkContext(gateway=gateway, conf=sconf))
    else:
        sc = _new_context(master, _Launched.log_path, lambda: SparkContext(conf=sconf))
    sc.setLogLevel("WARN")
    session = SparkSession(sc)
    _Launched.session = session
    _Launched.master = master
    _Launched.zips = set()
    return session


class DriverCds:
    """The driver JVM's class-data-sharing option: use the archive of this Java
    and pyspark (`archive`), or (none yet) have the JVM write one as it exits,
    into `pending`, which keep() turns into the archive."""

    def __init__(self, option: str, archive: Path, pending: Path | None = None, java: str = "java"):
        self.option, self.archive, self.pending, self.java = option, archive, pending, java
        self.say = lambda line: None

    def keep(self, proc) -> None:
        """At exit: stop Spark, end the JVM as Python's exit would (its stdin
        closed), wait for it to write the archive, and keep it if a JVM
        starts with it (one cut short crashes the JVM that maps it), named
        with its size (a later run checks it) and renamed into place
        atomically. A JVM killed meanwhile leaves a .part, which a later run
        removes; one interrupted here (Ctrl-C) is ended and its .part removed."""
        pending = self.pending
        try:
            if proc.poll() is None:
                self.say(f"writing the class-data archive of Spark's JVM to {self.archive.parent} "
                         f"(once per Java and pyspark installation, up to {CDS_DUMP_TIMEOUT_S:.0f} s; "
                         f"{CDS_ENV}=off skips it) ...")
                try:  # first Spark, whose accumulator server would see the JVM go (a traceback)
                    stop_session()
                except Exception:  # noqa: BLE001 - a JVM already going
                    pass
                proc.stdin.close()
                proc.wait(timeout=CDS_DUMP_TIMEOUT_S)
            ok = (proc.returncode == 0 and pending.is_file() and not _archives(self.archive)
                  and _magic(pending) == CDS_DYNAMIC_MAGIC
                  and subprocess.run([self.java, f"-XX:SharedArchiveFile={pending}",
                                      f"-XX:ErrorFile={pending}.crash.log", "-version"],
                                     capture_output=True, timeout=60).returncode == 0)
            if ok:
                os.replace(pending, self.archive.with_name(f"{self.archive.stem}-{pending.stat().st_size}.jsa"))
                _bound(self.archive.parent)
            self.say("class-data archive " + ("written" if ok else "not kept (a later run makes one again)"))
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass  # only a speed-up: a later run makes one again
        except KeyboardInterrupt:
            if proc.poll() is None:  # the JVM would go on writing the .part
                proc.kill()
                proc.wait()
            raise
        finally:
            for leftover in (pending, Path(f"{pending}.crash.log")):
                try:
                    leftover.unlink(missing_ok=True)
                except OSError:
                    pass


def _magic(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4)


def _archives(archive: Path) -> list[Path]:
    return sorted(archive.parent.glob(f"{archive.stem}-*.jsa"))


def _bound(folder: Path, keep: int = CDS_KEEP) -> None:
    """Only the `keep` most recently used archives stay (a run touches the
    one it maps): other installations' older ones go."""
    made = sorted(folder.glob("driver-*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in made[keep:]:
        old.unlink(missing_ok=True)


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # (not ours to touch: it may go before a newer one)
        pass


def _writer_alive(part: Path) -> bool:
    """Is the JVM of the kmc process that named this .part (driver-KEY.PID.part)
    still there to write it? A .part more than an hour old never is."""
    try:
        pid = int(part.name.rsplit(".", 2)[-2])
        if time.time() - part.stat().st_mtime > 3600:
            return False
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def cds_folder() -> Path | None:
    """Where the driver's class-data archive is kept: $KMC_SPARK_CDS, else the
    user's cache folder; None when KMC_SPARK_CDS is off."""
    where = os.environ.get(CDS_ENV, "")
    if where.lower() in ("off", "0", "no", "false"):
        return None
    if where:
        return Path(where)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kmc" / "spark-cds"


def driver_cds() -> DriverCds | None:
    """The CDS option for the driver JVM about to be launched (None: off, or
    no folder to keep the archive in). The archive is named by the java
    binary (path, size, time) and pyspark (path, version: the JVM maps an
    archive only with the jar files it was made with) and its size (one of
    another size was cut short: removed). .part files whose writer is gone
    are removed first."""
    try:
        folder = cds_folder()
        if folder is None:
            return None
        import pyspark
        java = Path(find_java()).resolve()
        st = java.stat()
        key = hashlib.sha256(f"{java}|{st.st_size}|{st.st_mtime_ns}|{Path(pyspark.__file__).parent}|"
                             f"{pyspark.__version__}".encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        archive = folder / f"driver-{key}.jsa"
        for old in folder.glob("*.part"):  # a kmc (or its JVM) killed while writing one
            if not _writer_alive(old):
                old.unlink(missing_ok=True)
                Path(f"{old}.crash.log").unlink(missing_ok=True)
        for made in _archives(archive):
            if made.stat().st_size == int(made.stem.rsplit("-", 1)[1]):
                _touch(made)  # used: kept by _bound before older ones
                return DriverCds(f"-XX:SharedArchiveFile={made}", made, java=str(java))
            made.unlink(missing_ok=True)
        pending = folder / f"driver-{key}.{os.getpid()}.part"
        return DriverCds(f"-XX:ArchiveClassesAtExit={pending}", archive, pending, str(java))
    except (OSError, ValueError, SparkUnavailableError, ImportError):
        return None


def _quiet_py4j() -> None:
    """A Ctrl-C during a py4j call is logged by py4j as an ERROR with a
    traceback, on the root logger (which logging then sets up to print on
    stderr); kmc says "interrupted" in one line instead. kmc itself does
    not log: the root logger gets a handler that drops what reaches it."""
    import logging
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    for name in ("py4j", "py4j.java_gateway", "py4j.clientserver"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _new_context(master: str, log: Path | None, make):
    """make() -> SparkContext, within REGISTER_TIMEOUT_S on a standalone
    master (whose registration the constructor waits for); any failure is
    one line."""
    see = f" (Spark's log: {log})" if log else ""
    timeout = REGISTER_TIMEOUT_S if master.startswith("spark://") else None
    try:
        return _in_thread(make, timeout)
    except TimeoutError:
        raise SparkUnavailableError(
            f"{master} accepted a connection but took no Spark application within "
            f"{REGISTER_TIMEOUT_S:.0f} s: is it a Spark standalone master (usually port 7077)?{see}") from None
    except Exception as e:  # noqa: BLE001 - Py4JJavaError and friends: their first line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise SparkUnavailableError(f"cannot start a SparkContext on {master}: "
                                    f"{' '.join(first.split())[:300]}{see}") from None


def log_path() -> Path | None:
    return _Launched.log_path


def stop_session() -> None:
    s = active_session()
    if s is not None:
        s.stop()
    _Launched.session = None


# ---- shipping kmc's code -------------------------------------------------------------

def code_zip(dest_dir: Path) -> Path:
    """A deterministic zip of the model, invariants and checker packages, and
    of the compiled hot path the driver runs (checker/search/native.py)."""
    import checker
    import invariants
    import model
    files = []
    for pkg in (model, invariants, checker):
        root = Path(pkg.__file__).resolve().parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".json", ".toml"):
                files.append((path, f"{pkg.__name__}/{path.relative_to(root).as_posix()}"))
    from checker.search import native
    if native.ENABLED:  # the driver's build, for executors of the same platform (native._from_zip)
        so = Path(native._native.__file__)
        files.append((so, f"checker/search/{so.name}"))
    digest = hashlib.sha256()
    for path, name in files:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / f"kmc-code-{digest.hexdigest()[:16]}.zip"
    if not out.exists():
        tmp = out.with_suffix(".zip.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for path, name in files:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                z.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
        os.replace(tmp, out)
    return out


def ship_code(session, dest_dir: Path | None = None) -> Path:
    """Zip and add kmc's packages once per SparkContext. The zip lives in a
    stable cache folder: executors started later (a lost one replaced) fetch
    it from the driver again."""
    path = code_zip(dest_dir or Path(tempfile.gettempdir()) / "kmc-spark-code")
    if path.name not in _Launched.zips:
        session.sparkContext.addPyFile(str(path))
        _Launched.zips.add(path.name)
    return path
