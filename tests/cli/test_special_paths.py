"""Special paths: an output that is a symlink, a FIFO or a character device
is written through (never replaced by a regular file); a spec file named
`...toml` / `..toml` keeps its results under --out; a spec path that is not
a regular file (/dev/zero) or is absurdly large is refused before any read;
a --set value that is more than one TOML value is refused. Bad input: one
`kmc: error:` line, exit 2."""
from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.spec import MAX_SPEC_BYTES, parse_set, read_toml
from checker.search.errors import SpecError
from checker.search.files import safe_component, write_atomic

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_one_error_line(result, words: str = "") -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("kmc: error: "), result.stderr
    assert "Traceback" not in result.output and words in result.stderr, result.stderr


# ---- write_atomic -------------------------------------------------------------

def test_write_atomic_regular_file_still_replaced_atomically(tmp_path):
    target = tmp_path / "a.txt"
    write_atomic(target, "one\n")
    write_atomic(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]  # no temp file left


def test_write_atomic_follows_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "t.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real"]


def test_write_atomic_through_a_dangling_symlink_creates_its_target(tmp_path):
    target = tmp_path / "t.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"


def test_write_atomic_writes_into_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomic(fifo, "through the pipe\n")
    reader.join(10)
    assert got == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO
    assert [p.name for p in tmp_path.iterdir()] == ["fifo"]


def test_write_atomic_writes_into_a_char_device(tmp_path):
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        pytest.skip(f"mknod not permitted: {e}")
    try:
        write_atomic(dev, "discarded\n")
    except PermissionError as e:  # a filesystem mounted nodev
        pytest.skip(f"device not usable here: {e}")
    st = os.lstat(dev)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_write_atomic_into_a_folder_is_an_error(tmp_path):
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")


def test_graph_out_through_a_symlink_and_a_fifo(tmp_path):
    target = tmp_path / "g.dot"
    link = tmp_path / "link.dot"
    link.symlink_to(target)
    r = kmc("graph", DIEHARD, "--out", link)
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and target.read_text().startswith("digraph")
    fifo = tmp_path / "fifo.dot"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    r = kmc("graph", DIEHARD, "--out", fifo)
    reader.join(10)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and got and got[0].startswith("digraph")


# ---- a spec named ...toml / ..toml ---------------------------------------------

@pytest.mark.parametrize("name, expected", [("..", "__"), (".", "_"), ("", "_"), ("a/b", "a_b"),
                                            ("toy-diehard", "toy-diehard")])
def test_safe_component(name, expected):
    assert safe_component(name) == expected


@pytest.mark.parametrize("file_name", ["...toml", "..toml"])
def test_results_of_a_dot_named_spec_stay_under_out(tmp_path, file_name):
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    spec = folder / file_name
    spec.write_text(DIEHARD.read_text())
    out = folder / "out"
    r = kmc("check", spec, "--out", out)
    assert r.exit_code in (0, 1), r.output
    summaries = list(tmp_path.rglob("summary.json"))
    assert summaries and all(out in s.parents for s in summaries), summaries
    assert sorted(p.name for p in folder.iterdir()) == sorted([file_name, "out"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


# ---- the spec loader: only a regular file, not too large -----------------------

def test_check_dev_zero_is_refused_before_any_read(tmp_path):
    # under a 2 GiB address-space limit: reading /dev/zero whole would fail (or take forever)
    r = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", "/dev/zero",
                        "--out", str(tmp_path / "out")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)))
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("kmc: error: "), r.stderr[-2000:]
    assert "not a regular file" in r.stderr


def test_read_toml_refuses_a_fifo_without_opening_it(tmp_path):
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)  # opening it would block: no writer

    def unblock():  # should it be opened after all: a writer after 3 s (the test fails, not hangs)
        time.sleep(3)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: nobody opened it (as it should be)
        except OSError:
            return
        os.write(fd, b'model = "diehard"\n')
        os.close(fd)
    threading.Thread(target=unblock, daemon=True).start()
    with pytest.raises(SpecError, match="not a regular file"):
        read_toml(fifo, "spec")


def test_a_huge_spec_file_is_refused(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_SPEC_BYTES + 1)  # sparse: no disk used
    assert_one_error_line(kmc("check", big, "--out", tmp_path / "out"), "too large")


def test_a_spec_folder_is_refused(tmp_path):
    d = tmp_path / "d.toml"
    d.mkdir()
    with pytest.raises(SpecError, match="folder"):
        read_toml(d, "spec")


# ---- --set: exactly one TOML value ---------------------------------------------

@pytest.mark.parametrize("item", ["Goal=3\nSmallCapacity=1", "Goal=3\n[x]", "Goal=3\r\nBig=2",
                                  'Goal="a"\nb = 1'])
def test_set_with_more_than_one_value_is_refused(item):
    with pytest.raises(SpecError):
        parse_set(item)


def test_set_with_a_newline_is_one_error_line(tmp_path):
    r = kmc("check", DIEHARD, "--set", "Goal=3\nSmallCapacity=1", "--json", "--out", tmp_path / "out")
    assert_one_error_line(r, "SmallCapacity")


@pytest.mark.parametrize("item, value", [("Goal=3", 3), ("X=[1,\n 2]", [1, 2]), ('S="a" # c', "a"),
                                         ("T=true", True)])
def test_set_single_values_still_parse(item, value):
    assert parse_set(item)[1] == value
