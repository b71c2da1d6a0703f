"""`kmc regress` bad input: a non-UTF-8 --update-readme file, an unwritable
--junit folder (refused before any spec runs), run options given with
--markdown / --update-readme (which run nothing), a file where a spec's
results folder must go. Each: one `kmc: error:` line, exit 2, no traceback."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front import regress as regress_module
from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
DIEHARD = (SPECS / "toy-diehard.toml").read_text()
BLOCK = "<!-- BEGIN kmc regress --markdown -->\nold\n<!-- END kmc regress --markdown -->\n"


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_one_error_line(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("kmc: error: "), result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


@pytest.fixture
def specs(tmp_path) -> Path:
    d = tmp_path / "specs"
    d.mkdir()
    (d / "toy-diehard.toml").write_text(DIEHARD)
    return d


@pytest.fixture
def runs(monkeypatch) -> list:
    """The specs run_spec is called for (serial runs)."""
    called = []
    real = regress_module.run_spec

    def spy(*args):
        called.append(args[0])
        return real(*args)
    monkeypatch.setattr(regress_module, "run_spec", spy)
    return called


def test_update_readme_of_a_non_utf8_file(specs, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_bytes(BLOCK.encode() + b"caf\xe9\n")
    assert_one_error_line(kmc("regress", specs, "--update-readme", readme), str(readme), "UTF-8")
    assert readme.read_bytes().endswith(b"caf\xe9\n")  # untouched


def test_update_readme_still_works(specs, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n" + BLOCK)
    r = kmc("regress", specs, "--update-readme", readme)
    assert r.exit_code == 0, r.output
    assert "toy-diehard" in readme.read_text() and "\nold\n" not in readme.read_text()


def _unwritable_folder(tmp_path: Path) -> Path:
    """An existing folder no file can be created in (root ignores 0o555:
    /proc then, where nobody creates files)."""
    if os.geteuid() == 0:
        return Path("/proc")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    return d


def test_junit_into_an_unwritable_folder_fails_before_any_spec_runs(specs, tmp_path, runs):
    junit = _unwritable_folder(tmp_path) / "kmc-regress-j.xml"
    try:
        r = kmc("regress", specs, "--junit", junit)
    finally:
        if junit.parent != Path("/proc"):
            junit.parent.chmod(0o755)
    assert_one_error_line(r, str(junit))
    assert runs == [] and "toy-diehard" not in r.stdout


def test_junit_under_a_file_fails_before_any_spec_runs(specs, tmp_path, runs):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_error_line(kmc("regress", specs, "--junit", blocker / "j.xml"), "j.xml")
    assert runs == []


def test_junit_still_written(specs, tmp_path):
    junit = tmp_path / "new" / "j.xml"
    r = kmc("regress", specs, "--junit", junit)
    assert r.exit_code == 0, r.output
    assert "<testsuites" in junit.read_text()
    assert sorted(p.name for p in junit.parent.iterdir()) == ["j.xml"]  # no probe left


@pytest.mark.parametrize("mode", ["--markdown", "--update-readme"])
@pytest.mark.parametrize("option, flag", [(["-k", "x"], "-k"), (["--quick"], "--quick"),
                                          (["--junit", "JUNIT"], "--junit"), (["-j", "2"], "--jobs"),
                                          (["-j", "1"], "--jobs"), (["--timeout", "5"], "--timeout"),
                                          (["--out", "OUT"], "--out")])
def test_run_options_with_tables_are_refused(specs, tmp_path, mode, option, flag):
    readme = tmp_path / "README.md"
    readme.write_text(BLOCK)
    args = [str(tmp_path / "j.xml") if a == "JUNIT" else str(tmp_path / "out") if a == "OUT" else a
            for a in option]
    mode_args = [mode] + ([readme] if mode == "--update-readme" else [])
    r = kmc("regress", specs, *mode_args, *args)
    assert_one_error_line(r, flag, "no effect", mode)
    assert r.stdout == "" and not (tmp_path / "j.xml").exists() and not (tmp_path / "out").exists()
    assert readme.read_text() == BLOCK


def test_markdown_with_only_spec_dir_still_works(specs):
    r = kmc("regress", specs, "--markdown")
    assert r.exit_code == 0 and "toy-diehard" in r.stdout, r.output


def test_out_with_a_file_in_place_of_the_spec_folder(specs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "toy-diehard").write_text("not a folder")
    r = kmc("regress", specs, "--out", out)
    assert_one_error_line(r, str(out / "toy-diehard"), "is a file, not a folder")
    assert "FileExistsError" not in r.output and "Errno" not in r.output


def test_a_fifo_named_like_a_spec_is_an_error_row_not_a_hang(specs, tmp_path):
    os.mkfifo(specs / "pipe.toml")  # opening it to read would block: no writer
    junit = tmp_path / "j.xml"
    r = kmc("regress", specs, "--junit", junit, "-j", "2")
    assert_one_error_line(r, "not a regular file")
    assert "pipe.toml" in r.stdout and "toy-diehard" in r.stdout
    assert_one_error_line(kmc("regress", specs, "--markdown"), "not a regular file")
