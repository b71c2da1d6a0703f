"""`kmc trace`: show a run's counterexample again, as text, ITF or an HTML page.

    kmc trace show RUN_DIR [--property NAME]        readable text on stdout
    kmc trace itf  RUN_DIR [--property NAME] [-o FILE]   ITF JSON (stdout by default)
    kmc trace html RUN_DIR [--property NAME] [-o FILE]   the page (RUN_DIR/trace-P.html by default)

RUN_DIR is a run folder (results/<spec>/<run-id>/) or a spec's results folder
(results/<spec>/: its newest run with a counterexample, named on stderr). The
states are rebuilt from the run's trace-P.json with the model of its
summary.json, then rendered by the model's current trace view. Bad input (no such folder, no counterexample,
unknown property) is one line on stderr and exit 2.

Listed in checker/front/cli.py (its one list of commands).
"""
from __future__ import annotations

from pathlib import Path

import click

from checker.front.options import OutPath
from checker.output import runs, traces
from checker.output.console import same_trace_groups
from checker.output.render import trace_text
from checker.output.views import view_for
from checker.search.errors import EXIT_OK, SpecError
from checker.search.files import write_atomic

_RUN_DIR = click.argument("run_dir", metavar="RUN_DIR", type=click.Path(path_type=Path))
_PROPERTY = click.option("--property", "-p", "prop", metavar="NAME",
                         help="Which violated property (default: the first one found; "
                              "`show`: every one).")


def _load(run_dir: Path, prop: str | None):
    """(the run, its violation of `prop`, the model's trace view)."""
    picked, which = runs.pick_run(run_dir)
    if which is not None:
        click.echo(f"kmc: {picked}: {which}", err=True)
    run = runs.open_run(picked)
    return run, run.violation(run.pick(prop)), view_for(run.model)


def _form(kind: str, run_dir: Path, prop: str | None):
    """(the run, the violation, one of its files rendered again: traces.render);
    the other properties the run violated are named on stderr."""
    run, v, view = _load(run_dir, prop)
    others = [p for p in run.properties if p != v.property]
    if prop is None and others:
        click.echo(f"kmc: {run.path} also has counterexamples for {', '.join(others)} "
                   f"(--property NAME)", err=True)
    files, errors = traces.render(view, v, run.summary, kinds=(kind,))
    if errors:
        raise SpecError(f"{run.path}: cannot render the {kind}: {errors[0]}")
    return run, v, files[kind]


def _emit(text: str, out: Path | None, default: Path | None) -> None:
    target = out if out is not None else default
    if target is None or str(target) == "-":
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        write_atomic(target, text)
    except OSError as e:
        raise SpecError(f"cannot write {target}: {e}") from None
    click.echo(f"kmc: wrote {target}", err=True)


@click.group("trace", invoke_without_command=True)
@click.pass_context
def trace(ctx: click.Context) -> None:
    """Show a run's counterexample: text, ITF (Apalache's trace format) or HTML."""
    if ctx.invoked_subcommand is None:  # bare `kmc trace`: its help, as bare `kmc` does
        click.echo(ctx.get_help())


@trace.command("show")
@_RUN_DIR
@_PROPERTY
def show_cmd(run_dir: Path, prop: str | None) -> int:
    """Print the counterexample: each step's action, then only what changed.
    Without --property, every property the run violated: one trace for the
    properties it shares (as the console shows them)."""
    if prop is not None:
        _emit(_form("text", run_dir, prop)[2], None, None)
        return EXIT_OK
    run, v, view = _load(run_dir, None)
    texts = []
    for group in same_trace_groups([run.violation(p) for p in run.properties]):
        first = group[0]
        if len(group) == 1:
            files, errors = traces.render(view, first, run.summary, kinds=("text",))
            texts.append(files["text"].rstrip("\n"))
        else:   # (invariants: a lasso has a trace of its own)
            texts.append(trace_text(first.property, first.trace, view=view,
                                    also=[o.property for o in group[1:]]).rstrip("\n"))
    _emit("\n\n".join(texts) + "\n", None, None)
    return EXIT_OK


@trace.command("itf")
@_RUN_DIR
@_PROPERTY
@click.option("--output", "-o", "out", type=OutPath(dir_okay=False, path_type=Path),
              help="Write here instead of stdout.")
def itf_cmd(run_dir: Path, prop: str | None, out: Path | None) -> int:
    """Print the counterexample in the Informal Trace Format (JSON)."""
    _emit(_form("itf", run_dir, prop)[2], out, None)
    return EXIT_OK


@trace.command("html")
@_RUN_DIR
@_PROPERTY
@click.option("--output", "-o", "out", type=OutPath(dir_okay=False, path_type=Path),
              help="Where to write the page ('-': stdout; default: RUN_DIR/trace-<property>.html).")
def html_cmd(run_dir: Path, prop: str | None, out: Path | None) -> int:
    """Write the counterexample as a self-contained HTML page."""
    run, v, page = _form("html", run_dir, prop)
    _emit(page, out, run.path / traces.file_names(v.property)["html"])
    return EXIT_OK
