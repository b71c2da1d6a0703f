"""What a run leaves behind: results/<spec-name>/<run-id>/ with summary.json,
report.html (checker/output/report.py) and, per violated property P, its shortest
counterexample as trace-P.txt (readable text), trace-P.json (kmc's JSON),
trace-P.itf.json (Apalache's Informal Trace Format) and trace-P.html (a
self-contained page): see checker/output/traces.py.

Files are written atomically (a temp file in the same directory, then
os.replace), into a hidden temp directory renamed into place at the end, so
an interrupted run leaves no half-written file and no half-written run.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from checker.output import traces
from checker.output.lasso import patch_summary
from checker.output.report import run_report
from checker.output.views import view_for
from checker.search import registry
from checker.search.engine import DEADLOCK, CheckResult
from checker.search.errors import KmcError, SpecError
from checker.search.files import safe_component, umask, write_atomic
from model.base import ModelConfigError
from model.view import TraceView

KMC_VERSION = "0.1.0"


def ensure_writable(out_dir: Path) -> None:
    """Create the results root, or one line (SpecError) before a long run
    rather than after it."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise PermissionError(f"not writable: {out_dir}")
    except OSError as e:
        raise SpecError(f"cannot write results under {out_dir}: {e}") from None


def summary(config: dict[str, Any], result: CheckResult, run_id: str | None = None,
            expect: dict | None = None, engine: str | None = None) -> dict[str, Any]:
    """The summary object: top-level figures first (as --json prints them).

    depth: steps of the shortest counterexample on a violation, else the most
    steps of any state found (depth_reached, always present)."""
    stats = result.statistics()
    first = result.violations[0] if result.violations else None
    out: dict[str, Any] = {
        "outcome": result.outcome,
        "violated": result.violated,
        "depth": first.depth if first else result.depth,
        "depth_reached": result.depth,
        "distinct": result.distinct,
        "generated": result.generated,
        "per_level_distinct": stats.pop("per_level_distinct"),
    }
    stats.pop("outcome"), stats.pop("distinct"), stats.pop("generated"), stats.pop("depth")
    out.update(stats)
    out["violations"] = [{"property": v.property, "depth": v.depth,
                          "kind": "deadlock" if v.property == DEADLOCK else "invariant",
                          "actions": [str(a) for a, _ in v.trace[1:]],
                          "trace_json": f"trace-{v.property}.json",
                          "trace_text": f"trace-{v.property}.txt",
                          "trace_itf": f"trace-{v.property}.itf.json",
                          "trace_html": f"trace-{v.property}.html"} for v in result.violations]
    failure = getattr(result, "error", None)
    if failure is not None:   # outcome 'error': the model raised; its trace files
        names = traces.file_names(failure.property)
        out["error"] = {"action": failure.action, "message": failure.message, "hint": failure.hint,
                        "depth": failure.depth, "trace_text": names["text"],
                        "trace_json": names["json"], "trace_itf": names["itf"],
                        "trace_html": names["html"]}
    if getattr(result, "liveness", None) is not None or result.violations:
        patch_summary(out, result)  # lassos, the liveness section
    out["report"] = "report.html"
    out["sometimes"] = {name: {"witnessed": d is not None, "depth": d}
                        for name, d in result.sometimes.items()}
    out["properties_checked"] = list(result.properties)
    ran = dict(result.engine or {})
    out["config"] = {**config, "engine": engine or ran.get("name", "local")}
    if ran.get("name") == "auto":  # where each level ran: "local" or "pool" (the parallel workers)
        out["auto"] = {k: v for k, v in ran.items() if k != "name"}
    out["expect"] = dict(expect or {})
    out["run_id"] = run_id
    out["kmc_version"] = KMC_VERSION
    return out


def _model_of(summary_obj: dict):
    """The run's model, rebuilt from the summary's configuration (None if it
    cannot be: the generic trace rendering is used then)."""
    config = summary_obj.get("config") or {}
    try:
        return registry.build(config["model"], config.get("variant"), config.get("constants") or {})[0]
    except (KeyError, KmcError, ModelConfigError) as e:
        print(f"kmc: warning: the traces are written with the generic view: the model cannot be "
              f"rebuilt from the run's configuration ({' '.join(str(e).split())})", file=sys.stderr)
        return None


def write_run(root: Path, spec_name: str, summary_obj: dict, result: CheckResult,
              model=None, view: TraceView | None = None) -> Path:
    """Write the run's files in one pass; returns the run directory. The
    model's trace view (`view`, else built from `model`, else from the
    model rebuilt from the summary's configuration) goes once to each
    writer: per violation the four trace files (traces.render), then
    report.html, then summary.json.

    A view that fails to render a page or the ITF does not lose the run: the
    error is recorded in summary.json under "render_errors" (and in
    summary_obj, for the caller to show)."""
    failure = getattr(result, "error", None)
    if view is None and (result.violations or failure is not None):
        model = model if model is not None else _model_of(summary_obj)
        view = view_for(model) if model is not None else None
    model = view.model if view is not None else model
    spec_dir = Path(root) / safe_component(spec_name)  # one component: never outside root
    try:
        spec_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file where a folder must be
        raise SpecError(f"cannot write results into {spec_dir}: "
                        f"{'it' if spec_dir.exists() else 'a part of its path'} is a file, "
                        f"not a folder") from None
    run_id = summary_obj["run_id"]
    final = spec_dir / run_id
    tmp_dir = Path(tempfile.mkdtemp(dir=spec_dir, prefix=f".{run_id}.", suffix=".partial"))
    try:
        os.chmod(tmp_dir, 0o777 & ~umask())  # mkdtemp creates 0700
        errors = []
        for v in result.violations + ([failure] if failure is not None and failure.trace else []):
            files, problems = traces.render(view, v, summary_obj)
            names = traces.file_names(v.property)
            for kind, content in files.items():
                write_atomic(tmp_dir / names[kind], content)
            errors += problems
        off = getattr(model, "switched_off", None) if model is not None else None
        if off is not None:  # actions the constants switch off on purpose (the report marks them)
            summary_obj["switched_off"] = off()
        try:
            write_atomic(tmp_dir / "report.html", run_report(summary_obj))
        except Exception as e:
            errors.append(f"report.html: {type(e).__name__}: {e}")
        if errors:
            summary_obj["render_errors"] = errors
        write_atomic(tmp_dir / "summary.json", json.dumps(summary_obj, indent=1) + "\n")
        os.replace(tmp_dir, final)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise
    return final


def write_run_into(run_dir: Path, summary_obj: dict, result: CheckResult, model=None,
                   view: TraceView | None = None) -> Path:
    """write_run's files moved one by one, each atomically, into a run folder
    the engine created (the spark engine's: its levels, spark.log; write_run
    renames a whole new folder into place, which a resumable run's folder
    cannot be); summary.json last, so its presence means complete."""
    run_dir = Path(run_dir)
    staging = Path(tempfile.mkdtemp(dir=run_dir, prefix=".results-"))
    try:
        obj = {**summary_obj, "run_id": run_dir.name}
        made = write_run(staging, "run", obj, result, model=model, view=view)
        if "render_errors" in obj:
            summary_obj["render_errors"] = obj["render_errors"]
        files = sorted(made.iterdir(), key=lambda f: f.name == "summary.json")
        for f in files:
            os.replace(f, run_dir / f.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run_dir
