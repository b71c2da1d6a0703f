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
    # a stale .part (a JVM killed while writing) goes, a recent one stays
    old, recent = folder / "driver-x.1.part", folder / "driver-x.2.part"
    old.write_bytes(b"x")
    recent.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    session.driver_cds()
    assert not old.exists() and recent.exists()
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
