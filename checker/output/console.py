"""The run as the console shows it: TLC's report (counterexamples through the
model's trace view, one per distinct trace, then the figures)."""
from __future__ import annotations

from pathlib import Path

from checker.output.lasso import is_lasso, lasso_text, liveness_lines
from checker.output.render import steps, trace_text
from checker.search.engine import CheckResult
from model.view import TraceView


def same_trace_groups(violations: list) -> list[list]:
    """Violations grouped by identical counterexample (several properties
    broken by one trace are shown once, every property named), in order."""
    groups: list[list] = []
    for v in violations:
        home = next((g for g in groups if not hasattr(v, "loop") and not hasattr(g[0], "loop")
                     and len(g[0].trace) == len(v.trace) and g[0].trace == v.trace), None)
        if home is None:
            groups.append([v])
        else:
            home.append(v)
    return groups


def report_text(spec, result: CheckResult, run_dir: Path | None, view: TraceView | None = None,
                total_s: float | None = None, full_state: bool = False) -> str:
    """The TLC-like human report (counterexamples through the model's trace
    view, when given). total_s: the command's time from its start (set-up
    included); full_state: state 0 with every variable (the trace files
    always have it)."""
    lines = []
    for group in same_trace_groups(result.violations):
        v = group[0]
        lines.append(lasso_text(v, view) if is_lasso(v) else trace_text(
            v.property, v.trace, view=view, full_initial=full_state,
            also=[o.property for o in group[1:]]))
    failure = getattr(result, "error", None)
    if failure is not None and failure.trace:
        lines.append(trace_text(failure.property, failure.trace, header=failure.header, view=view,
                                full_initial=full_state))
    if result.outcome == "pass":
        bound = "" if result.exhausted else f" (within {steps(result.max_depth)})" \
            if result.max_depth is not None else ""
        lines.append(f"Model checking completed{bound}. No error has been found.")
    lines.append("  Estimate of the probability that two distinct states had the same "
                 f"fingerprint (TLC's optimistic): {result.collision_probability:.2g}")
    lines.append(f"{result.generated:,} states generated, {result.distinct:,} distinct states found, "
                 f"{result.states_left:,} states left on queue.")
    lines.append(f"Depth: {steps(result.depth)}; distinct states per level: {result.per_level_distinct}")
    width = max((len(n) for n in result.per_action_generated), default=0)
    lines.append("Coverage (action: generated / distinct):")
    for name, gen in result.per_action_generated.items():
        lines.append(f"  {name:<{width}}  {gen:>12,} / {result.per_action_distinct.get(name, 0):,}")
    lines.extend(liveness_lines(result))
    expected = set((spec.expect or {}).get("sometimes", ())) if spec is not None else set()
    for name, d in result.sometimes.items():
        lines.append(f"Sometimes {name}: " + (f"witnessed after {steps(d)}" if d is not None
                                              else "NEVER witnessed")
                     + (" (expected: expect.sometimes)" if name in expected else ""))
    for name in sorted(expected):
        if result.sometimes.get(name) is None:
            lines.append(f"Expected witness {name} was never reached: the fault it shows did not "
                         f"happen, so this verdict may be vacuous (kmc regress fails the spec).")
    if total_s is None:
        took = f"{result.wall_time:.2f}s"
    elif result.wall_time > total_s:  # resumed: the search time counts the earlier runs too
        took = f"{total_s:.2f}s here ({result.wall_time:.2f}s of search in all, with the runs resumed)"
    else:
        took = f"{total_s:.2f}s ({total_s - result.wall_time:.2f}s set-up, {result.wall_time:.2f}s search)"
    lines.append(f"Finished in {took}: {result.generated_per_second:,.0f} generated/s, "
                 f"{result.distinct_per_second:,.0f} distinct/s, peak memory {result.peak_memory_kb / 1024:,.0f} MiB"
                 f"{_processes(result)} ({result.bytes_per_state:,} bytes/state).")
    where = _spark_levels(result)
    if where:
        lines.append(where)
    if run_dir is not None:
        lines.append(f"Results: {run_dir}")
    return "\n".join(lines)


def _spark_levels(result) -> str:
    """Where a spark run's levels ran: the driver runs the first ones while
    Spark's JVM starts, so a small space never reaches Spark's executors."""
    eng = result.engine if isinstance(getattr(result, "engine", None), dict) else {}
    if eng.get("name") != "spark" or "executor_levels" not in eng:
        return ""
    here, there = eng.get("driver_levels", 0), eng["executor_levels"]
    if not there:
        return (f"Spark's executors ran no level: the driver ran all {here} while Spark's JVM "
                f"started (a state space this small ends first; docs/engines.md).")
    return f"Levels: {here} in the driver while Spark's JVM started, {there} on Spark's executors."


def _processes(result) -> str:
    """The words " in 3 processes" when the run had more than one (the figure is their PSS summed)."""
    n = (result.memory or {}).get("processes", 1)
    return f" in {n} processes" if n > 1 else ""
