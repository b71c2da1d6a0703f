"""A counterexample as one self-contained HTML page (inline CSS, JS and SVG; no
external resource): a message sequence diagram (a lane per actor, an arrow
per message from the step that sent it to the step that consumed it) beside a
per-step table of what the model's trace view shows (its columns and cells,
styled by the view's own CSS, its legend entries), the step that breaks the
property highlighted and explained. Nothing here knows a model.

The table is plain HTML (readable without JS); the diagram is drawn by the
page's script from the embedded JSON, aligned with the table rows, and
redrawn when the layout changes. The script records any error (window.onerror,
console.error) into #kmc-errors and marks <html data-kmc-ready="1"> when drawn,
so a headless browser test can check that the page really works.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

from model.view import Explanation, TraceView


def _esc(s: Any) -> str:
    return html.escape(str(s))


def _json_for_script(obj: Any) -> str:
    # inside <script>, "</" would end the element; escape it (and U+2028/9 for old parsers)
    return (json.dumps(obj, separators=(",", ":"))
            .replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


CSS = """
:root{--bad:#c62828;--badbg:#fdecea;--chg:#fff3b0;--line:#d0d7de;--muted:#57606a;--good:#1b5e20;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328;background:#fff}
header{padding:14px 18px 8px;border-bottom:1px solid var(--line)}
h1{font-size:19px;margin:0 0 6px}
h1 .prop{color:var(--bad)}
.explain{margin:6px 0;padding:8px 10px;border-left:4px solid var(--bad);background:var(--badbg);max-width:1400px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0 4px;color:var(--muted)}
dl.meta dt{font-weight:600}dl.meta dd{margin:0}
.legend{color:var(--muted);margin:6px 0 0}
.legend span{margin-right:14px;white-space:nowrap}
.sw{display:inline-block;width:22px;height:0;border-top:2px solid #555;vertical-align:middle;margin-right:4px}
.sw.dropped{border-top-style:dashed}.sw.inflight{border-top-style:dotted}
main{display:flex;align-items:flex-start;padding:10px 8px 40px}
#seqcol{position:relative;flex:none}
#seq{display:block}
table#steps{border-collapse:collapse;flex:none}
#steps th,#steps td{border:1px solid var(--line);padding:3px 5px;vertical-align:top;text-align:left}
#steps thead th{background:#f6f8fa;position:sticky;top:0;z-index:1;height:34px;vertical-align:middle}
#steps td.n{font-weight:700;text-align:right;color:var(--muted);width:28px}
#steps td.act{min-width:150px}
#steps td.act .desc{max-width:210px}
.aname{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-weight:600;font-size:12px}
.aname .nm{white-space:nowrap}
.desc{color:var(--muted);font-size:12px}
#steps td.cell{min-width:100px;max-width:172px;font-size:12px}
#steps td.cell.changed{background:#fffdf0}
tr.step{cursor:pointer}
tr.step:hover td{background:#f6f8fa}
tr.step.sel td.n,tr.step.sel td.act{outline:2px solid #0969da;outline-offset:-2px}
tr.step.violation td{background:var(--badbg)}
tr.step.broke td.n,tr.step.broke td.act{box-shadow:inset 0 0 0 2px var(--bad)}
.brokeat{margin:0 0 6px;font-size:15px;font-weight:600;color:var(--bad)}
#steps td.cell.bad{box-shadow:inset 0 0 0 3px var(--bad)}
.it{white-space:nowrap;margin-right:4px}
#steps td.cell .it{display:inline-block;max-width:100%;white-space:normal;overflow-wrap:anywhere}
.it .k{color:var(--muted)}
.chg{background:var(--chg);border-radius:3px}
tr.detail td{background:#f6f8fa}
tr.detail .fit{width:0;min-width:100%}
tr.detail pre{margin:0;overflow-wrap:anywhere;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap}
#kmc-errors{margin:10px;padding:8px;border:2px solid var(--bad);white-space:pre-wrap}
svg text{font:11px system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
svg .lanelabel{font-weight:700;font-size:11px}
svg .msglabel{paint-order:stroke;stroke:#fff;stroke-width:3px;font-size:10px}
svg .arrow:hover line,svg .arrow:hover path{stroke-width:3}
tr.step.cycle td.n{box-shadow:inset 4px 0 0 #0969da}tr.step.cycle td{background:#f1f8ff}
tr.loopback td{color:#0969da;font-weight:700}
tr.step[data-lost] td.n,tr.step[data-lost] td.act{box-shadow:inset 0 0 0 2px var(--bad)}
dl.abbr{display:flex;flex-wrap:wrap;gap:2px 14px;margin:4px 0 0;color:var(--muted)}
dl.abbr div{display:flex;gap:4px}dl.abbr dt{font-weight:700}dl.abbr dd{margin:0}
ul.notes{margin:6px 0 0;padding-left:18px;max-width:1400px}
"""

ERROR_CAPTURE = """
(function(){
  var errs=[];
  function show(){var el=document.getElementById('kmc-errors');
    if(el&&errs.length){el.textContent=errs.join('\\n');el.hidden=false;el.setAttribute('data-count',String(errs.length));}}
  window.__kmcError=function(m){errs.push(String(m));show();};
  window.addEventListener('error',function(e){window.__kmcError('error: '+(e&&e.message?e.message:e));});
  window.addEventListener('unhandledrejection',function(e){window.__kmcError('unhandled rejection: '+(e&&e.reason));});
  var ce=console.error;
  console.error=function(){window.__kmcError('console.error: '+Array.prototype.slice.call(arguments).join(' '));
    return ce.apply(console,arguments);};
  document.addEventListener('DOMContentLoaded',show);
})();
"""

DRAW = """
(function(){
  var data=JSON.parse(document.getElementById('kmc-data').textContent);
  var NS='http://www.w3.org/2000/svg';
  var COLORS=data.colors||{};  // the view's message kinds -> colour
  var LANE_W=64, LEFT=18;
  function el(name,attrs,parent,text){var e=document.createElementNS(NS,name);
    for(var k in attrs){e.setAttribute(k,attrs[k]);} if(text!==undefined){e.textContent=text;}
    if(parent){parent.appendChild(e);} return e;}
  function rows(){return Array.prototype.slice.call(document.querySelectorAll('#steps tr.step'));}
  function select(i,scroll){rows().forEach(function(r){r.classList.toggle('sel',Number(r.dataset.step)===i);});
    var d=document.getElementById('detail-'+i); if(d){d.hidden=false;}
    if(scroll){var r=document.getElementById('step-'+i); if(r&&r.scrollIntoView){r.scrollIntoView({block:'nearest'});}}}
  var selected=data.bad_step;
  var placed=[];  // the boxes of the labels drawn so far
  // a lane's name over its lane: on two lines when wider than the lane, and
  // moved in from the diagram's edges
  function laneLabel(g,name,x,y,width){
    var t=el('text',{'class':'lanelabel',x:String(x),y:String(y+4),'text-anchor':'middle'},g,name);
    var cut=name.lastIndexOf(' ',Math.floor(name.length/2)+2);
    if(t.getBBox().width>LANE_W-4&&cut>0){t.textContent='';
      el('tspan',{x:String(x),y:String(y-2)},t,name.slice(0,cut));
      el('tspan',{x:String(x),y:String(y+10)},t,name.slice(cut+1));}
    var b=t.getBBox(), dx=b.x<1?1-b.x:(b.x+b.width>width-1?width-1-b.x-b.width:0);
    if(dx){t.setAttribute('transform','translate('+dx+',0)');}}
  function hits(b){return placed.some(function(p){return b.x<p.x+p.width&&p.x<b.x+b.width&&b.y<p.y+p.height&&p.y<b.y+b.height;});}
  // a message's label: along its arrow, between the two lanes it joins (one
  // lane's width for a step's own arrow): in words over up to three lines,
  // smaller, then cut (the arrow's tooltip has it whole) where it is still
  // wider; at the first place that keeps it off the labels already drawn
  function fit(g,text,room){
    var probe=el('text',{'class':'msglabel'},g), size=10;
    function w(x){probe.textContent=x; return probe.getComputedTextLength();}
    function wrap(){var lines=[], cur='';
      text.split(' ').forEach(function(word){var x=cur?cur+' '+word:word;
        if(!cur||w(x)<=room){cur=x;} else {lines.push(cur); cur=word;}});
      lines.push(cur);
      if(lines.length>3){lines=lines.slice(0,2).concat([lines.slice(2).join(' ')]);}
      return lines;}
    var lines=wrap();
    while(size>8&&lines.some(function(x){return w(x)>room;})){size--; probe.style.fontSize=size+'px'; lines=wrap();}
    lines=lines.map(function(x){if(w(x)<=room){return x;}
      while(x.length>1&&w(x+'\u2026')>room){x=x.slice(0,-1);} return x+'\u2026';});
    var widest=Math.max.apply(null,lines.map(w));
    g.removeChild(probe);
    return {lines:lines,size:size,width:widest};}
  function label(g,text,color,x1,y1,x2,y2,width){
    var lo=Math.min(x1,x2)+3, hi=Math.max(x1,x2)-3;
    if(hi-lo<LANE_W-8){var c=(x1+x2)/2; lo=c-(LANE_W-8)/2; hi=c+(LANE_W-8)/2;}
    lo=Math.max(lo,1); hi=Math.min(hi,width-1);
    var f0=fit(g,text,hi-lo), half=f0.width/2, lh=f0.size*1.1;
    var t=el('text',{'class':'msglabel',fill:color,'text-anchor':'middle'},g), b=null;
    if(f0.size<10){t.style.fontSize=f0.size+'px';}
    var spans=f0.lines.map(function(x){return el('tspan',{},t,x);});
    // along the arrow, then above and below its middle (a short arrow has little length)
    var spots=[[0.28,0],[0.5,0],[0.72,0],[0.12,0],[0.88,0],[0.4,0],[0.6,0]], block=lh*spans.length;
    [1,-1,2,-2,3,-3].forEach(function(n){spots.push([0.5,n*block]);});
    for(var k=0;k<spots.length;k++){var f=spots[k][0];
      var cx=Math.min(Math.max(x1+(x2-x1)*f,lo+half),hi-half);
      var y=y1+(y2-y1)*f-3-lh*(spans.length-1)+spots[k][1];
      spans.forEach(function(sp,i){sp.setAttribute('x',String(cx)); sp.setAttribute('y',String(y+lh*i));});
      b=t.getBBox();
      if(!hits(b)){break;}}
    placed.push(b);}
  function draw(){
    var svg=document.getElementById('seq'); if(!svg){return;}
    while(svg.firstChild){svg.removeChild(svg.firstChild);}
    var lanes=data.lanes; if(!lanes.length){svg.setAttribute('width','0');ready();return;}
    var table=document.getElementById('steps'); var top=table.getBoundingClientRect().top;
    var head=table.tHead.getBoundingClientRect();
    var width=LEFT+LANE_W*lanes.length; var height=table.getBoundingClientRect().height;
    svg.setAttribute('width',String(width)); svg.setAttribute('height',String(height));
    svg.setAttribute('viewBox','0 0 '+width+' '+height);
    var defs=el('defs',{},svg);
    Object.keys(COLORS).concat(['default']).forEach(function(k){
      var m=el('marker',{id:'ah-'+k,viewBox:'0 0 10 10',refX:'9',refY:'5',markerWidth:'7',markerHeight:'7',orient:'auto-start-reverse'},defs);
      el('path',{d:'M0,0 L10,5 L0,10 z',fill:COLORS[k]||'#555'},m);});
    var ys=[], bands=el('g',{'class':'bands'},svg);
    rows().forEach(function(r){var b=r.getBoundingClientRect(); var y0=b.top-top;
      ys.push(y0+b.height/2);
      var cls=r.classList.contains('violation')?'band bad':'band';
      el('rect',{'class':cls,x:'0',y:String(y0),width:String(width),height:String(b.height),
        fill:r.classList.contains('violation')?'#fdecea':(ys.length%2?'#ffffff':'#f6f8fa')},bands);
      el('text',{x:'4',y:String(y0+b.height/2+4),fill:'#57606a'},bands,String(r.dataset.step));});
    var headY=head.height/2, laneTop=head.height;
    var lx=function(k){return LEFT+LANE_W*k+LANE_W/2;};
    lanes.forEach(function(name,k){var g=el('g',{'class':'lane','data-lane':String(k)},svg);
      laneLabel(g,name,lx(k),headY,width);
      el('line',{x1:String(lx(k)),x2:String(lx(k)),y1:String(laneTop),y2:String(height),stroke:'#8c959f','stroke-width':'1.5'},g);});
    placed=[]; svg.querySelectorAll('text.lanelabel').forEach(function(t){placed.push(t.getBBox());});
    var ag=el('g',{'class':'arrows'},svg);
    data.arrows.forEach(function(a,idx){
      var color=COLORS[a.kind]||'#555'; var mk=COLORS[a.kind]?a.kind:'default';
      var x1=lx(a.src), y1=a.sent===0?laneTop+6:ys[a.sent];
      var x2=lx(a.dst), y2=a.end===null?height-4:ys[a.end];
      if(a.end!==null&&a.end===a.sent){y2=y1+6;}
      var g=el('g',{'class':'arrow '+a.fate.replace(' ','-'),'data-from':String(a.sent),'data-to':String(a.end===null?'':a.end)},ag);
      el('title',{},g,a.full+' ['+(a.fate==='in flight'?'still in flight':a.fate+' in step '+a.end)+', sent in step '+a.sent+']');
      var attrs={x1:String(x1),y1:String(y1),x2:String(x2),y2:String(y2),stroke:color,'stroke-width':'1.7'};
      if(a.fate==='dropped'){attrs['stroke-dasharray']='5 3';}
      if(a.fate==='in flight'){attrs['stroke-dasharray']='2 3';}
      if(a.fate!=='dropped'){attrs['marker-end']='url(#ah-'+mk+')';}
      el('line',attrs,g);
      if(a.fate==='dropped'){el('path',{d:'M'+(x2-4)+','+(y2-4)+' l8,8 m0,-8 l-8,8',stroke:color,'stroke-width':'2'},g);}
      label(g,a.short,color,x1,y1,x2,y2,width);
    });
    var dg=el('g',{'class':'actors'},svg);
    data.actors.forEach(function(k,i){ if(k===null||k===undefined||i===0){return;}
      var c=el('circle',{'class':'actor',cx:String(lx(k)),cy:String(ys[i]),r:'5',
        fill:i===data.bad_step?'#c62828':'#24292f',stroke:'#fff','stroke-width':'1.5'},dg);
      el('title',{},c,'step '+i+': '+data.titles[i]);});
    ready();
  }
  // drawn: the page's own width too (the tests check that it fits a 1400 px window)
  function ready(){var d=document.documentElement;
    d.setAttribute('data-kmc-width',String(d.scrollWidth)); d.setAttribute('data-kmc-ready','1');}
  function redraw(){try{draw();}catch(e){window.__kmcError('draw: '+e);}}
  document.addEventListener('click',function(ev){var t=ev.target;
    if(t.closest&&t.closest('tr.step')){var r=t.closest('tr.step'); var i=Number(r.dataset.step);
      var d=document.getElementById('detail-'+i);
      if(selected===i&&d){d.hidden=!d.hidden;} else {select(i,false);}
      selected=i; redraw();}});
  document.addEventListener('keydown',function(ev){var n=rows().length;
    if(ev.key==='j'||ev.key==='ArrowDown'){selected=Math.min(n-1,selected+1);}
    else if(ev.key==='k'||ev.key==='ArrowUp'){selected=Math.max(0,selected-1);} else {return;}
    ev.preventDefault(); select(selected,true); redraw();});
  window.addEventListener('resize',redraw);
  function start(){select(selected,false); redraw();
    if(window.ResizeObserver){new ResizeObserver(redraw).observe(document.getElementById('steps'));}}
  if(document.readyState==='loading'){document.addEventListener('DOMContentLoaded',start);} else {start();}
})();
"""


_TAG = re.compile(r"<[^>]*>")


def _shown(cell_html: str) -> str:
    """What a cell says: its text, without the markup (a record's colour for
    "acknowledged" is the producer's news, not the broker's)."""
    return " ".join(html.unescape(_TAG.sub(" ", cell_html)).split())


def _action_title(title: str) -> str:
    """An action's name never breaks inside; its parameters may go to the next
    line, after the name or a comma."""
    name, paren, rest = title.partition("(")
    out = f'<span class="nm">{_esc(name)}</span>'
    if paren:
        out += "<wbr>" + _esc(paren + rest).replace(",", ",<wbr>")
    return out


def trace_page(view: TraceView, prop: str, trace: list, meta: dict | None = None,
               lasso: dict | None = None) -> str:
    """The HTML page of one counterexample. meta: spec, model, variant,
    constants, run id, ... shown in the header (plain JSON values). lasso:
    a temporal property's counterexample (checker/search/liveness/lasso.py):
    {"loop": index of the state the cycle returns to, "headline", "instance",
    "structure"}; the cycle's rows are marked and no step is "the" bad one."""
    from checker.output.render import steps as n_steps
    meta = dict(meta or {})
    steps = len(trace) - 1
    took = n_steps(steps)
    why = view.explain(prop, trace)
    columns = view.columns()
    bad_cols = why.columns if why is not None else set()
    titles = ["initial state"] + [view.step_title(a) for a, _ in trace[1:]]
    lanes = view.lanes()
    arrows = view.arrows(trace)
    actors = [None] + [view.actor_lane(a) for a, _ in trace[1:]]

    head_title = (f"Deadlock after {took}" if prop == "Deadlock"
                  else f"{prop} violated after {took}")
    if lasso is not None:
        why = Explanation(lasso.get("headline", ""), set())
        head_title = f"{prop} violated: a lasso of {took}"
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>kmc: {_esc(head_title)}{' - ' + _esc(meta['spec_name']) if meta.get('spec_name') else ''}</title>",
           f"<style>{CSS}{getattr(view, 'page_css', '')}</style><script>{ERROR_CAPTURE}</script></head><body>",
           "<header>"]
    if lasso is not None:
        inst = f" ({lasso['instance']})" if lasso.get("instance") else ""
        out.append(f'<h1><span class="prop">{_esc(prop)}</span>{_esc(inst)} violated: '
                   f'{_esc(lasso.get("structure", ""))}</h1>')
        lost = lasso.get("lost_at")
        if lost is not None:
            where = "the initial state" if lost == 0 else f"step {lost}, {titles[lost]}"
            out.append(f'<p class="brokeat" id="lost">Lost at {_esc(where)}: from there on the '
                       f'behaviour never again reaches what {_esc(prop)} waits for.</p>')
    elif prop == "Deadlock":
        out.append(f"<h1>Deadlock after {took}</h1>")
    else:
        out.append(f'<h1><span class="prop">{_esc(prop)}</span> violated after {took}</h1>')
        if why is not None and why.broke_how:  # the step that broke it, when not the last one
            out.append(f'<p class="brokeat" id="broke">The promise broke at {_esc(why.broke_how)}.</p>')
    if why is not None and why.text:
        out.append(f'<p class="explain" id="explain">{_esc(why.text)}</p>')
    doc = view.property_doc(prop)
    rows = []
    if doc:
        rows.append(("property", f"{prop}: {doc}"))
    for key, label in (("spec", "spec"), ("model", "model"), ("constants", "constants"),
                       ("run_id", "run"), ("command", "reproduce")):
        if meta.get(key) not in (None, "", {}):
            v = meta[key]
            if isinstance(v, dict):
                v = ", ".join(f"{k} = {json.dumps(x)}" for k, x in v.items())
            rows.append((label, v))
    if rows:
        out.append('<dl class="meta">' + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in rows)
                   + "</dl>")
    if lanes:
        out.append('<p class="legend"><span>Click a step (or j / k) to see everything it changed.</span>'
                   '<span><i class="sw"></i>received</span><span><i class="sw dropped"></i>dropped</span>'
                   '<span><i class="sw inflight"></i>still in flight</span>'
                   '<span>&#9679; the actor of a step</span>'
                   '<span>highlighted: changed in this step</span>'
                   + "".join(f"<span>{_esc(entry)}</span>" for entry in getattr(view, "legend", ()))
                   + '</p>')
    abbr = getattr(view, "abbreviations", ())
    if abbr:
        out.append('<dl class="abbr" id="abbr">' + "".join(f"<div><dt>{_esc(k)}</dt><dd>{_esc(v)}</dd></div>"
                                                           for k, v in abbr) + "</dl>")
    notes = view.notes(trace) if hasattr(view, "notes") else []
    if notes:
        out.append('<ul class="notes" id="notes">' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
    out.append("</header>")
    out.append('<main><div id="seqcol"><svg id="seq" xmlns="http://www.w3.org/2000/svg" '
               'role="img" aria-label="message sequence diagram"></svg></div>')
    out.append('<table id="steps"><thead><tr><th>#</th><th>action</th>'
               + "".join(f"<th>{_esc(c)}</th>" for c in columns) + "</tr></thead><tbody>")
    prev = None
    shown_before: dict[int, str] = {}
    for i, (action, state) in enumerate(trace):
        if lasso is not None:
            cls = "step cycle" if i >= lasso["loop"] else "step"  # the cycle: loop..steps
        else:
            cls = "step violation" if i == steps and prop else "step"
            if why is not None and why.broke_at == i and i != steps:
                cls += " broke"
        if action is None:
            act = '<div class="aname">Initial state</div>'
            lines = view.initial_lines(state)
        else:
            desc = view.describe(action, prev, state)
            act = (f'<div class="aname">{_action_title(view.step_title(action))}</div>'
                   + (f'<div class="desc">{_esc(desc)}</div>' if desc else ""))
            lines = view.step_lines(prev, state, action) or ["(no variable changed)"]
        cells = view.cells(prev, state)
        tds = []
        for j, (content, changed) in enumerate(cells):
            # highlighted only when what the cell shows changed (not a field it hides)
            changed = changed and _shown(content) != shown_before.get(j)
            shown_before[j] = _shown(content)
            c = "cell" + (" changed" if changed else "") + (" bad" if i == steps and j in bad_cols
                                                            and lasso is None else "")
            tds.append(f'<td class="{c}">{content}</td>')
        lost = ' data-lost="1"' if lasso is not None and i == lasso.get("lost_at") else ""
        out.append(f'<tr class="{cls}" id="step-{i}" data-step="{i}"{lost}><td class="n">{i}</td>'
                   f'<td class="act">{act}</td>{"".join(tds)}</tr>')
        out.append(f'<tr class="detail" id="detail-{i}" hidden><td></td>'
                   f'<td colspan="{len(columns) + 1}"><div class="fit"><pre>{_esc(chr(10).join(lines))}</pre></div></td></tr>')
        prev = state
    if lasso is not None:
        back = (f"&#8635; stuttering: the behaviour stays in state {lasso['loop']} for ever"
                if lasso["loop"] == steps else
                f"&#8635; back to state {lasso['loop']}: steps {lasso['loop'] + 1}-{steps} repeat for ever")
        out.append(f'<tr class="loopback" id="loopback" data-loop="{lasso["loop"]}"><td></td>'
                   f'<td colspan="{len(columns) + 1}">{back}</td></tr>')
    out.append("</tbody></table></main>")
    out.append('<div id="kmc-errors" hidden></div>')
    data = {"lanes": lanes, "bad_step": steps if lasso is None else lasso["loop"], "titles": titles,
            "actors": actors, "colors": dict(getattr(view, "kind_colors", {}) or {}),
            "arrows": [{"src": a.src, "dst": a.dst, "sent": a.sent, "end": a.end, "fate": a.fate,
                        "short": a.short, "full": a.full, "kind": a.kind} for a in arrows]}
    out.append(f'<script type="application/json" id="kmc-data">{_json_for_script(data)}</script>')
    out.append(f"<script>{DRAW}</script></body></html>")
    return "\n".join(out)
