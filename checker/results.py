"""What a run leaves behind: results/<spec-name>/<run-id>/ with summary.json
and, per violated property, its shortest counterexample as JSON and as text.

Files are written atomically (a temp file in the same directory, then
os.replace), into a hidden temp directory renamed into place at the end, so
an interrupted run leaves no half-written file and no half-written run.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
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
                          "trace_text": f"trace-{v.property}.txt"} for v in result.violations]
    out["sometimes"] = {name: {"witnessed": d is not None, "depth": d}
                        for name, d in result.sometimes.items()}
    out["properties_checked"] = list(result.properties)
    out["config"] = {**config, "engine": engine}
    out["expect"] = dict(expect or {})
    out["run_id"] = run_id
    out["kmc_version"] = KMC_VERSION
    return out


def write_run(root: Path, spec_name: str, summary_obj: dict, result: CheckResult) -> Path:
    """Write the run's files; returns the run directory."""
    spec_dir = Path(root) / spec_name
    spec_dir.mkdir(parents=True, exist_ok=True)
    run_id = summary_obj["run_id"]
    final = spec_dir / run_id
    tmp_dir = Path(tempfile.mkdtemp(dir=spec_dir, prefix=f".{run_id}.", suffix=".partial"))
    try:
        os.chmod(tmp_dir, 0o777 & ~_umask())  # mkdtemp creates 0700
        for v in result.violations:
            write_atomic(tmp_dir / f"trace-{v.property}.json",
                         json.dumps(trace_json(v.property, v.trace), indent=1) + "\n")
            write_atomic(tmp_dir / f"trace-{v.property}.txt", trace_text(v.property, v.trace))
        write_atomic(tmp_dir / "summary.json", json.dumps(summary_obj, indent=1) + "\n")
        os.replace(tmp_dir, final)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise
    return final
