"""The driver JVM's class-data-sharing archive (checker.search.spark.session.driver_cds):
made once as a run's JVM exits, kept only when a JVM starts with it, named
with its size, and never able to stop a run (a JVM that dies of one is
launched again without it)."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker.search.spark import session

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    d = tmp_path / "cds"
    monkeypatch.setenv(session.CDS_ENV, str(d))
    return d


def _dynamic_archive(path: Path) -> Path:
    """A real (small) dynamic archive: the classes of `java -version`."""
    subprocess.run([session.find_java(), f"-XX:ArchiveClassesAtExit={path}", "-version"],
                   capture_output=True, check=True, timeout=120)
    assert path.stat().st_size > 0
    return path


class _Exited:
    """A JVM process that has exited with `code`."""
    stdin = None

    def __init__(self, code: int):
        self.returncode = code

    def poll(self):
        return self.returncode


def test_off_none_then_pending_then_the_archive(folder, monkeypatch):
    monkeypatch.setenv(session.CDS_ENV, "off")
    assert session.driver_cds() is None
    monkeypatch.setenv(session.CDS_ENV, str(folder))
    cds = session.driver_cds()
    assert cds.pending.parent == folder and cds.pending.suffix == ".part"
    assert cds.option == f"-XX:ArchiveClassesAtExit={cds.pending}"
    # a .part whose writer is gone (a kmc killed while its JVM wrote it) goes
    # at once, one a live process writes stays unless it is hours old
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone, live, old = (folder / f"driver-x.{dead.pid}.part", folder / f"driver-x.{os.getpid()}.part",
                       folder / f"driver-y.{os.getpid()}.part")
    for part in (gone, live, old):
        part.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    session.driver_cds()
    assert not gone.exists() and live.exists() and not old.exists()
    live.unlink()
    # an archive whose size is its name's: used
    made = cds.archive.with_name(f"{cds.archive.stem}-5.jsa")
    made.write_bytes(b"12345")
    again = session.driver_cds()
    assert again.pending is None and again.option == f"-XX:SharedArchiveFile={made}"
    # cut short: removed, and a new one is made
    made.write_bytes(b"123")
    third = session.driver_cds()
    assert not made.exists() and third.pending is not None


def test_keep_only_an_archive_a_jvm_starts_with(folder):
    cds = session.driver_cds()
    # the JVM failed: nothing kept
    _dynamic_archive(cds.pending)
    cds.keep(_Exited(1))
    assert list(folder.iterdir()) == []
    # not an archive: dropped
    cds.pending.write_bytes(os.urandom(4096))
    cds.keep(_Exited(0))
    assert list(folder.iterdir()) == []
    # cut short (a JVM mapping it dies): dropped, and its crash report too
    full = _dynamic_archive(folder / "full.tmp").read_bytes()
    (folder / "full.tmp").unlink()
    cds.pending.write_bytes(full[:len(full) // 2])
    cds.keep(_Exited(0))
    assert list(folder.iterdir()) == []
    # whole: kept under its size
    cds.pending.write_bytes(full)
    cds.keep(_Exited(0))
    assert [p.name for p in folder.iterdir()] == [f"{cds.archive.stem}-{len(full)}.jsa"]
    assert session.driver_cds().pending is None


def _kmc(folder: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, session.CDS_ENV: str(folder)}
    return subprocess.run([sys.executable, "-m", "checker.front.cli", "check",
                           str(ROOT / "specs" / "kraft-kip966-quick.toml"),
                           "--engine", "spark", "--master", "local[2]", "--depth", "3", "--out", str(out)],
                          capture_output=True, text=True, cwd=out, env=env, timeout=600)


def test_java_options_with_spaces_stay_whole():
    assert session.java_option("-XX:+UseSerialGC") == "-XX:+UseSerialGC"
    assert session.java_option("-Dx=file:/a b/c") == '"-Dx=file:/a b/c"'
    assert session.java_option('-Dx=a"b\\c') == '"-Dx=a\\"b\\\\c"'


@pytest.mark.slow
def test_a_run_makes_the_archive_and_survives_a_bad_one(tmp_path, monkeypatch):
    """A run without an archive leaves one behind (its JVM writes it as it
    exits; no traceback from Spark's side as it goes); a run given one cut
    short (its name made to match: the JVM dies mapping it) starts Spark
    again without it, removes it, and finishes; the JVM's crash report lands
    in the run folder, not the working one. The folders have spaces in
    their paths (JVM options that hold them stay whole)."""
    folder = tmp_path / "the cds"
    monkeypatch.setenv(session.CDS_ENV, str(folder))
    out = tmp_path / "the out"
    out.mkdir()
    r = _kmc(folder, out)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    # what it waits for is said: the JVM starting, the archive being written
    assert "kmc: spark: starting Spark's JVM (local[2]) in the background" in r.stderr
    assert f"kmc: spark: writing the class-data archive of Spark's JVM to {folder} " in r.stderr
    assert "kmc: spark: class-data archive written" in r.stderr
    made = list(folder.glob("driver-*.jsa"))
    assert len(made) == 1 and not list(folder.glob("*.part"))
    data = made[0].read_bytes()
    made[0].unlink()
    short = made[0].with_name(f"{made[0].stem.rsplit('-', 1)[0]}-{len(data) // 3}.jsa")
    short.write_bytes(data[:len(data) // 3])
    r = _kmc(folder, out)
    assert r.returncode == 0, r.stderr
    assert "Model checking completed" in r.stdout and "Traceback" not in r.stderr
    assert not short.exists()
    assert not list(out.glob("hs_err*"))
    assert list(out.rglob("hs_err_pid*.log"))


def test_the_folder_keeps_the_two_most_recently_used_archives(folder):
    """Each pyspark installation (a checkout's virtualenv) has its own
    archive (the JVM maps one only with the jars it was made from): the
    folder keeps the CDS_KEEP most recently used, whoever made them."""
    folder.mkdir()
    cds = session.driver_cds()
    mine = cds.archive.with_name(f"{cds.archive.stem}-5.jsa")
    others = [folder / f"driver-{k:016x}-5.jsa" for k in range(3)]
    for age, path in enumerate([mine, *others]):
        path.write_bytes(b"12345")
        os.utime(path, (time.time() - 1000 * (age + 1), time.time() - 1000 * (age + 1)))
    assert session.driver_cds().option == f"-XX:SharedArchiveFile={mine}"  # used: now the newest
    session._bound(folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted([mine.name, others[0].name])
    assert session.CDS_KEEP == 2


class _Writing:
    """A JVM still writing its archive as it exits; wait() is interrupted."""

    def __init__(self, part: Path):
        self.part, self.returncode, self.killed = part, None, False
        self.stdin = open(os.devnull, "wb")

    def poll(self):
        return self.returncode

    def wait(self, timeout=None):
        if not self.killed:
            self.part.write_bytes(b"half an archive")
            raise KeyboardInterrupt
        return self.returncode

    def kill(self):
        self.killed, self.returncode = True, -9


def test_writing_is_announced_and_a_ctrl_c_leaves_no_part(folder):
    cds = session.driver_cds()
    said = []
    cds.say = said.append
    proc = _Writing(cds.pending)
    with pytest.raises(KeyboardInterrupt):
        cds.keep(proc)
    assert proc.killed and not cds.pending.exists() and list(folder.iterdir()) == []
    assert said[0].startswith(f"writing the class-data archive of Spark's JVM to {folder} ")
    assert "KMC_SPARK_CDS=off" in said[0]


def test_an_archive_serves_only_the_jar_files_it_was_made_from(tmp_path):
    """Why each pyspark installation needs its own archive (docs/engines.md):
    the same jar at another path is refused ("shared class paths mismatch")."""
    import zipfile

    import pyspark
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"), key=lambda p: p.stat().st_size)
    jar, cls = next((j, n) for j in jars for n in zipfile.ZipFile(j).namelist()
                    if n.endswith(".class") and "$" not in n and "/" in n)
    here, there = tmp_path / "here", tmp_path / "there"
    for d in (here, there):
        d.mkdir()
        (d / jar.name).write_bytes(jar.read_bytes())
        os.utime(d / jar.name, (jar.stat().st_mtime, jar.stat().st_mtime))
    archive = tmp_path / "t.jsa"
    java = session.find_java()
    subprocess.run([java, f"-XX:ArchiveClassesAtExit={archive}", "-cp", str(here / jar.name),
                    cls[:-len(".class")].replace("/", ".")], capture_output=True, timeout=120)
    assert archive.stat().st_size > 0

    def start(d: Path) -> subprocess.CompletedProcess:
        return subprocess.run([java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", str(d / jar.name),
                               "-version"], capture_output=True, text=True, timeout=120)
    assert start(here).returncode == 0
    refused = start(there)
    assert refused.returncode != 0 and "shared class paths mismatch" in refused.stdout + refused.stderr
