"""The counterexample page in a real headless browser (Debian's chromium):
it loads without a script error, its script draws the lanes and the message
arrows beside every step, and a screenshot is produced.

The page's own script records window errors and console.error calls into
#kmc-errors and sets <html data-kmc-ready="1"> once it has drawn, so the DOM
that `chromium --dump-dom` prints after the scripts ran tells both. Skipped
(with the reason) only where chromium is not installed; .ci/run installs it.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it)")

PROP = "LeaderCompletenessProperty"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def dump_dom(tmp_path: Path, page: Path, *args: str) -> tuple[str, str]:
    r = chromium(tmp_path, "--virtual-time-budget=3000", *args, "--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, r.stderr


def console_errors(stderr: str) -> list[str]:
    """Script errors chromium logged to stderr (--enable-logging=stderr)."""
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def assert_page_ran_cleanly(dom: str, stderr: str) -> None:
    assert 'data-kmc-ready="1"' in dom, "the page's script did not finish drawing"
    errors = re.search(r'<div id="kmc-errors"[^>]*>(.*?)</div>', dom, re.S)
    assert errors is not None and errors.group(1).strip() == "", errors and errors.group(1)
    assert "data-count" not in errors.group(0)
    assert console_errors(stderr) == []


def test_trace_page_draws_lanes_and_messages_without_errors(lrs_run, tmp_path):
    page = lrs_run / f"trace-{PROP}.html"
    dom, stderr = dump_dom(tmp_path, page)
    assert_page_ran_cleanly(dom, stderr)
    lanes = re.findall(r'<g class="lane" data-lane="(\d)"><text[^>]*>([^<]*)</text>', dom)
    assert lanes == [("0", "Controller"), ("1", "Broker 1"), ("2", "Broker 2"), ("3", "Broker 3")]
    assert len(re.findall(r'<tr class="step[ "]', dom)) == 8
    arrows = re.findall(r'<g class="arrow (\w+)" data-from="(\d+)" data-to="(\d*)">', dom)
    assert arrows == [("received", "5", "6"), ("received", "6", "7"), ("received", "3", "3")]  # (3: metadata)
    assert len(re.findall(r'<circle class="actor"', dom)) == 7  # one actor per step
    assert re.search(r'<tr class="step violation[^"]*" id="step-7"', dom)


def test_the_error_check_catches_a_broken_script(lrs_run, tmp_path):
    """The check above can fail: a page whose script throws is caught."""
    broken = tmp_path / "broken.html"
    html = (lrs_run / f"trace-{PROP}.html").read_text()
    broken.write_text(html.replace("</body>", "<script>noSuchFunction();</script></body>"))
    dom, stderr = dump_dom(tmp_path, broken)
    assert re.search(r'<div id="kmc-errors" data-count="1">[^<]*noSuchFunction', dom), dom[-800:]
    with pytest.raises(AssertionError):
        assert_page_ran_cleanly(dom, stderr)


def test_screenshot_of_the_trace_page(lrs_run, tmp_path):
    shot = tmp_path / "trace.png"
    r = chromium(tmp_path, "--window-size=1800,1100", f"--screenshot={shot}",
                 (lrs_run / f"trace-{PROP}.html").as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    assert png_size(shot) == (1800, 1100)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_generic_page_and_run_report_load_cleanly(diehard_run, lrs_run, tmp_path):
    dom, stderr = dump_dom(tmp_path, diehard_run / "trace-NotSolved.html")
    assert_page_ran_cleanly(dom, stderr)
    assert len(re.findall(r'<tr class="step[ "]', dom)) == 7
    assert '<g class="lane"' not in dom  # the generic view has no sequence diagram
    report, stderr = dump_dom(tmp_path, lrs_run / "report.html")
    assert len(re.findall(r'<rect class="level"', report)) == 8 and console_errors(stderr) == []
    shot = tmp_path / "report.png"
    r = chromium(tmp_path, "--window-size=1200,1400", f"--screenshot={shot}",
                 (lrs_run / "report.html").as_uri())
    assert r.returncode == 0 and png_size(shot) == (1200, 1400)


def test_trace_page_fits_a_1400px_window_and_names_where_the_promise_broke(lrs_run, tmp_path):
    """At 1400 px the page needs no horizontal scroll; the headline names the
    step that broke the promise (the election of broker 1 without A, step 6,
    before the violation at step 7), that row is marked, and action names
    never break inside (their parameters may go to the next line)."""
    page = lrs_run / f"trace-{PROP}.html"
    dom, stderr = dump_dom(tmp_path, page, "--window-size=1400,900")
    assert_page_ran_cleanly(dom, stderr)
    width = int(re.search(r'data-kmc-width="(\d+)"', dom).group(1))
    assert width <= 1400, width
    broke = re.search(r'<p class="brokeat" id="broke">([^<]*)</p>', dom).group(1)
    assert broke.startswith("The promise broke at step 6, ReceiveBrokerRegRequest(1), made broker 1 leader")
    assert re.search(r'<tr class="step broke" id="step-6"', dom)
    assert '<div class="aname"><span class="nm">ReceiveBrokerRegRequest</span><wbr>(1)</div>' in dom
