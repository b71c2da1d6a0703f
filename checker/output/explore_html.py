"""The page of `kmc explore` (checker/front/explore.py): one state of a path
through a model's state space, as a person chooses it step by step.

The path so far is shown as a counterexample page shows its trace (the
model's trace view: its columns and cells, the sequence diagram; the table
and the diagram's script are trace_html.py's own, taken from the page it
renders for the path), the current state its last row. Around it: the
enabled actions as links with their parameters and the view's sentence for
each, the whole path with back and forward, which invariants hold and which
`sometimes` witnesses the state meets, a random-steps form and the exports.
Every control is a link or a GET form whose URL holds the whole path, so a
reload or a link sent to someone gives the same state. Self-contained: inline
CSS and script, nothing fetched from elsewhere. Nothing here knows a model.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from checker.output.trace_html import (CSS, DRAW, ERROR_CAPTURE, _action_title, _json_for_script,
                                       trace_page)
from model.view import TraceView


def _esc(s: Any) -> str:
    return html.escape(str(s))


@dataclass
class Choice:
    """One enabled action of the current state: a link to the path it makes."""

    href: str
    title: str                  # the action with its parameters
    sentence: str = ""          # the view's sentence for the step
    breaks: list[str] = field(default_factory=list)   # invariants the next state violates
    meets: list[str] = field(default_factory=list)    # witnesses first met there on the path
    same: bool = False          # the next state is this one (a stuttering step)


@dataclass
class Check:
    """A property in the current state."""

    name: str
    kind: str                   # "always" | "sometimes"
    ok: bool                    # an invariant holds / a witness is met here
    doc: str = ""
    note: str = ""              # a witness met earlier on the path; a violation's explanation


@dataclass
class PathStep:
    """One state of the whole path (steps after the current one too)."""

    index: int
    title: str
    href: str
    current: bool = False
    ahead: bool = False         # after the current state: what "forward" goes to
    violates: list[str] = field(default_factory=list)


@dataclass
class Controls:
    """The links and forms of the page (URLs relative to the server's root)."""

    back: str | None
    forward: str | None
    first: str | None
    last: str | None
    random: str                 # the random-steps form's action
    random_fields: dict         # its hidden fields (the path, the step)
    seed: int
    scenario: str               # export links
    itf: str
    initial: list[tuple[str, str, bool]] = field(default_factory=list)  # (label, href, current)


EXPLORE_CSS = """
body{padding-bottom:30px}
#bar{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid var(--line);
  padding:8px 14px;display:flex;flex-wrap:wrap;align-items:center;gap:6px 14px}
#bar h1{font-size:16px;margin:0}
#bar .where{color:var(--muted)}
#bar nav{display:flex;gap:4px}
a.btn,button.btn{display:inline-block;border:1px solid var(--line);border-radius:5px;padding:3px 9px;
  background:#f6f8fa;color:#1f2328;text-decoration:none;font:inherit;cursor:pointer}
a.btn:hover,button.btn:hover{background:#eaeef2}
span.btn.off{display:inline-block;border:1px solid var(--line);border-radius:5px;padding:3px 9px;color:#8c959f}
form#random{display:flex;align-items:center;gap:4px}
form#random input{width:84px;font:inherit;padding:2px 4px}
#exports a{margin-left:6px}
kbd{font:11px ui-monospace,Menlo,Consolas,monospace;border:1px solid #8c959f;border-bottom-width:2px;
  border-radius:3px;padding:0 3px;background:#fff;color:#1f2328}
#meta{padding:4px 14px 0;color:var(--muted)}
#flag{margin:8px 14px 0;padding:8px 10px;border-left:4px solid var(--bad);background:var(--badbg);
  max-width:1400px}
#flag h2{margin:0;font-size:15px;color:var(--bad)}
#flag p{margin:4px 0 0}
#ok{margin:8px 14px 0;color:var(--good);font-weight:600}
#walked{margin:6px 14px 0;color:var(--warn)}
#steps thead th{top:var(--bar,0px)}
#tracebox.narrow{overflow-x:auto}
#tracebox.narrow #steps thead th{top:0}
#notes{margin:8px 14px 0;padding-left:18px}
#status{font-weight:700;text-decoration:none}
#status.bad{color:var(--bad)}#status.good{color:var(--good)}
#panels{display:grid;grid-template-columns:minmax(320px,2fr) minmax(260px,1fr) minmax(220px,1fr);
  gap:14px;padding:0 14px;align-items:start}
@media (max-width:1100px){#panels{grid-template-columns:1fr 1fr}#actions{grid-column:1 / -1}}
#panels h2{font-size:14px;margin:4px 0 6px}
#panels section{min-width:0}
ol#choices{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:4px}
ol#choices a{display:block;border:1px solid var(--line);border-radius:6px;padding:4px 8px;color:#1f2328;
  text-decoration:none;background:#fff}
ol#choices a:hover,ol#choices a:focus{border-color:#0969da;background:#f1f8ff}
ol#choices a.breaks{border-color:var(--bad)}
ol#choices .key{float:right;margin-left:6px}
ol#choices .flag{font-size:12px;font-weight:600}
ol#choices .flag.same{color:var(--muted);font-weight:400;font-style:italic}
ol#choices .flag.bad{color:var(--bad)}ol#choices .flag.good{color:var(--good)}
p.none{color:var(--muted);font-style:italic;margin:0}
ul.checks{list-style:none;margin:0 0 8px;padding:0}
ul.checks li{padding:2px 0 2px 20px;position:relative}
ul.checks li::before{position:absolute;left:2px;font-weight:700}
ul.checks li.holds::before,ul.checks li.met::before{content:"\\2713";color:var(--good)}
ul.checks li.violated::before{content:"\\2717";color:var(--bad)}
ul.checks li.violated .pname{color:var(--bad);font-weight:700}
ul.checks li.unmet::before{content:"\\00b7";color:var(--muted)}
ul.checks li.unmet{color:var(--muted)}
ul.checks .pname{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
ul.checks .note{display:block;color:var(--muted);font-size:12px}
ol#path{margin:0;padding-left:26px}
ol#path li{padding:1px 0}
ol#path li.current{font-weight:700}
ol#path li.current::marker{color:#0969da}
ol#path li.ahead a{color:#8c959f}
ol#path li.bad a{color:var(--bad)}
ol#path a{text-decoration:none;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
#initial{margin:0 0 8px}
#help{margin:10px 14px;color:var(--muted)}
#help kbd{margin:0 2px}
"""

KEYS = """
(function(){
  function go(id){var a=document.getElementById(id); if(a&&a.href){location.href=a.href; return true;} return false;}
  document.addEventListener('keydown',function(ev){
    var t=ev.target; if(t&&(t.tagName==='INPUT'||t.tagName==='TEXTAREA'||t.isContentEditable)){return;}
    if(ev.ctrlKey||ev.metaKey||ev.altKey){return;}
    var k=ev.key, done=false;
    if(k==='ArrowLeft'||k==='h'||k==='b'){done=go('back');}
    else if(k==='ArrowRight'||k==='l'||k==='f'){done=go('forward');}
    else if(k==='Home'){done=go('first');}
    else if(k==='End'){done=go('last');}
    else if(k==='r'){var f=document.getElementById('random'); if(f){f.submit(); done=true;}}
    else if(k==='?'){var h=document.getElementById('help'); h.hidden=!h.hidden; done=true;}
    else if(/^[1-9]$/.test(k)){done=go('choice-'+(Number(k)-1));}
    if(done){ev.preventDefault();}
  });
  // the table's header sticks under the bar; the current state (the last row) in view
  // (a window narrower than the table: the table scrolls sideways in its box, not the page)
  function bar(){var b=document.getElementById('bar'), t=document.getElementById('tracebox');
    document.documentElement.style.setProperty('--bar',(b?b.offsetHeight:0)+'px');
    if(t){t.classList.remove('narrow');
      t.classList.toggle('narrow',t.scrollWidth>document.documentElement.clientWidth);}}
  function here(){bar(); var rows=document.querySelectorAll('#steps tr.step');
    var r=rows.length?rows[rows.length-1]:null;
    if(r&&r.scrollIntoView&&rows.length>1){r.scrollIntoView({block:'center'});}}
  window.addEventListener('resize',bar);
  if(document.readyState==='loading'){document.addEventListener('DOMContentLoaded',here);} else {here();}
})();
"""


def _section(page: str, start: str, end: str) -> str:
    """The part of a rendered trace page from `start` to `end` (both kept)."""
    i = page.find(start)
    j = page.find(end, i)
    if i < 0 or j < 0:
        raise ValueError(f"the trace page has no {start!r} ... {end!r} (trace_html.py changed?)")
    return page[i:j + len(end)]


def _trace_parts(view: TraceView, prop: str, trace: list) -> tuple[str, dict]:
    """The step table with its diagram (<main>) and the diagram's data, as
    trace_html.py renders them for `trace`; the last step is selected."""
    page = trace_page(view, prop, trace)
    main = _section(page, "<main>", "</main>")
    marker = '<script type="application/json" id="kmc-data">'
    raw = _section(page, marker, "</script>")[len(marker):-len("</script>")]
    data = json.loads(raw.replace("<\\/", "</"))
    data["bad_step"] = len(trace) - 1   # the current state: selected, its changes shown
    return main, data


def _checks(items: list[Check], ok: str, bad: str) -> str:
    out = []
    for c in items:
        cls = ok if c.ok else bad
        note = f'<span class="note">{_esc(c.note)}</span>' if c.note else ""
        out.append(f'<li class="{cls}" data-prop="{_esc(c.name)}" title="{_esc(c.doc)}">'
                   f'<span class="pname">{_esc(c.name)}</span>{note}</li>')
    return '<ul class="checks">' + "".join(out) + "</ul>"


def explore_page(view: TraceView, trace: list, *, title: str, meta: list[tuple[str, str]],
                 choices: list[Choice], checks: list[Check], path: list[PathStep],
                 controls: Controls, walked: str = "", problem: str = "") -> str:
    """The page of the state trace[-1], reached by `trace` ([(None, s0), (a1,
    s1), ...]: the path up to the current state). walked: what the last random
    steps did, in words; problem: why the state's successors are not shown
    (the model raised an evaluation error)."""
    at = len(trace) - 1
    invariants = [c for c in checks if c.kind == "always"]
    witnesses = [c for c in checks if c.kind != "always"]
    violated = [c for c in invariants if not c.ok]
    main, data = _trace_parts(view, violated[0].name if violated else "", trace)
    state_name = "the initial state" if at == 0 else f"step {at}"
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<link rel="icon" href="data:,">',
           f"<title>kmc explore: {_esc(title)} - {_esc(state_name)}</title>",
           f"<style>{CSS}{getattr(view, 'page_css', '')}{EXPLORE_CSS}</style>",
           f"<script>{ERROR_CAPTURE}</script></head><body>"]

    def link(id_: str, href: str | None, text: str, key: str) -> str:
        if href is None:
            return f'<span class="btn off" title="{_esc(key)}">{text}</span>'
        return f'<a class="btn" id="{id_}" href="{_esc(href)}" title="{_esc(key)}">{text}</a>'

    steps_total = len(path) - 1
    out.append('<div id="bar">')
    out.append(f'<h1>kmc explore: {_esc(title)}</h1>')
    out.append(f'<span class="where" id="where" data-step="{at}" data-steps="{steps_total}">'
               f'{_esc(state_name)} of a path of {steps_total} step{"" if steps_total == 1 else "s"}</span>')
    out.append("<nav>" + link("first", controls.first, "&#8676; initial", "Home")
               + link("back", controls.back, "&#8592; back", "back: left arrow, h or b")
               + link("forward", controls.forward, "forward &#8594;", "forward: right arrow, l or f")
               + link("last", controls.last, "end &#8677;", "End") + "</nav>")
    hidden = "".join(f'<input type="hidden" name="{_esc(k)}" value="{_esc(v)}">'
                     for k, v in controls.random_fields.items())
    out.append(f'<form id="random" method="get" action="{_esc(controls.random)}">{hidden}'
               f'<button class="btn" type="submit" title="r">random steps</button>'
               f'<input type="number" name="n" value="10" min="1" max="10000" aria-label="how many steps">'
               f'<label>seed <input type="number" name="seed" value="{controls.seed}" aria-label="seed"></label>'
               f"</form>")
    out.append(f'<span id="exports">export this path: <a id="export-scenario" href="{_esc(controls.scenario)}">'
               f'scenario</a><a id="export-itf" href="{_esc(controls.itf)}">ITF</a></span>')
    if violated:
        out.append(f'<a id="status" class="bad" href="#props">&#10007; {_esc(", ".join(c.name for c in violated))} '
                   f'violated</a>')
    elif invariants:
        out.append('<a id="status" class="good" href="#props">&#10003; every invariant holds</a>')
    out.append('<span class="where"><kbd>?</kbd> keys</span></div>')
    if meta:
        out.append('<div id="meta">' + " &middot; ".join(f"{_esc(k)} {_esc(v)}" for k, v in meta) + "</div>")
    out.append('<div id="help" hidden><kbd>&#8592;</kbd><kbd>h</kbd><kbd>b</kbd> back '
               '&nbsp; <kbd>&#8594;</kbd><kbd>l</kbd><kbd>f</kbd> forward &nbsp; <kbd>Home</kbd> '
               'initial state &nbsp; <kbd>End</kbd> end of the path &nbsp; <kbd>1</kbd>-<kbd>9</kbd> '
               'take that enabled action &nbsp; <kbd>r</kbd> random steps &nbsp; <kbd>j</kbd> '
               '<kbd>k</kbd> select a row &nbsp; <kbd>?</kbd> this help</div>')
    if walked:
        out.append(f'<p id="walked">{_esc(walked)}</p>')
    if violated:
        out.append('<div id="flag">' + "".join(
            f'<h2 data-prop="{_esc(c.name)}">{_esc(c.name)} is violated in {_esc(state_name)}</h2>'
            + (f"<p>{_esc(c.note)}</p>" if c.note else "") for c in violated) + "</div>")
    elif invariants:
        out.append(f'<p id="ok">Every invariant holds in {_esc(state_name)}.</p>')
    notes = view.notes(trace) if hasattr(view, "notes") else []
    if notes:
        out.append('<ul class="notes" id="notes">' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
    abbr = getattr(view, "abbreviations", ())
    if abbr:
        out.append('<dl class="abbr" id="abbr" style="padding:0 14px">' + "".join(
            f"<div><dt>{_esc(k)}</dt><dd>{_esc(v)}</dd></div>" for k, v in abbr) + "</dl>")
    out.append(f'<div id="tracebox">{main}</div>')

    out.append('<div id="panels"><section id="actions">')
    out.append(f"<h2>Enabled actions in {_esc(state_name)} ({len(choices)})</h2>")
    if controls.initial and at == 0 and len(controls.initial) > 1:
        out.append('<p id="initial">initial states: ' + " ".join(
            (f'<b>{_esc(label)}</b>' if cur else f'<a href="{_esc(href)}">{_esc(label)}</a>')
            for label, href, cur in controls.initial) + "</p>")
    if problem:
        out.append(f'<p class="explain" id="problem">{_esc(problem)}</p>')
    elif choices:
        out.append('<ol id="choices">')
        for i, c in enumerate(choices):
            key = f'<kbd class="key">{i + 1}</kbd>' if i < 9 else ""
            flags = "".join(f'<div class="flag bad">breaks {_esc(n)}</div>' for n in c.breaks)
            flags += "".join(f'<div class="flag good">meets {_esc(n)}</div>' for n in c.meets)
            if c.same:
                flags += '<div class="flag same">changes nothing</div>'
            sentence = f'<div class="desc">{_esc(c.sentence)}</div>' if c.sentence else ""
            out.append(f'<li><a id="choice-{i}" class="choice{" breaks" if c.breaks else ""}" '
                       f'data-index="{i}" data-action="{_esc(c.title)}" href="{_esc(c.href)}">{key}'
                       f'<div class="aname">{_action_title(c.title)}</div>{sentence}{flags}</a></li>')
        out.append("</ol>")
    else:
        out.append('<p class="none" id="deadlock">No action is enabled: this state has no successor '
                   '(a deadlock, unless the protocol ends here).</p>')
    out.append('</section><section id="props">')
    if invariants:
        out.append(f"<h2>Invariants ({len(invariants) - len(violated)} of {len(invariants)} hold)</h2>")
        out.append(_checks(invariants, "holds", "violated"))
    else:
        out.append('<h2>Invariants</h2><p class="none">The spec checks none.</p>')
    met = sum(c.ok for c in witnesses)
    out.append(f"<h2>Witnesses met in this state ({met} of {len(witnesses)})</h2>")
    out.append(_checks(witnesses, "met", "unmet") if witnesses else '<p class="none">none</p>')
    out.append('</section><section id="pathbox"><h2>Path</h2><ol id="path" start="0">')
    for p in path:
        cls = " ".join(x for x in ("current" if p.current else "", "ahead" if p.ahead else "",
                                   "bad" if p.violates else "") if x)
        why = f' title="violates {_esc(", ".join(p.violates))}"' if p.violates else ""
        out.append(f'<li class="{cls}" data-step="{p.index}"{why}><a href="{_esc(p.href)}">'
                   f'{_esc(p.title)}</a></li>')
    out.append("</ol></section></div>")
    out.append('<div id="kmc-errors" hidden></div>')
    out.append(f'<script type="application/json" id="kmc-data">{_json_for_script(data)}</script>')
    out.append(f"<script>{DRAW}</script><script>{KEYS}</script></body></html>")
    return "\n".join(out)


def error_page(status: int, reason: str, message: str, home: str = "/") -> str:
    """The page of a request the explorer refuses (400, 404)."""
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
            f"<title>kmc explore: {status} {_esc(reason)}</title><style>{CSS}</style></head><body>"
            f'<header><h1>{status} {_esc(reason)}</h1><p class="explain" id="problem">{_esc(message)}</p>'
            f'<p><a href="{_esc(home)}">the explorer\'s start</a></p></header></body></html>')

