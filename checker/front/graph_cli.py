"""`kmc graph SPEC --format dot|graphml`: the explored state graph of a small
configuration, as TLC's `-dump dot` gives it: a node per distinct state (its
BFS level, whether initial, a short label, the invariants it violates), an
edge per (state, successor, action) with the action as its label (self-loops
included). Built as a networkx MultiDiGraph; GraphML through networkx's
writer, DOT by kmc's own (networkx's needs pydot or pygraphviz). Refused above
a size limit (--max-states): such a picture is for a few thousand states.
"""
from __future__ import annotations

from pathlib import Path

import click
import networkx as nx

from checker.front.options import DepthType, OutPath
from checker.front.spec import UNSET, load_spec, parse_sets
from checker.output.render import render_value
from checker.search.engine import CheckOptions
from checker.search.errors import SpecError
from checker.search.liveness.graph import GraphSearch, GraphTooBig
from model.base import ALWAYS

DEFAULT_MAX_STATES = 5000
_said: set = set()


def _say_once(line: str) -> None:
    if line not in _said:
        _said.add(line)
        click.echo(line, err=True)


def state_label(model, state) -> str:
    """A few lines saying what the state is (kraft: controller, brokers, producer)."""
    from checker.output.views import view_for
    view = view_for(model)
    lines = getattr(view, "summary_lines", None)
    if lines is not None:
        try:
            return "\n".join(lines(state))
        except Exception as e:  # noqa: BLE001 - a view never fails an export: its variables instead
            _say_once(f"kmc: warning: the graph's states show their variables: the view's "
                      f"summary_lines failed ({type(e).__name__}: {' '.join(str(e).split())[:200]})")
    names = getattr(state, "_fields", None) or [f"v{i}" for i in range(len(state))]
    return "\n".join(f"{n} = {render_value(v)}" for n, v in zip(names, state))


def explore(model, properties, max_depth: int | None, max_states: int,
            fingerprint_bits: int = 64) -> nx.MultiDiGraph:
    """The graph as networkx builds it (SpecError past max_states)."""
    invariants = [p for p in properties if p.kind == ALWAYS]
    options = CheckOptions(max_depth=max_depth, stop_on_violation=False,
                           fingerprint_bits=fingerprint_bits)
    states: dict[int, object] = {}
    search = GraphSearch(model, properties, options,
                         atoms=[p.predicate for p in invariants], keep_self_loops=True,
                         max_states=max_states)
    builder = search.builder
    original = builder.add_state

    def add_state(fp, state, level):  # keep the states too (a small graph)
        if fp not in builder.index:
            states[len(builder.level)] = state
        original(fp, state, level)

    builder.add_state = add_state
    try:
        search.run()
    except GraphTooBig as e:
        raise SpecError(f"the state graph has more than {e.limit:,} states: kmc graph is for small "
                        f"configurations (raise --max-states, or bound it with --depth)") from None
    graph = search.graph()
    g = nx.MultiDiGraph(model=f"{model.name}/{model.variant}")
    inits = set(graph.init)
    for u in range(graph.n):
        bad = [p.name for p, lab in zip(invariants, graph.labels) if not lab[u]]
        g.add_node(u, level=int(graph.level[u]), initial=u in inits,
                   label=state_label(model, states[u]), violates=",".join(bad))
    for u in range(graph.n):
        for k in graph.out(u):
            g.add_edge(u, int(graph.dst[k]), label=str(graph.actions[graph.act[k]]))
    for u, aid in graph.self_loops:
        g.add_edge(u, u, label=str(graph.actions[aid]))
    return g


def _hidden(c: str) -> bool:
    """A character shown as a \\uXXXX escape: XML 1.0 cannot hold it (C0
    controls but tab and newline, lone surrogates, U+FFFE/U+FFFF), or it is a
    control that would act on a terminal or a viewer rather than show (CR,
    DEL, C1 controls such as the CSI of an ANSI escape)."""
    o = ord(c)
    return ((o < 0x20 and c not in "\t\n") or 0x7F <= o <= 0x9F or 0xD800 <= o <= 0xDFFF
            or o in (0xFFFE, 0xFFFF))


def visible(text: str) -> str:
    """`text` with the characters no XML 1.0 or DOT file should carry raw
    (see _hidden) written as visible \\uXXXX text: a state's string values
    are whatever the spec's constants held (a NUL, an ANSI escape)."""
    text = str(text)
    if not any(_hidden(c) for c in text):
        return text
    return "".join(f"\\u{ord(c):04x}" if _hidden(c) else c for c in text)


def _visible_graph(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy of g whose string attributes are visible(): GraphML is XML."""
    def clean(d: dict) -> dict:
        return {k: visible(v) if isinstance(v, str) else v for k, v in d.items()}
    h = nx.MultiDiGraph(**clean(g.graph))
    h.add_nodes_from((u, clean(d)) for u, d in g.nodes(data=True))
    h.add_edges_from((u, v, k, clean(d)) for u, v, k, d in g.edges(keys=True, data=True))
    return h


def _dot_quote(text: str) -> str:
    """A DOT quoted string (an escString): backslashes and quotes escaped,
    newlines as left-justified line breaks, control characters visible."""
    return ('"' + visible(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\l")
            + '"')


def to_dot(g: nx.MultiDiGraph) -> str:
    lines = [f"digraph {_dot_quote(g.graph.get('model', 'kmc'))} {{",
             '  node [shape=box, fontname="monospace", fontsize=9];',
             '  edge [fontname="monospace", fontsize=8];']
    for u, d in g.nodes(data=True):
        attrs = [f"label={_dot_quote(d['label'] + chr(10))}", f"level={d['level']}"]
        if d["initial"]:
            attrs.append("style=bold")
        if d["violates"]:
            attrs += ['color="red"', 'style=filled', 'fillcolor="#fdecea"',
                      f"violates={_dot_quote(d['violates'])}"]
        lines.append(f"  {u} [{', '.join(attrs)}];")
    for u, v, d in g.edges(data=True):
        lines.append(f"  {u} -> {v} [label={_dot_quote(d['label'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(g: nx.MultiDiGraph, fmt: str, out: Path | None) -> str | None:
    """Write to `out` (None: return the text)."""
    if fmt == "dot":
        text = to_dot(g)
    elif fmt == "graphml":
        text = "\n".join(nx.generate_graphml(_visible_graph(g))) + "\n"
    else:
        raise SpecError(f"unknown graph format {fmt!r} (dot or graphml)")
    if out is None:
        return text
    from checker.search.files import write_atomic
    write_atomic(Path(out), text)
    return None


@click.command("graph")
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["dot", "graphml"]), default="dot",
              show_default=True, help="DOT (Graphviz) or GraphML.")
@click.option("--out", "out", type=OutPath(dir_okay=False, path_type=Path), default=None,
              help="Write here (default: standard output).")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES,
              show_default=True, help="Refuse graphs with more states than this.")
@click.option("--depth", type=DepthType(), default=UNSET,
              help="At most N steps from an initial state (overrides the spec).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a constant.")
def graph(spec_path, fmt, out, max_states, depth, sets):
    """Write SPEC's explored state graph (small configurations), actions as edge
    labels, states that violate an invariant marked."""
    spec = load_spec(spec_path, parse_sets(sets), depth=depth)
    model, props = spec.build()
    if spec.projection is not None:
        raise SpecError("kmc graph draws every state: drop the spec's projection")
    g = explore(model, props, spec.depth, max_states, spec.fingerprint_bits)
    if out is not None and out.parent and not out.parent.exists():
        raise SpecError(f"folder not found: {out.parent}")
    text = write(g, fmt, out)
    if text is not None:
        click.echo(text, nl=False)
    click.echo(f"kmc: graph of {spec_path}: {g.number_of_nodes():,} states, "
               f"{g.number_of_edges():,} transitions"
               + (f", {sum(1 for _, d in g.nodes(data=True) if d['violates']):,} violating an "
                  f"invariant" if any(d['violates'] for _, d in g.nodes(data=True)) else "")
               + (f" -> {out}" if out is not None else ""), err=True)
    return 0

