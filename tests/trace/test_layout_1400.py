"""The counterexample pages at 1400 px in headless chromium, every step's
detail row expanded: nothing widens the page (no horizontal scroll, every
column in view), the diagram's labels stay inside it and off each other,
every cell's content stays inside its border, a cell or item is highlighted
only when what it shows changed, the abbreviations have a key, the aux_
counters stay out of the step diffs, a nacked record that was committed is
explained, and a lasso marks the step after which its goal is never reached.

A probe script appended to a copy of the page measures all this once the
page's own script has drawn (data-kmc-ready) and writes it as JSON into
<pre id="probe">, which `chromium --dump-dom` prints."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_browser import CHROMIUM, assert_page_ran_cleanly, dump_dom
from trace_helpers import ROOT, kmc_group, only_run_dir

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it)")

LASSO = ROOT / "specs" / "liveness" / "kip966-elr-unclean-unavailable.toml"
QUORUM = ROOT / "specs" / "quorum" / "storage-ack-before-flush.toml"

PROBE = r"""
<script>(function(){
  function text(e){return e?e.textContent.replace(/\s+/g,' ').trim():null;}
  function box(a,b){return a.left<b.right-0.5&&b.left<a.right-0.5&&a.top<b.bottom-0.5&&b.top<a.bottom-0.5;}
  function items(td){var m={}; if(!td){return m;}
    td.querySelectorAll('.it').forEach(function(it){var k=it.querySelector('.k'); if(k){m[text(k)]=text(it);}}); return m;}
  function measure(){
    var out={}, de=document.documentElement;
    document.querySelectorAll('tr.detail').forEach(function(d){d.hidden=false;});
    window.dispatchEvent(new Event('resize'));  // the page redraws its diagram
    out.scrollWidth=de.scrollWidth; out.clientWidth=de.clientWidth;
    out.tableRight=document.getElementById('steps').getBoundingClientRect().right;
    var svg=document.getElementById('seq'), sr=svg.getBoundingClientRect(), boxes=[];
    out.labels=0; out.outside=[]; out.overlaps=[];
    svg.querySelectorAll('text.msglabel, text.lanelabel').forEach(function(t){var b=t.getBoundingClientRect();
      out.labels++; if(b.left<sr.left-0.5||b.right>sr.right+0.5){out.outside.push(t.textContent);}
      boxes.forEach(function(o){if(box(o[1],b)){out.overlaps.push(o[0]+' / '+t.textContent);}});
      boxes.push([t.textContent,b]);});
    // a message's label crosses no lane outside the two its arrow joins
    var laneXs=Array.prototype.map.call(svg.querySelectorAll('g.lane line'),function(l){return Number(l.getAttribute('x1'));});
    out.crossing=[];
    svg.querySelectorAll('g.arrow').forEach(function(g){var l=g.querySelector('line'), t=g.querySelector('text.msglabel');
      if(!l||!t){return;} var a=Number(l.getAttribute('x1')), c=Number(l.getAttribute('x2')), b=t.getBBox();
      laneXs.forEach(function(x){if((x<Math.min(a,c)-0.5||x>Math.max(a,c)+0.5)&&b.x<x&&x<b.x+b.width){
        out.crossing.push(t.textContent+' crosses the lane at '+x);}});});
    out.overflow=[];
    document.querySelectorAll('#steps td').forEach(function(td){var r=td.getBoundingClientRect();
      td.querySelectorAll('*').forEach(function(e){var b=e.getBoundingClientRect();
        if(b.width&&(b.right>r.right+0.5||b.left<r.left-0.5)){out.overflow.push(td.closest('tr').id+': '+text(e));}});});
    out.changedSame=[]; out.itemSame=[]; out.changedCells=0; out.changedItems=0;
    var rows=document.querySelectorAll('#steps tr.step');
    for(var i=1;i<rows.length;i++){var cur=rows[i].querySelectorAll('td.cell'), old=rows[i-1].querySelectorAll('td.cell');
      for(var j=0;j<cur.length;j++){
        if(cur[j].classList.contains('changed')){out.changedCells++;
          if(text(cur[j])===text(old[j])){out.changedSame.push(rows[i].id+' column '+j);}}
        var before=items(old[j]);
        cur[j].querySelectorAll('.it.chg').forEach(function(it){var k=it.querySelector('.k'); if(!k){return;}
          out.changedItems++; if(before[text(k)]===text(it)){out.itemSame.push(rows[i].id+' column '+j+': '+text(it));}});}}
    out.abbr=Array.prototype.map.call(document.querySelectorAll('#abbr dt'),text);
    out.notes=text(document.getElementById('notes'));
    out.details=Array.prototype.map.call(document.querySelectorAll('tr.detail:not(#detail-0)'),text).join('\n');
    var lost=document.querySelector('tr.step[data-lost]'); out.lostRow=lost?Number(lost.dataset.step):null;
    out.lost=text(document.getElementById('lost'));
    var p=document.createElement('pre'); p.id='probe'; p.textContent=JSON.stringify(out); document.body.appendChild(p);
  }
  (function wait(){if(document.documentElement.getAttribute('data-kmc-ready')==='1'){setTimeout(measure,100);}
    else {setTimeout(wait,20);}})();
})();</script>
"""


def probe(page: Path, tmp_path: Path, edit=lambda html_: html_) -> tuple[dict, str]:
    """The probe's measures of `page` in a 1400 x 900 window, and the DOM."""
    copy = tmp_path / f"probed-{page.name}"
    copy.write_text(edit(page.read_text()).replace("</body>", PROBE + "</body>"))
    dom, stderr = dump_dom(tmp_path, copy, "--window-size=1400,900")
    assert_page_ran_cleanly(dom, stderr)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m is not None, "the probe did not run"
    return json.loads(html.unescape(m.group(1))), dom


@pytest.fixture(scope="session")
def lasso_run(tmp_path_factory) -> Path:
    """A lasso of EventuallyHasLeader: KIP-966 with its last ISR member stopped uncleanly."""
    out = tmp_path_factory.mktemp("lasso")
    result = CliRunner().invoke(kmc_group(), ["check", str(LASSO), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    return only_run_dir(out)


def assert_fits(m: dict) -> None:
    assert m["clientWidth"] == 1400
    assert m["scrollWidth"] <= m["clientWidth"], m["scrollWidth"]  # no horizontal scroll
    assert m["tableRight"] <= m["clientWidth"], m["tableRight"]    # every column in view
    assert m["labels"] > 0 and m["outside"] == [] and m["overlaps"] == []
    assert m["crossing"] == []
    assert m["overflow"] == []
    assert m["changedSame"] == [] and m["itemSame"] == []
    assert m["changedCells"] > 0 and m["changedItems"] > 0  # (the checks above looked at something)


def test_kraft_page_fits_1400px_with_every_step_expanded(lrs_run, tmp_path):
    m, _ = probe(lrs_run / "trace-LeaderCompletenessProperty.html", tmp_path)
    assert_fits(m)
    assert {"LE", "PE", "LESO", "ISR", "LEO", "HWM"} <= set(m["abbr"]) and "ELR" not in m["abbr"]  # v3.5
    # the steps' diffs (state 0 lists every variable, the model's counters too)
    assert "aux_" not in m["details"] and "partition_data[1]" in m["details"]


def test_a_committed_record_shown_nacked_is_explained(lrs_run, tmp_path):
    """In this trace the HWM passes A while the ISR is {1} (MinISR 2): the
    producer is told A failed, yet A is committed (below the true HWM)."""
    last = json.loads((lrs_run / "trace-LeaderCompletenessProperty.json").read_text())["steps"][-1]["state"]
    assert last["inv_neg_acked"] == ["A"] and [r["value"] for r in last["inv_consumed"]] == ["A"]
    m, dom = probe(lrs_run / "trace-LeaderCompletenessProperty.html", tmp_path)
    assert m["notes"].startswith("nacked and committed: A. The producer was told the write failed")
    assert "MinISR=2" in m["notes"] and "never takes a written record back" in m["notes"]
    assert re.search(r'<span class="k">nacked</span> \{A\}', dom)


def test_zk_page_fits_1400px_and_its_producer_cell_stays_inside(zk_run, tmp_path):
    m, dom = probe(zk_run / "trace-LeaderCompleteness.html", tmp_path)
    assert_fits(m)
    assert "acked</span> A by {broker-0, broker-1}" in dom  # the long item that used to run out
    assert {"LE", "v", "HW", "ckpt HW"} <= set(m["abbr"])


def test_lasso_page_fits_and_marks_where_availability_was_lost(lasso_run, tmp_path):
    """EventuallyHasLeader: the partition has a leader up to step 2 and none
    from step 3 (DataLossShutdown of the last ISR member) to the end of the
    lasso; step 3 is the one marked."""
    m, dom = probe(lasso_run / "trace-EventuallyHasLeader.html", tmp_path)
    assert_fits(m)
    assert {"LE", "PE", "ELR", "LESO"} <= set(m["abbr"])  # kip966
    leaders = re.findall(r'<tr class="step[^"]*" id="step-(\d+)"[^>]*><td class="n">\d+</td>'
                         r'<td class="act">.*?</td><td class="cell[^"]*"><span class="it[^"]*">'
                         r'<span class="k">leader</span> <b>([^<]*)</b>', dom)
    assert len(leaders) == 9, leaders
    first_none = next(int(i) for i, (_, b) in enumerate(leaders)
                      if all(x == "none" for _, x in leaders[i:]))
    assert first_none == 3 and leaders[2][1] != "none"
    assert m["lostRow"] == first_none
    assert m["lost"] == ("Lost at step 3, DataLossShutdown(1): from there on the behaviour never "
                         "again reaches what EventuallyHasLeader waits for.")


def test_quorum_page_fits_1400px_and_its_wide_lane_name_stays_inside(tmp_path):
    """kraft_quorum's last lane, "clients / admin", is wider than a lane: it
    goes on two lines inside the diagram."""
    result = CliRunner().invoke(kmc_group(), ["check", str(QUORUM), "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 1, result.output
    m, dom = probe(only_run_dir(tmp_path / "out") / "trace-Durability.html", tmp_path)
    assert_fits(m)
    assert re.search(r'<text class="lanelabel"[^>]*><tspan[^>]*>clients /</tspan><tspan[^>]*>admin</tspan>', dom)
    assert {"e N", "HWM", "PreVote, Vote", "sN, offsets"} <= set(m["abbr"])
    # its logs read as records (the page styles them), not as run-together text
    assert ".rec{" in dom and re.search(r'<span class="rec[^"]*" title="offset 1, InitCluster', dom)


def test_a_long_action_name_widens_its_column_rather_than_running_out(lrs_run, tmp_path):
    """The storage variants' longest action name, in place of step 6's."""
    def longer(page: str) -> str:
        return page.replace('<span class="nm">ReceiveBrokerRegRequest</span>',
                            '<span class="nm">ReceiveGetReplicaLogInfoResponse</span>')
    m, dom = probe(lrs_run / "trace-LeaderCompletenessProperty.html", tmp_path, longer)
    assert "ReceiveGetReplicaLogInfoResponse" in dom
    assert m["overflow"] == [] and m["scrollWidth"] <= 1400


def test_labels_that_would_meet_are_moved_apart(lrs_run, tmp_path):
    """Every message drawn twice (two labels at the same place, were they
    placed blindly): the page moves the second along its arrow."""
    def twice(page: str) -> str:
        m = re.search(r'(<script type="application/json" id="kmc-data">)(.*?)(</script>)', page, re.S)
        data = json.loads(m.group(2))
        assert data["arrows"]
        data["arrows"] = [a for a in data["arrows"] for _ in range(2)]
        return page[:m.start(2)] + json.dumps(data) + page[m.end(2):]
    m, _ = probe(lrs_run / "trace-LeaderCompletenessProperty.html", tmp_path, twice)
    assert m["labels"] == 4 + 2 * 3 and m["overlaps"] == [] and m["outside"] == []   # 2 messages, 1 metadata update


def test_the_probe_sees_a_page_that_overflows(lrs_run, tmp_path):
    """The checks can fail: a detail line that cannot wrap, and a cell item
    wider than its cell, are both caught."""
    def wide(page: str) -> str:
        return (page.replace("tr.detail .fit{width:0;min-width:100%}", "")
                .replace("overflow-wrap:anywhere;", "white-space:pre;")
                .replace("#steps td.cell .it{display:inline-block;max-width:100%;white-space:normal;"
                         "overflow-wrap:anywhere}", ""))
    m, _ = probe(lrs_run / "trace-LeaderCompletenessProperty.html", tmp_path, wide)
    assert m["scrollWidth"] > 1400
