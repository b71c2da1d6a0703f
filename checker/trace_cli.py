"""`kmc trace`: show a run's counterexample again, as text, ITF or an HTML page.

    kmc trace show RUN_DIR [--property NAME]        readable text on stdout
    kmc trace itf  RUN_DIR [--property NAME] [-o FILE]   ITF JSON (stdout by default)
    kmc trace html RUN_DIR [--property NAME] [-o FILE]   the page (RUN_DIR/trace-P.html by default)

RUN_DIR is a run folder (results/<spec>/<run-id>/) or a spec's results folder
(results/<spec>/: its newest run with a counterexample, named on stderr). The
states are rebuilt from the run's trace-P.json with the model of its
summary.json, then rendered by the model's current trace view. Bad input (no such folder, no counterexample,
unknown property) is one line on stderr and exit 2.

Registered by checker/cli.py: `cli.add_command(trace)` (see register()).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from checker import traces
from checker.errors import EXIT_OK, SpecError
from checker.liveness.lasso import lasso_html, lasso_itf, lasso_text
from checker.liveness.report import lasso_of_run
from checker.results import write_atomic

_RUN_DIR = click.argument("run_dir", metavar="RUN_DIR", type=click.Path(path_type=Path))
_PROPERTY = click.option("--property", "-p", "prop", metavar="NAME",
                         help="Which violated property (default: the first one found).")


def _load(run_dir: Path, prop: str | None):
    picked, which = traces.pick_run(run_dir)
    if which is not None:
        click.echo(f"kmc: {picked}: {which}", err=True)
    run = traces.open_run(picked)
    name = run.pick(prop)
    return run, name, run.trace(name)


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


@click.group("trace")
def trace() -> None:
    """Show a run's counterexample: text, ITF (Apalache's trace format) or HTML."""


@trace.command("show")
@_RUN_DIR
@_PROPERTY
def show_cmd(run_dir: Path, prop: str | None) -> int:
    """Print the counterexample: each step's action, then only what changed."""
    run, name, tr = _load(run_dir, prop)
    lasso = lasso_of_run(run.summary, name, tr)  # a temporal property's (checker/liveness)
    _emit(lasso_text(lasso, run.model) if lasso else traces.render_text(run.model, name, tr), None, None)
    return EXIT_OK


@trace.command("itf")
@_RUN_DIR
@_PROPERTY
@click.option("--output", "-o", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write here instead of stdout.")
def itf_cmd(run_dir: Path, prop: str | None, out: Path | None) -> int:
    """Print the counterexample in the Informal Trace Format (JSON)."""
    run, name, tr = _load(run_dir, prop)
    lasso = lasso_of_run(run.summary, name, tr)
    obj = (lasso_itf(lasso, run.model, run.summary) if lasso
           else traces.render_itf(run.model, name, tr, run.summary))
    _emit(json.dumps(obj, indent=1) + "\n", out, None)
    return EXIT_OK


@trace.command("html")
@_RUN_DIR
@_PROPERTY
@click.option("--output", "-o", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page ('-': stdout; default: RUN_DIR/trace-<property>.html).")
def html_cmd(run_dir: Path, prop: str | None, out: Path | None) -> int:
    """Write the counterexample as a self-contained HTML page."""
    run, name, tr = _load(run_dir, prop)
    lasso = lasso_of_run(run.summary, name, tr)
    page = (lasso_html(lasso, run.model, run.summary) if lasso
            else traces.render_html(run.model, name, tr, run.summary))
    _emit(page, out, run.path / traces.file_names(name)["html"])
    return EXIT_OK


def register(group: click.Group) -> None:
    """Add `kmc trace` to the kmc command group (checker/cli.py)."""
    group.add_command(trace)


if __name__ == "__main__":  # python -m checker.trace_cli show RUN_DIR
    from checker.cli import cli as _cli
    register(_cli)
    sys.exit(_cli.main(["trace", *sys.argv[1:]], prog_name="kmc"))
