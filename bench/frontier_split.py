"""How a level's split into tasks decides what they ship: the states of one
BFS level (of a spec, at a chosen level) are split into T tasks several
ways, each task expands its part, and the script counts the successors each
task would hand on as new:
- spark-style: new to the task, which knows only its own part of the
  frontier (checker/search/spark/tasks.py: what goes through the shuffle);
- auto-style: new to a worker that holds the whole seen set at the level's
  start (checker/search/parallel.py: what the parent receives).
The merge (or the parent) keeps one per state: the rest is work done twice.
The splits: by fingerprint (the spark engine's expand tasks until
2026-11-26: one per level file), by contiguous ranges in BFS order (the
spark engine's since), and chunks of 2,048 states dealt out in turn (the
auto engine's).

    .venv/bin/python bench/frontier_split.py --level 10            # the kip966 reference, level 10 -> 11
    .venv/bin/python bench/frontier_split.py --level 11 --tasks 4
    .venv/bin/python bench/frontier_split.py --spec specs/toy-twophase.toml --level 4

Bad input (an unknown spec, a level the space does not reach, fewer than one
task) is one line and exit 2.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.front.spec import load_spec  # noqa: E402
from checker.search.engine import CHUNK_STATES, ExpandContext, expand_chunk, resolve_projection  # noqa: E402
from checker.search.errors import KmcError  # noqa: E402

PROG = "frontier_split.py"


class Fail(Exception):
    """Bad input: one line, exit 2."""


def level_entries(ctx, model, level: int) -> tuple[list, set]:
    """Level `level`'s (state, parts, fp) entries in BFS order, and every
    fingerprint of levels 0..level."""
    frontier = [ctx.entry(s) for s in model.init_states()]
    seen = {e[2] for e in frontier}
    for lv in range(level):
        nxt = []
        for i in range(0, len(frontier), CHUNK_STATES):
            res = expand_chunk(ctx, frontier[i:i + CHUNK_STATES], seen)
            nxt.extend((s, p, fp) for s, p, fp, _, _ in res.new)
        if not nxt:
            raise Fail(f"the state space has no level {level} (its last level is {lv})")
        frontier = nxt
    return frontier, seen


def splits(entries: list, tasks: int) -> dict:
    n = len(entries)
    return {
        "by fingerprint (spark before)": lambda i: entries[i][2] % tasks,
        "ranges in BFS order (spark)": lambda i: i * tasks // n,
        f"chunks of {CHUNK_STATES:,} in turn (auto)": lambda i: (i // CHUNK_STATES) % tasks,
    }


def measure(spec_path: str, level: int, tasks: int) -> dict:
    spec = load_spec(spec_path, {})
    model, _ = spec.build()
    ctx = ExpandContext.create(model, [], projection=resolve_projection(model, spec.projection))
    entries, seen = level_entries(ctx, model, level)
    succ = [{x[2] for x in expand_chunk(ctx, [e], set()).new} for e in entries]
    new = len(set().union(*succ) - seen)
    out = {"spec": spec.name, "level": level, "tasks": tasks, "frontier": len(entries),
           "seen": len(seen), "new": new, "splits": {}}
    for name, task_of in splits(entries, tasks).items():
        made = [set() for _ in range(tasks)]
        own = [set() for _ in range(tasks)]
        for i, fps in enumerate(succ):
            t = task_of(i)
            made[t] |= fps
            own[t].add(entries[i][2])
        out["splits"][name] = {"spark": sum(len(made[t] - own[t]) for t in range(tasks)),
                               "auto": sum(len(made[t] - seen) for t in range(tasks))}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default=str(ROOT / "specs" / "kraft-kip966-reference.toml"))
    ap.add_argument("--level", type=int, required=True, help="the level whose expansion is split")
    ap.add_argument("--tasks", type=int, default=2, help="tasks (or workers) a level is split into")
    args = ap.parse_args(argv)
    try:
        if args.level < 0 or args.tasks < 1:
            raise Fail("--level must be at least 0 and --tasks at least 1")
        started = time.perf_counter()
        r = measure(args.spec, args.level, args.tasks)
    except (Fail, KmcError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(f"{r['spec']}: level {r['level']} ({r['frontier']:,} states, {r['seen']:,} seen) -> "
          f"{r['new']:,} new, split into {r['tasks']} task(s)")
    print(f"{'split':34s} {'spark: shipped':>16s} {'/ new':>6s} {'auto: kept new':>16s} {'/ new':>6s}")
    for name, c in r["splits"].items():
        print(f"{name:34s} {c['spark']:16,} {c['spark'] / max(1, r['new']):6.2f} "
              f"{c['auto']:16,} {c['auto'] / max(1, r['new']):6.2f}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
