"""`kmc simulate SPEC`: random walks (checker/search/simulate.py), a violation shrunk
to 1-minimal (checker/search/shrink.py), on every core (the default engine
auto: checker/search/simulate_pool.py), in this process (local) or as a Spark
swarm (checker/search/spark/swarm.py). Temporal properties (the spec's
`properties`, or --property) are checked on the lassos the walks close
(checker/search/liveness/walks.py), a violation reported as a lasso whose
prefix is shrunk (docs/liveness.md). Listed in checker/front/cli.py.

A spec may hold a [simulate] table, its defaults for `kmc simulate` (the
command line wins; --walks or --time given there replace both of the
spec's):

    [simulate]
    walks = 2000                 # stop after this many walks
    time = 60                    # or after this many seconds (whichever first)
    depth = 100                  # steps per walk at most (the spec's `depth` is BFS's bound)
    seed = 7                     # default: drawn at random, printed and in summary.json
    swarm = false                # each batch of walks its own action weights
    weights = { PowerLoss = 0.1, BackgroundFlush = 0.1 }   # per action; others weigh 1

A [simulate] table also makes the spec a simulation spec for `kmc regress`,
whose [expect] then says `violated` (and `depth`: the steps of the shrunk
counterexample) with `within_s` (the violation must be found within that
many seconds of walking), or `outcome = "pass"` with `min_walks` (that many
walks without a violation); `sometimes` and `quick` as for any spec. The
run's seed is the spec's (0 if it names none), so the run is reproducible.

Exit codes as `kmc check`: 0 nothing violated, 1 a property violated, 2 bad
input (one `kmc: error:` line), 3 a model evaluation error.
"""
from __future__ import annotations

import json
import secrets
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from checker.front.expect import unreached_witnesses, witness_problems
from checker.front.options import DEFAULT_MEMORY, OutPath, SizeType, default_max_memory
from checker.output.render import steps, trace_json, trace_text
from checker.output.results import ensure_writable, write_run_into
from checker.output.views import view_for
from checker.search.core import CheckOptions
from checker.search.result import DEADLOCK, CheckResult, Violation, assemble
from checker.search.proc import TreeMemory
from checker.search.errors import EXIT_OK, EXIT_VIOLATION, KmcError, SpecError
from checker.search.simulate import DEFAULT_DEPTH, DEFAULT_WALKS, Limits, SimConfig, Totals, check_weights
from model.base import ModelConfigError


def is_simulate_spec(path: Path) -> bool:
    """A spec with a [simulate] table (a `kmc regress` simulation row)."""
    try:
        with open(path, "rb") as f:
            return isinstance(tomllib.load(f).get("simulate"), dict)
    except (OSError, ValueError):  # TOMLDecodeError, UnicodeDecodeError: load_spec reports it
        return False


def load(path: Path, sets: dict | None = None, invariants: list | None = None,
         properties: list | None = None, fairness=None):
    """(spec, settings) of a spec to simulate; SpecError for what cannot be.
    Temporal properties (the spec's, or `properties` from --property) are
    checked as `kmc check` checks them (checker/front/temporal_spec.py), the
    spec's BFS depth bound aside: walks have their own."""
    from checker.front.spec import load_spec
    spec = load_spec(path, sets, depth=None, invariants=list(invariants or []),
                     properties=list(properties or []) or None, fairness=fairness)
    return spec, spec.simulate


def liveness_of(spec):
    """The spec's checked LivenessConfig (None: no temporal property)."""
    from checker.front import temporal_spec
    return temporal_spec.validate(spec) if spec.properties else None


def sim_config(spec, model, properties, depth: int, seed: int, weights: dict, swarm: bool,
               check_deadlock: bool) -> SimConfig:
    from checker.search.engine import resolve_projection
    projection = resolve_projection(model, spec.projection)
    live = liveness_of(spec)
    return SimConfig(model=spec.model, variant=spec.variant,
                     constants_json=json.dumps(spec.constants, sort_keys=True),
                     properties=tuple(p.name for p in properties), projection=projection,
                     bits=spec.fingerprint_bits, depth=depth, check_deadlock=check_deadlock,
                     seed=seed, weights=check_weights(weights, model.action_names, "weights"),
                     swarm=swarm,
                     temporal=tuple(p.name for p in live.properties) if live else (),
                     fairness=tuple(live.fairness) if live else ())


# ---- a run ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    """A finished simulation: the CheckResult-like result (for write_run and
    the reports), the totals, the violating walk and its shrinking."""

    result: CheckResult
    totals: Totals
    walk: list | None = None            # the violating walk as walked
    shrink: Any = None                  # checker.search.shrink.ShrinkResult
    time_to_violation: float | None = None
    walk_seconds: float = 0.0
    engine: str = "local"
    startup_s: float | None = None


def simulate(spec, cfg: SimConfig, limits: Limits, *, engine: str = "local", master: str | None = None,
             log_dir: Path | None = None, progress=None, progress_interval: float = 5.0,
             shrink: bool = True, shrink_time: float | None = None, driver_walks: bool = True) -> Outcome:
    """Walk, then walk the first violation again and shrink it. A Spark
    start that failed after the driver finished alone raises with the
    Outcome on the error (e.result)."""
    from checker.search.simulate import walk_trace, walker
    late = None
    t0 = time.time()
    if engine == "spark":
        from checker.search.spark.errors import ExecutorSetupError, SparkUnavailableError
        from checker.search.spark.swarm import SwarmRun
        run = SwarmRun(cfg, limits, master=master, log_dir=log_dir, progress=progress,
                       progress_interval=progress_interval, driver_walks=driver_walks)
        try:
            totals = run.run()
        except (SparkUnavailableError, ExecutorSetupError) as e:
            if getattr(e, "result", None) is None:
                raise
            totals, late = e.result, e
        startup = run.startup_s
    elif engine == "auto":
        from checker.search.simulate_pool import simulate_pool
        totals = simulate_pool(cfg, limits, progress=progress, progress_interval=progress_interval)
        startup = None
    else:
        from checker.search.simulate import Totals, simulate_local
        totals = Totals(cfg, walker(cfg).action_names)
        try:
            simulate_local(cfg, limits, progress, progress_interval, totals)
        except KeyboardInterrupt as e:   # the walks so far, for the line that sums them up
            e.totals = totals
            raise
        startup = None
    walk_seconds = time.time() - t0
    out = Outcome(result=None, totals=totals, walk_seconds=walk_seconds, engine=engine, startup_s=startup)
    violation = None
    v = totals.violation
    if v is not None and v.get("kind") == "lasso":
        out.time_to_violation = v["at"] - totals.started
        out.walk = walk_trace(cfg, v["walk"])
        violation = _lasso(spec, cfg, out, v, shrink, shrink_time)
    elif v is not None:
        out.time_to_violation = v["at"] - totals.started
        out.walk = walk_trace(cfg, v["walk"])
        trace = out.walk
        if shrink:
            from checker.search.shrink import shrink as shrink_trace
            w = walker(cfg)
            if v["property"] == DEADLOCK:
                def violates(s):
                    return not list(w.model.successors(s))
            else:
                pred = next(p for name, p, _ in w.always if name == v["property"])

                def violates(s):
                    return not pred(s)
            out.shrink = shrink_trace(w.model, trace, violates, shrink_time)
            trace = out.shrink.trace
        violation = Violation(v["property"], len(trace) - 1, trace)
    out.result = _result(spec, cfg, totals, violation, walk_seconds)
    out.result.liveness = liveness_section(spec, cfg, totals, violation)
    if late is not None:
        late.result = out
        raise late
    return out


def _lasso(spec, cfg: SimConfig, out: Outcome, v: dict, shrink: bool, shrink_time):
    """The walk's lasso as a LassoViolation, its prefix shrunk to 1-minimal
    (a shorter path to the cycle's first state with the lasso still a fair
    violation of the instance); the cycle is kept as walked."""
    from checker.search.liveness.lasso import LassoViolation, bound_stops
    from checker.search.liveness.walks import lasso_holds
    from checker.search.simulate import walker
    w = walker(cfg)
    trace, loop = out.walk, v["loop"]
    prefix, cycle = trace[:loop + 1], trace[loop + 1:]
    name, label = v["property"], v["instance"]
    if shrink:
        from checker.search.shrink import shrink as shrink_trace
        target = prefix[-1][1]

        def accept(candidate):
            return lasso_holds(w.live, candidate + cycle, len(candidate) - 1, w.model, name, label)
        out.shrink = shrink_trace(w.model, prefix, lambda s: s == target, shrink_time, accept)
        prefix = out.shrink.trace
    trace = prefix + cycle
    loop = len(prefix) - 1
    prop = next(p for p, _ in w.live.plan if p.name == name)
    inst = next(i for i in prop.instances if i.label == label)
    unfair = []
    if loop == len(trace) - 1:   # stuttering: what could still happen, unforced
        state = trace[loop][1]
        unfair = list(dict.fromkeys(str(a) for a, s in w.model.successors(state)
                                    if a.name not in w.live.kinds and s != state))
    bounds, bounded = bound_stops(w.model, trace, loop, {a for _, a in cfg.fairness})
    return LassoViolation(name, len(trace) - 1, trace, loop=loop, instance=label,
                          headline=prop.headline(inst.param, trace[loop][1]), form=prop.form,
                          fairness=[f"{k}:{a}" for k, a in cfg.fairness], enabled_unfair=unfair,
                          bounds=bounds, bounded=bounded)


def liveness_section(spec, cfg: SimConfig, totals: Totals, violation) -> dict | None:
    """summary.json's `liveness` for a simulation: per property, violated
    (a lasso) or not found violated by the walks."""
    if not cfg.temporal:
        return None
    from checker.front.temporal_spec import temporal_of
    model, _ = spec.build()
    temporal = temporal_of(model)
    props = {}
    for name in cfg.temporal:
        hit = violation is not None and getattr(violation, "loop", None) is not None \
            and violation.property == name
        props[name] = {"verdict": "violated" if hit else "no violation found",
                       "form": temporal[name].form}
    return {"mode": "simulate", "checked": True, "fairness": [f"{k}:{a}" for k, a in cfg.fairness],
            "fairness_spec": spec.fairness if spec.fairness is not None else "reference",
            "walks_closing_a_cycle": totals.closed, "properties": props}


def _result(spec, cfg: SimConfig, totals: Totals, violation: Violation | None, wall: float) -> CheckResult:
    model, props = spec.build()
    sometimes = {p.name: None for p in props if p.kind == "sometimes"}
    for name, (d, _) in totals.witnesses.items():
        sometimes[name] = d
    options = CheckOptions(max_depth=cfg.depth, check_deadlock=cfg.check_deadlock, fingerprint_bits=cfg.bits)
    # (the walks keep little: the run's processes at its end, Spark's JVMs included)
    return assemble(model, options, cfg.projection, violations=[violation] if violation else [],
                    distinct=totals.distinct, generated=totals.generated,
                    per_level_distinct=totals.per_depth_distinct,
                    per_action_generated=totals.per_action_generated,
                    per_action_distinct=totals.per_action_distinct, sometimes=sometimes,
                    properties=[p.name for p in props if p.kind == "always"], states_left=0,
                    exhausted=False, wall_time=wall, memory=TreeMemory(),
                    depth=max(totals.lengths, default=0),
                    collision_generated=totals.generated + totals.walks)


def simulation_section(out: Outcome, cfg: SimConfig, limits_walks, limits_time) -> dict:
    """summary.json's "simulate" object."""
    t = out.totals
    wall = out.walk_seconds
    lengths = t.lengths
    sec: dict = {
        "seed": cfg.seed, "walks": t.walks, "steps": t.steps, "depth_bound": cfg.depth,
        "walks_limit": limits_walks, "time_limit_s": limits_time,
        "weights": dict(cfg.weights), "swarm": cfg.swarm, "batch_walks": cfg.batch_walks,
        "walk_s": round(wall, 3),
        "steps_per_s": round(t.steps / wall, 1) if wall > 0 else 0.0,
        "walks_per_s": round(t.walks / wall, 2) if wall > 0 else 0.0,
        "walk_lengths": {str(k): lengths[k] for k in sorted(lengths)},
        "walks_at_depth_bound": lengths.get(cfg.depth, 0),
        "walks_deadlocked": t.deadlocks, "walks_stuck": t.stuck,
        "per_action_taken": {n: t.per_action_taken.get(n, 0) for n in out.result.per_action_generated},
        "per_depth_distinct": list(t.per_depth_distinct),
        "witnessed_walks": {n: w[1] for n, w in t.witnesses.items()},
        "batches": dict(t.where),
    }
    if out.startup_s is not None:
        sec["spark_startup_s"] = round(out.startup_s, 3)
    if t.violation is not None:
        v = t.violation
        sec["first_violation"] = {"walk": v["walk"], "batch": v["walk"] // cfg.batch_walks,
                                  "property": v["property"], "walk_steps": v["depth"],
                                  "time_to_violation_s": round(out.time_to_violation, 3)}
        if out.shrink is not None:
            sec["shrink"] = out.shrink.statistics()
    return sec


def summary_object(spec, cfg: SimConfig, out: Outcome, run_id: str, limits_walks, limits_time,
                   check_deadlock: bool) -> dict:
    from checker.output.results import summary
    config = spec.config()
    config["check_deadlock"] = check_deadlock
    config["stop_on_violation"] = True
    obj = summary(config, out.result, run_id=run_id, expect=spec.expect, engine=out.engine)
    obj["config"]["mode"] = "simulate"
    head = {k: obj.pop(k) for k in ("outcome", "violated", "depth")}
    t = out.totals
    return {**head, "walks": t.walks, "steps": t.steps, "seed": cfg.seed, "distinct": obj.pop("distinct"), **obj,
            "simulate": simulation_section(out, cfg, limits_walks, limits_time)}


def write_walks(run_dir: Path, out: Outcome, view) -> None:
    """The violating walk as walked, beside the shrunk trace files."""
    from checker.search.files import write_atomic
    if out.walk is None or out.shrink is None:
        return
    name = out.result.violations[0].property
    write_atomic(run_dir / f"walk-{name}.json", json.dumps(trace_json(name, out.walk), indent=1) + "\n")
    write_atomic(run_dir / f"walk-{name}.txt",
                 trace_text(name, out.walk, header=f"The walk as walked ({steps(len(out.walk) - 1)}), "
                                                   f"before shrinking.", view=view))


# ---- text --------------------------------------------------------------------------------

def interrupted_line(totals) -> str:
    """What a stopped simulation did: its walks, steps and states, and that
    none of them violated a property (a violation ends the walks at once)."""
    p = totals.progress()
    return (f"kmc: stopped after {p['walks']:,} walks ({p['steps']:,} steps, {p['distinct']:,} "
            f"distinct states, deepest {steps(p['depth'])}, {p['elapsed_s']:.1f}s): no property "
            f"violated in them; nothing written")


def progress_line(info: dict) -> None:
    where = ", ".join(f"{n} {k}" for k, n in sorted(info.get("where", {}).items()) if k != "local")
    click.echo(f"kmc: simulate: {info['walks']:,} walks, {info['steps']:,} steps "
               f"({info['steps_per_s']:,.0f} steps/s, {info['walks_per_s']:,.1f} walks/s), "
               f"{info['distinct']:,} distinct, deepest walk {steps(info['depth'])}, "
               f"{info['actions_taken']}/{info['actions']} actions taken, "
               f"{info['elapsed_s']:.0f}s" + (f" (batches: {where})" if where else ""), err=True)


def report_text(spec, cfg: SimConfig, out: Outcome, run_dir: Path | None, view, total_s: float) -> str:
    from checker.output.lasso import is_lasso, lasso_text
    r, t = out.result, out.totals
    lines = []
    for v in r.violations:
        lines.append(lasso_text(v, view) if is_lasso(v) else trace_text(v.property, v.trace, view=view))
    wall = out.walk_seconds
    if r.outcome == "pass":
        lines.append(f"Simulation completed: {t.walks:,} walks of at most {steps(cfg.depth)}. "
                     f"No error has been found.")
    lines.append(f"Seed {cfg.seed}: {t.walks:,} walks, {t.steps:,} steps, {t.distinct:,} distinct states "
                 f"in {wall:.2f}s ({t.steps / wall if wall > 0 else 0:,.0f} steps/s, "
                 f"{t.walks / wall if wall > 0 else 0:,.1f} walks/s)"
                 + (f"; swarm: each batch of {cfg.batch_walks} walks its own action weights" if cfg.swarm else "")
                 + ".")
    if t.violation is not None:
        v = t.violation
        text = (f"First violation: {v['property']} on walk {v['walk']} after {steps(v['depth'])}, "
                f"{out.time_to_violation:.2f}s into the walks")
        if out.shrink is not None:
            s = out.shrink
            text += (f"; shrunk to {steps(s.steps)} in {s.seconds:.2f}s ({s.replays:,} candidates replayed"
                     + (", 1-minimal" if s.minimal else ", stopped by --shrink-time: not certified 1-minimal")
                     + ")")
        lines.append(text + ".")
    if cfg.temporal:
        lines.append(liveness_line(cfg, out))
    ends = [f"{t.lengths.get(cfg.depth, 0):,} at the depth bound", f"{t.deadlocks:,} without successors"]
    if t.stuck:
        ends.append(f"{t.stuck:,} with only weight-0 actions enabled")
    if t.cut:
        ends.append(f"{t.cut:,} cut short by --time")
    mean = t.steps / t.walks if t.walks else 0
    lines.append(f"Walks: {mean:.1f} steps on average, the longest {steps(max(t.lengths, default=0))}; "
                 f"ended: {', '.join(ends)}.")
    per_depth = list(t.per_depth_distinct)
    while len(per_depth) > 1 and per_depth[-1] == 0:
        per_depth.pop()
    if len(per_depth) > 40:   # a long walk: the first and the last depths, not a line of megabytes
        shown = (", ".join(map(str, per_depth[:30])) + f", ... ({len(per_depth) - 40:,} depths) ..., "
                 + ", ".join(map(str, per_depth[-10:])))
        lines.append(f"Distinct states per depth (new, in walk order; {len(per_depth):,} depths): [{shown}]")
    else:
        lines.append(f"Distinct states per depth (new, in walk order): {per_depth}")
    width = max((len(n) for n in r.per_action_generated), default=0)
    lines.append("Coverage (action: enabled / taken / new distinct):")
    for name, gen in r.per_action_generated.items():
        lines.append(f"  {name:<{width}}  {gen:>12,} / {t.per_action_taken.get(name, 0):>10,} / "
                     f"{r.per_action_distinct.get(name, 0):,}")
    expected = set((spec.expect or {}).get("sometimes", ()))
    for name, d in r.sometimes.items():
        n = t.witnesses.get(name, [None, 0])[1]
        lines.append(f"Sometimes {name}: " + (f"witnessed in {n:,} walk{'s' if n != 1 else ''} "
                                              f"(first after {steps(d)})"
                                              if d is not None else "NEVER witnessed")
                     + (" (expected: expect.sometimes)" if name in expected else ""))
    lines.append(f"Finished in {total_s:.2f}s, peak memory {r.peak_memory_kb / 1024:,.0f} MiB.")
    if run_dir is not None:
        lines.append(f"Results: {run_dir}")
    return "\n".join(lines)


def liveness_line(cfg: SimConfig, out: Outcome) -> str:
    t, r = out.totals, out.result
    fair = ", ".join(f"{k}:{a}" for k, a in cfg.fairness) or "no fairness"
    head = f"Temporal properties {', '.join(cfg.temporal)} under {fair}: "
    lasso = next((v for v in r.violations if getattr(v, "loop", None) is not None), None)
    if lasso is not None:
        shape = (f"stuttering after {lasso.prefix_steps} steps" if lasso.stuttering
                 else f"prefix {lasso.prefix_steps} steps, cycle {lasso.cycle_steps} steps")
        return head + f"{lasso.property} VIOLATED by a fair lasso ({shape}; checked by replay)."
    return (head + f"no fair lasso violates them; {t.closed:,} of {t.walks:,} walks closed a cycle "
            f"(every state was also tried as a stuttering end). Walks prove no temporal property: "
            f"a behaviour they did not close may violate it (docs/liveness.md).")


# ---- the command ---------------------------------------------------------------------------

class DurationType(click.ParamType):
    """--time T: seconds (90, 1.5) or with a unit (90s, 2m, 1h); more than 0."""

    name = "SECONDS"
    _UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
            t = value
        else:
            import re
            m = re.fullmatch(r"\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*([smh]?)\s*", str(value).lower())
            if m is None:
                self.fail(f"--time expects seconds (90, 1.5) or 90s, 2m, 1h, not {value!r}", param, ctx)
            t = float(m.group(1)) * self._UNITS[m.group(2)]
        if t is not None and not t > 0:
            self.fail(f"--time must be more than 0 seconds, not {value!r}", param, ctx)
        return t


@click.command("simulate")
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--walks", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Stop after N walks (default: the spec's [simulate], else {DEFAULT_WALKS:,} "
                   f"unless --time is given).")
@click.option("--time", "time_s", type=DurationType(), default=None, metavar="SECONDS",
              help="Stop after this long (90, 90s, 2m, 1h); with --walks, whichever comes first.")
@click.option("--depth", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Steps per walk at most (default: the spec's [simulate] depth, else {DEFAULT_DEPTH}).")
@click.option("--seed", type=int, default=None, metavar="S",
              help="The run's seed (an integer): the same seed walks the same walks, on either engine "
                   "(default: the spec's, else drawn at random and printed).")
@click.option("--swarm/--no-swarm", default=None,
              help="Swarm verification: each batch of walks its own action weights, drawn from the run's seed.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a constant; VALUE is a TOML value: 3, false, '\"A\"', '[\"A\", \"B\"]'.")
@click.option("--invariant", "-i", "invariants", multiple=True, metavar="NAME",
              help="Check this invariant (repeatable; replaces the spec's `invariants`).")
@click.option("--deadlock/--no-deadlock", "deadlock", default=None,
              help="A state without successors is a violation (default: the spec's check_deadlock).")
@click.option("--property", "temporal", multiple=True, metavar="NAME",
              help="Check this temporal property on the walks' lassos (repeatable; replaces the spec's "
                   "`properties`), under the spec's fairness (or --fairness).")
@click.option("--fairness", "fairness", multiple=True, metavar="WF:ACTION|SF:ACTION|reference|none",
              help="The fairness of the temporal properties (repeatable, or comma-separated; "
                   "replaces the spec's `fairness`), as kmc check's.")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="auto: the walks spread over every core; local: in this process alone; spark: over "
                   "Spark executors. The same seed and --walks give the same answer on each.")
@click.option("--master", default=None, metavar="URL",
              help="Spark master for --engine spark: local[*] (embedded, the default), local[N] or "
                   "spark://HOST:PORT.")
@click.option("--max-memory", "max_memory", type=SizeType(), default=DEFAULT_MEMORY, metavar="SIZE|none",
              help="Stop (exit 2) when a walking process's resident memory passes SIZE (8G, 500M), "
                   "read between walks and every 4,096 steps of a walk (the local and auto "
                   "engines); default: 85% of the machine's memory, shared among the walking "
                   "processes; 'none': no limit.")
@click.option("--no-shrink", "no_shrink", is_flag=True, help="Write the violating walk as walked.")
@click.option("--shrink-time", type=DurationType(), default=None, metavar="SECONDS",
              help="Stop shrinking after this long (the trace is then not certified 1-minimal).")
@click.option("--out", "out_dir", type=OutPath(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="Results root directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def simulate_cmd(spec_path: Path, walks, time_s, depth, seed, swarm, sets, invariants, deadlock, temporal,
                 fairness, engine, master, max_memory, no_shrink, shrink_time, out_dir: Path, as_json: bool,
                 quiet: bool) -> int:
    """Walk SPEC at random from its initial states, check every state, shrink a violation to 1-minimal."""
    from checker.output.results import write_run
    from checker.search.files import new_run_id
    from checker.front.spec import parse_sets
    from checker.front import options as front_options
    started = (front_options.PROCESS_STARTED if front_options.PROCESS_STARTED is not None
               else time.perf_counter())
    if engine != "spark" and master:
        raise SpecError("--master needs --engine spark")
    if no_shrink and shrink_time is not None:
        raise SpecError("--shrink-time has no effect with --no-shrink")
    from checker.front.temporal_spec import fairness_option
    spec, st = load(spec_path, parse_sets(sets), list(invariants), list(temporal),
                    fairness_option(fairness) if fairness else None)
    model, properties = spec.build()
    if walks is None and time_s is None:
        walks, time_s = st.walks, st.time
        if walks is None and time_s is None:
            walks = DEFAULT_WALKS
    depth_given, seed_given = depth, seed
    depth = depth or st.depth or DEFAULT_DEPTH
    if seed is None:
        seed = st.seed if st.seed is not None else secrets.randbelow(1 << 31)
    check_deadlock = spec.check_deadlock if deadlock is None else deadlock
    cfg = sim_config(spec, model, properties, depth, seed, st.weights,
                     st.swarm if swarm is None else swarm, check_deadlock)
    from checker.front.spec import bounded_liveness_line
    bounded = bounded_liveness_line(model, cfg.temporal)
    if bounded is not None:
        click.echo(f"kmc: warning: {bounded}", err=True)
    ensure_writable(out_dir)  # fail before a long run, not after it
    stop = " or ".join(x for x in ((f"{walks:,} walks" if walks else ""),
                                   (f"{time_s:g}s" if time_s else "")) if x)
    if not quiet:  # (a progress line: with -q, bad input found later is the only line)
        click.echo(f"kmc: simulating {spec_path} (model {spec.model}/{spec.variant}, walks of at most "
                   f"{steps(depth)} until {stop}, {len(properties)} properties"
                   + (f", {len(cfg.temporal)} temporal" if cfg.temporal else "") + f", seed {seed}, engine {engine}"
                   + (", swarm" if cfg.swarm else "") + (", weighted" if cfg.weights else "") + ")", err=True)
    run_id = new_run_id()
    spark_dir = None
    if engine == "spark":  # its folder first: spark.log goes there
        spark_dir = out_dir / spec.name / run_id
        spark_dir.mkdir(parents=True, exist_ok=True)
    if max_memory is DEFAULT_MEMORY:   # the machine's share, over the walking processes
        from checker.search.parallel import cores
        total = default_max_memory()
        max_memory = total // (cores() if engine == "auto" else 1) if total else None
    limits = Limits(walks=walks, deadline=time.time() + time_s if time_s else None,
                    max_memory=max_memory)
    late = None
    try:
        outcome = simulate(spec, cfg, limits, engine=engine, master=master, log_dir=spark_dir,
                           progress=None if quiet else progress_line, shrink=not no_shrink,
                           shrink_time=shrink_time)
    except BaseException as e:  # an error, ^C: no result, no run folder (its spark.log goes too)
        if isinstance(e, KeyboardInterrupt) and getattr(e, "totals", None) is not None:
            click.echo(interrupted_line(e.totals), err=True)
        if not isinstance(e, KmcError) or getattr(e, "result", None) is None:
            if spark_dir is not None:
                import shutil
                shutil.rmtree(spark_dir, ignore_errors=True)
            raise
        outcome, late = e.result, e
    obj = summary_object(spec, cfg, outcome, run_id, walks, time_s, check_deadlock)
    # (an option equal to the spec's own is no change: a trace's reproduce line names them all)
    from checker.front.spec import read_toml
    own_props = read_toml(spec_path, "spec").get("properties") or ()
    changed = [o for o, v, own in (("--set", sets, ()), ("--invariant", invariants, ()),
                                   ("--property", temporal if set(temporal) != set(own_props) else (), ()),
                                   ("--fairness", fairness, ()),
                                   ("--depth", depth_given, st.depth or DEFAULT_DEPTH),
                                   ("--seed", seed_given, st.seed),
                                   ("--swarm/--no-swarm", swarm, bool(st.swarm)),
                                   ("--deadlock/--no-deadlock", deadlock, spec.check_deadlock))
               if v not in (None, ()) and v != own]
    if spec.expect and changed:
        obj["expect_note"] = ("Not compared with [expect]: the command line changed the spec ("
                              + ", ".join(changed) + ").")
    elif spec.expect:
        _, problems = compare_expect(spec.expect, outcome)
        obj["expect_met"], obj["expect_problems"] = not problems, problems
    view = view_for(model)  # once, for the files and the console
    try:
        if spark_dir is not None:
            run_dir = write_run_into(spark_dir, obj, outcome.result, view=view)
        else:
            run_dir = write_run(out_dir, spec.name, obj, outcome.result, view=view)
        write_walks(run_dir, outcome, view)
    except OSError as e:   # (a full disk): the result is still shown, then this error
        late = SpecError(f"cannot write results under {out_dir}: {e}; the result is shown above, "
                         f"not kept")
        run_dir = None
    obj["results_dir"] = str(run_dir) if run_dir is not None else None
    for error in obj.get("render_errors", ()):
        click.echo(f"kmc: warning: not rendered: {error}", err=True)
    total_s = time.perf_counter() - started
    obj["total_time_s"] = round(total_s, 3)
    text = report_text(spec, cfg, outcome, run_dir, view, total_s)
    if "expect_met" in obj:
        text += ("\nThe run matches the spec's [expect]." if obj["expect_met"] else
                 "\nThe run does NOT match the spec's [expect]: " + "; ".join(obj["expect_problems"]) + ".")
    elif "expect_note" in obj:
        text += "\n" + obj["expect_note"]
    click.echo(text, file=sys.stderr if as_json else sys.stdout)
    if as_json:
        click.echo(json.dumps(obj, sort_keys=False))
    if late is not None:
        late.after_summary = True
        raise late
    return EXIT_VIOLATION if outcome.result.violations else EXIT_OK




# ---- kmc regress: a simulation spec is a row ---------------------------------------------------

def describe_expect(expect: dict) -> str:
    wanted = expect.get("violated")
    if wanted:
        text = wanted if isinstance(wanted, str) else "+".join(wanted)
        text += f" @{expect['depth']}" if "depth" in expect else ""
        if "within_s" in expect:
            text += f" within {expect['within_s']:g}s"
    else:
        text = expect.get("outcome", "?")
        if "min_walks" in expect:
            text += f", {expect['min_walks']:,} walks"
    if expect.get("sometimes"):
        n = len(expect["sometimes"])
        text += f", {n} witness{'es' if n > 1 else ''}"
    return text + " (simulated)"


def regress_row(path: str, quick: bool, timeout: float | None, out: str | None) -> dict:
    """A simulation spec as a `kmc regress` row (checker.front.regress.Row's fields):
    the spec's seed (else 0), walks of the spec's depth, on the local engine."""
    t0 = time.perf_counter()
    row: dict = {"spec": path, "status": "OK"}
    try:
        spec, st = load(Path(path))
    except (KmcError, ModelConfigError) as e:
        return {**row, "status": "ERROR", "problems": [" ".join(str(e).split())]}
    expect = spec.expect
    row["expected"] = describe_expect(expect) if expect else "-"
    if not expect:
        return {**row, "status": "SKIP", "problems": ["no [expect] table"]}
    if quick and not expect.get("quick", False):
        return {**row, "status": "SKIP", "problems": ["not in the quick set (expect.quick)"]}
    wanted = expect.get("violated")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    want_violation = bool(names) or expect.get("outcome") == "violation"
    model, properties = spec.build()
    cfg = sim_config(spec, model, properties, st.depth or DEFAULT_DEPTH, st.seed or 0, st.weights,
                     st.swarm, spec.check_deadlock)
    if want_violation:
        budget = expect.get("within_s", st.time)
        walks = st.walks
    else:
        budget, walks = None, expect.get("min_walks", st.walks or DEFAULT_WALKS)
    if timeout is not None:
        budget = min(budget, timeout) if budget is not None else timeout
    limits = Limits(walks=walks, deadline=time.time() + budget if budget else None)
    try:
        outcome = simulate(spec, cfg, limits)
    except KmcError as e:
        return {**row, "status": "FAIL", "got": "evaluation error", "problems": [e.one_line()],
                "seconds": time.perf_counter() - t0}
    got, problems = compare_expect(expect, outcome, budget, timeout)
    row.update(got=got, problems=problems, status="FAIL" if problems else "OK",
               seconds=time.perf_counter() - t0)
    if out is not None:
        from checker.output.results import write_run
        from checker.search.files import new_run_id
        obj = summary_object(spec, cfg, outcome, new_run_id(), walks, budget, spec.check_deadlock)
        view = view_for(model)
        run_dir = write_run(Path(out), spec.name, obj, outcome.result, view=view)
        write_walks(run_dir, outcome, view)
        row["run_dir"] = str(run_dir)
    return row


def compare_expect(expect: dict, outcome: Outcome, budget: float | None = None,
                   timeout: float | None = None) -> tuple[str, list[str]]:
    """(what the walks got, compact; the expectations of [expect] not met),
    as `kmc regress` judges a simulation spec."""
    r, t = outcome.result, outcome.totals
    wanted = expect.get("violated")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    want_violation = bool(names) or expect.get("outcome") == "violation"
    problems = []
    if r.violations:
        v = r.violations[0]
        got = f"{v.property} @{v.depth} (walk {t.violation['walk']}, {outcome.time_to_violation:.1f}s)"
    else:
        got = f"pass, {t.walks:,} walks"
    got += f", {t.distinct:,} distinct"
    if want_violation:
        if not r.violations:
            problems.append(f"no violation in {t.walks:,} walks"
                            + (f" within {budget:g}s" if budget else ""))
        else:
            if names and r.violations[0].property not in names:
                problems.append(f"{r.violations[0].property} violated, expected {', '.join(names)}")
            if "depth" in expect and r.violations[0].depth != expect["depth"]:
                problems.append(f"shrunk to {steps(r.violations[0].depth)}, expected {expect['depth']}")
    else:
        if r.violations:
            problems.append(f"outcome violation ({r.violations[0].property}), expected pass")
        elif "min_walks" in expect and t.walks < expect["min_walks"]:
            problems.append(f"{t.walks:,} walks, expected at least {expect['min_walks']:,}"
                            + (f" (--timeout {timeout:g}s)" if timeout else ""))
    if "distinct" in expect and expect["distinct"] != t.distinct:
        problems.append(f"distinct {t.distinct}, expected {expect['distinct']}")
    wanted_witnesses = expect.get("sometimes", [])
    if wanted_witnesses:
        missed = unreached_witnesses(expect, r)
        got += f", {len(wanted_witnesses) - len(missed)}/{len(wanted_witnesses)} witnessed"
        problems += witness_problems(expect, r)
    return got, problems


def table_cells(path: Path, expect: dict) -> dict:
    """The result table's outcome and steps of a simulation spec."""
    st_depth = None
    try:
        with open(path, "rb") as f:
            st_depth = (tomllib.load(f).get("simulate") or {}).get("depth")
    except (OSError, ValueError):
        pass
    wanted = expect.get("violated")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    if names or expect.get("outcome") == "violation":
        outcome = "violated: " + ", ".join(names) if names else "violation"
        if "within_s" in expect:
            outcome += f" (random walks, found within {expect['within_s']:g} s; shrunk)"
        return {"outcome": outcome, "depth": str(expect["depth"]) if "depth" in expect else "-"}
    walks = expect.get("min_walks")
    outcome = "pass" + (f" in {walks:,} random walks" if walks else " (random walks)")
    outcome += f" of <= {st_depth or DEFAULT_DEPTH} steps"
    return {"outcome": outcome, "depth": "-"}
