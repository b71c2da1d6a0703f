"""What a run leaves behind: results/<spec-name>/<run-id>/ with summary.json,
report.html (checker/report.py) and, per violated property P, its shortest
counterexample as trace-P.txt (readable text), trace-P.json (kmc's JSON),
trace-P.itf.json (Apalache's Informal Trace Format) and trace-P.html (a
self-contained page): see checker/traces.py.

Files are written atomically (a temp file in the same directory, then
os.replace), into a hidden temp directory renamed into place at the end, so
an interrupted run leaves no half-written file and no half-written run.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from checker.engine import DEADLOCK, CheckResult
from checker.render import trace_json, trace_text

KMC_VERSION = "0.1.0"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ensure_writable(out_dir: Path) -> None:
    """Create the results root, or one line (SpecError) before a long run
    rather than after it."""
    from checker.errors import SpecError
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise PermissionError(f"not writable: {out_dir}")
    except OSError as e:
        raise SpecError(f"cannot write results under {out_dir}: {e}") from None


def write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{os.getpid()}-{os.urandom(2).hex()}"


def summary(config: dict[str, Any], result: CheckResult, run_id: str | None = None,
            expect: dict | None = None, engine: str = "local") -> dict[str, Any]:
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
    if getattr(result, "liveness", None) is not None or result.violations:
        from checker.liveness.report import patch_summary  # lassos, the liveness section
        patch_summary(out, result)
    out["report"] = "report.html"
    out["sometimes"] = {name: {"witnessed": d is not None, "depth": d}
                        for name, d in result.sometimes.items()}
    out["properties_checked"] = list(result.properties)
    out["config"] = {**config, "engine": engine}
    out["expect"] = dict(expect or {})
    out["run_id"] = run_id
    out["kmc_version"] = KMC_VERSION
    return out


def _model_of(summary_obj: dict):
    """The run's model, rebuilt from the summary's configuration (None if it
    cannot be: the generic trace rendering is used then)."""
    from checker import registry
    config = summary_obj.get("config") or {}
    try:
        return registry.build(config["model"], config.get("variant"), config.get("constants") or {})[0]
    except Exception:
        return None


def write_run(root: Path, spec_name: str, summary_obj: dict, result: CheckResult,
              model=None) -> Path:
    """Write the run's files; returns the run directory. `model`: the model
    checked (rebuilt from the summary's configuration when not given), whose
    trace view renders the counterexamples.

    A view that fails to render a page or the ITF does not lose the run: the
    error is recorded in summary.json under "render_errors" (and in
    summary_obj, for the caller to show)."""
    from checker import traces
    from checker.report import run_report

    if model is None and result.violations:
        model = _model_of(summary_obj)
    spec_dir = Path(root) / spec_name
    spec_dir.mkdir(parents=True, exist_ok=True)
    run_id = summary_obj["run_id"]
    final = spec_dir / run_id
    tmp_dir = Path(tempfile.mkdtemp(dir=spec_dir, prefix=f".{run_id}.", suffix=".partial"))
    try:
        os.chmod(tmp_dir, 0o777 & ~_umask())  # mkdtemp creates 0700
        errors = []
        for v in result.violations:
            names = traces.file_names(v.property)
            if hasattr(v, "loop"):  # a temporal property's lasso (checker/liveness)
                from checker.liveness.report import write_lasso
                errors += write_lasso(tmp_dir, v, model, summary_obj, write_atomic, names)
                continue
            write_atomic(tmp_dir / names["json"],
                         json.dumps(trace_json(v.property, v.trace), indent=1) + "\n")
            write_atomic(tmp_dir / names["text"], trace_text(v.property, v.trace, model=model))
            if model is None:
                errors.append(f"{v.property}: the model could not be rebuilt; no ITF / HTML")
                continue
            try:
                itf_obj = traces.render_itf(model, v.property, v.trace, summary_obj)
                write_atomic(tmp_dir / names["itf"], json.dumps(itf_obj, indent=1) + "\n")
                write_atomic(tmp_dir / names["html"], traces.render_html(model, v.property, v.trace,
                                                                         summary_obj))
            except Exception as e:  # a rendering bug must not cost the run's results
                errors.append(f"{v.property}: {type(e).__name__}: {e}")
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
