"""`kmc explore` in a real headless browser (Debian's chromium, driven over
its DevTools protocol by explore_cdp.py: mouse clicks and key presses as a
person makes them). The Last Replica Standing spec: its counterexample's 7
steps clicked one by one, LeaderCompletenessProperty flagged, two steps back,
the URL reloaded to the same state; the same counterexample opened with
--from and branched off; the keyboard shortcuts; two tabs; screenshots at
1400 and 900 px (kept in $KMC_SCREENSHOTS when set). Skipped (with the
reason) only where chromium is not installed; .ci/run installs it.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from explore_helpers import LRS, ROOT
from explore_cdp import CHROMIUM, Browser

from checker.front.explore import from_run

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it)")

PROP = "LeaderCompletenessProperty"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


class Kmc:
    """`kmc explore ...` running as a user starts it; stopped with Ctrl-C."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "checker.front.cli", "explore", *args],
                                     cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if m is None:
            self.proc.kill()
            raise AssertionError(f"no address on the first line: {line!r}")
        self.address = m.group(0)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()
        return self.proc.returncode


@pytest.fixture
def spec_server():
    kmc = Kmc(str(LRS))
    yield kmc
    kmc.stop()


@pytest.fixture(scope="module")
def cex(lrs_run):
    explorer = from_run(lrs_run, None)
    return explorer.start, [str(a) for a, _ in explorer.walk(explorer.start)[1:]]


def step(b: Browser, session: str | None = "") -> tuple[int, int]:
    """(the step shown, the path's length) as the page says."""
    where = b.eval("[document.getElementById('where').dataset.step,"
                   "document.getElementById('where').dataset.steps]", session)
    return int(where[0]), int(where[1])


def state_digest(b: Browser, session: str | None = "") -> str:
    """What the page shows of the state: the table's text and the actions offered."""
    return b.eval("document.querySelector('#steps tbody').innerText+'|'+"
                  "Array.prototype.map.call(document.querySelectorAll('#choices a'),"
                  "function(a){return a.dataset.action;}).join(',')", session)


def assert_clean(b: Browser, session: str | None = "") -> None:
    errors = b.eval("document.getElementById('kmc-errors').textContent", session)
    assert errors == "", errors


def flagged(b: Browser) -> list[str]:
    return b.eval("Array.prototype.map.call(document.querySelectorAll('#props li.violated'),"
                  "function(e){return e.dataset.prop;})")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def keep(shot: Path) -> None:
    where = os.environ.get("KMC_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(where) / shot.name)


def test_click_the_counterexample_go_back_and_reload(browser, spec_server, cex, tmp_path):
    b = browser
    path, labels = cex
    url = b.open(spec_server.address)
    assert url.endswith("/?p=0") and step(b) == (0, 0)
    assert flagged(b) == []
    for k in range(1, 8):
        button = f"#choice-{path[k]}"
        assert b.eval(f"document.querySelector('{button}').dataset.action") == labels[k - 1]
        b.click(button)
        assert step(b) == (k, k)
        assert_clean(b)
    assert flagged(b) == [PROP, "LeaderCandidateCompletenessProperty"]
    assert b.eval(f"!!document.querySelector('#flag h2[data-prop=\"{PROP}\"]')")
    assert PROP in b.eval("document.getElementById('status').textContent")
    assert b.eval("document.getElementById('step-7').className") \
        .startswith("step violation")
    end = b.eval("location.href")

    for width in (1400, 900):
        shot = b.screenshot(tmp_path / f"explore-lrs-step7-{width}.png", width, 900)
        keep(shot)
        assert png_size(shot) == (width, 900) and shot.stat().st_size > 30_000
        # the page itself never scrolls sideways: a table wider than the window scrolls in its box
        assert b.eval("document.documentElement.scrollWidth") <= width
        assert b.eval("document.getElementById('actions').getBoundingClientRect().right") <= width
        # the table's header sits at its top, or under the bar while the table scrolls by
        # (not inside the rows: a table scrolling sideways in its box has it at its top)
        head, top, bar, narrow = b.eval(
            "[document.querySelector('#steps thead th').getBoundingClientRect().top,"
            "document.getElementById('steps').getBoundingClientRect().top,"
            "document.getElementById('bar').getBoundingClientRect().bottom,"
            "document.getElementById('tracebox').classList.contains('narrow')]")
        assert narrow == (width == 900)
        assert abs(head - (top if narrow else max(top, bar))) < 1.5, (head, top, bar, narrow)
        assert_clean(b)
    b.viewport(1400, 900)

    b.click("#back")
    b.click("#back")
    assert step(b) == (5, 7) and flagged(b) == []
    here = b.eval("location.href")
    assert here == end + "&at=5"
    seen = state_digest(b)
    assert "BrokerStart(1)" in seen and "ReceiveBrokerRegRequest(1)" in seen.split("|")[1]
    assert b.reload() == here
    assert step(b) == (5, 7) and state_digest(b) == seen
    b.click("#forward")
    assert step(b) == (6, 7)
    assert spec_server.stop() == 130


def test_from_the_run_opens_the_last_step_and_branches_off(browser, lrs_run, cex, tmp_path):
    kmc = Kmc("--from", str(lrs_run))
    try:
        b = browser
        url = b.open(kmc.address)
        path, labels = cex
        assert url.endswith("/?p=" + ".".join(map(str, path)))
        assert step(b) == (7, 7) and PROP in flagged(b)
        assert_clean(b)
        # back to step 4 from the path list, then another action than the counterexample's
        b.click('#path li[data-step="4"] a')
        assert step(b) == (4, 7) and flagged(b) == []
        other = next(i for i in range(9) if i != path[5]
                     and b.eval(f"!!document.getElementById('choice-{i}')"))
        b.click(f"#choice-{other}")
        assert step(b) == (5, 5)
        assert b.eval("document.getElementById('forward')") is None    # nothing ahead any more
        assert b.eval("location.href").endswith("/?p=" + ".".join(map(str, path[:5] + (other,))))
        shot = b.screenshot(tmp_path / "explore-lrs-from-branch-1400.png", 1400, 900)
        keep(shot)
    finally:
        assert kmc.stop() == 130


def test_keyboard_shortcuts(browser, spec_server):
    b = browser
    b.open(spec_server.address)
    first = b.eval("document.getElementById('choice-0').dataset.action")
    b.key("1")                       # the first enabled action
    assert step(b) == (1, 1) and b.eval("location.href").endswith("/?p=0.0")
    assert first in state_digest(b).split("|")[0]
    b.key("3")
    assert step(b) == (2, 2) and b.eval("location.href").endswith("/?p=0.0.2")
    b.key("ArrowLeft")
    assert step(b) == (1, 2)
    b.key("h")
    assert step(b) == (0, 2)
    b.key("l")
    assert step(b) == (1, 2)
    b.key("End")
    assert step(b) == (2, 2)
    b.key("Home")
    assert step(b) == (0, 2)
    b.key("ArrowRight")
    assert step(b) == (1, 2)
    b.key("r")                       # random steps from here, with the form's seed
    n, total = step(b)
    assert n == total and 1 < total <= 11 and "walked=" in b.eval("location.href")
    assert b.eval("document.getElementById('walked').textContent").startswith(f"{total - 1} random step")
    # ? shows the keys (no navigation)
    assert b.eval("document.getElementById('help').hidden") is True
    b.press("?")
    assert b.eval("document.getElementById('help').hidden") is False
    # a key typed into the random-steps seed input is that input's, not a shortcut
    b.eval("document.querySelector('#random input[name=seed]').focus()")
    before = b.eval("location.href")
    b.press("1")
    assert b.eval("location.href") == before
    assert_clean(b)


def test_two_tabs_explore_two_paths(browser, spec_server, cex):
    b = browser
    path, _ = cex
    other = b.new_tab()
    try:
        p = ".".join(map(str, path))
        b.open(f"{spec_server.address}?p={p}&at=3")
        b.open(f"{spec_server.address}?p={p}", other)
        assert step(b) == (3, 7) and step(b, other) == (7, 7)
        b.click("#forward")
        b.click("#back", other)
        assert step(b) == (4, 7) and step(b, other) == (6, 7)
        assert_clean(b)
        assert_clean(b, other)
    finally:
        b.close_tab(other)
