"""The lasso page (a temporal property's counterexample) in a real headless
browser: its script draws without an error, the cycle's rows are marked and
the loop-back row says where the cycle returns. Skipped (with the reason)
only where chromium is not installed, as tests/trace/test_browser.py."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kraft_specs import kip966_b2

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it)")



def test_lasso_page_draws_and_marks_the_cycle(tmp_path):
    # no fairness for UnfenceBroker, and none for the fetch responses: a real cycle
    fair = [f"WF:{a}" for a in ("BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
                                "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse",
                                "SendFetchRequest", "ReceiveFetchRequest", "ReceiveBrokerRegRequest",
                                "ReceiveAlterPartitionRequest")]
    spec = tmp_path / "lasso.toml"
    spec.write_text(kip966_b2(f'invariants = []\nproperties = ["EventuallyUnfenced"]\nfairness = {json.dumps(fair)}'))
    out = tmp_path / "res"
    r = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", str(spec), "--out", str(out), "-q",
                        "--json"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1, r.stderr
    (v,) = json.loads(r.stdout)["violations"]
    (run,) = [p for p in (out / "lasso").iterdir() if p.is_dir()]
    page = run / "trace-EventuallyUnfenced.html"
    profile = tmp_path / "chromium-profile"
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                        "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert 'data-kmc-ready="1"' in dom
    errors = re.search(r'<div id="kmc-errors"[^>]*>(.*?)</div>', dom, re.S)
    assert errors is not None and errors.group(1).strip() == ""
    cycle_rows = re.findall(r'<tr class="step cycle[^"]*" id="step-(\d+)"', dom)
    assert [int(i) for i in cycle_rows] == list(range(v["loop"], v["depth"] + 1))
    assert re.search(rf'<tr class="loopback" id="loopback" data-loop="{v["loop"]}"', dom)
    assert "stays FENCED for ever" in dom
