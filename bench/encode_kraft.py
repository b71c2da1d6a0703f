#!/usr/bin/env python3
"""Side-by-side timing of two encoders on the same successors of the kip966
reference configuration: the encoding work of the engine's hot loop alone.

    .venv/bin/python bench/encode_kraft.py --old /path/to/old/encoding.py

Collects the successors of the first --parents states of BFS level --level,
then times, alternately and --repeat times, the per-successor loop of
expand_chunk (copy the parent's parts, re-encode the changed variables) with
each encoder, starting each round from an empty cache. Prints the median
microseconds per successor and checks that both encoders give equal bytes.
Also prints, per variable, how often it changes and what re-encoding it costs.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import statistics
import sys
import time
from itertools import compress, count
from operator import is_not

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.engine_kraft import build  # noqa: E402
from checker.search import encoding as new  # noqa: E402
from checker.search import engine  # noqa: E402


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sample(level: int, parents: int):
    model, _ = build()
    ctx = engine.ExpandContext.create(model, [])
    seen: set = set()
    frontier = [ctx.entry(s) for s in model.init_states()]
    seen.update(e[2] for e in frontier)
    for _ in range(level):
        frontier = [(e[0], e[1], e[2]) for e in engine.expand_chunk(ctx, frontier, seen).new]
    pairs = [(st, succ) for st, _, _ in frontier[:parents] for _, succ in model.successors(st)]
    return model, frontier[:parents], pairs


def loop(mod, frontier, model):
    """The engine's per-successor encoding, parents encoded first (as the
    previous level did), with mod's encoder and an empty cache."""
    getattr(mod, "clear_caches", mod._cache.clear)()
    enc = mod.encode
    entries = [(st, [enc(x) for x in st]) for st, _, _ in frontier]
    succs = [(st, pp, list(model.successors(st))) for st, pp in entries]
    out = []
    if hasattr(mod, "VariableEncoders"):  # the engine's loop since the C-packer-first encoders
        encs = mod.VariableEncoders(len(model.variables))
        fallback = mod.encode_changed
        t0 = time.process_time()
        for st, pparts, ss in succs:
            for _, succ in ss:
                parts = pparts.copy()
                try:
                    for i in compress(count(), map(is_not, st, succ)):
                        parts[i] = encs[i](succ[i])
                except TypeError:
                    parts = fallback(encs, st, pparts, succ)
                out.append(b"".join(parts))
        return time.process_time() - t0, out
    t0 = time.process_time()
    for st, pparts, ss in succs:
        for _, succ in ss:
            parts = pparts.copy()
            for i in compress(count(), map(is_not, st, succ)):
                parts[i] = enc(succ[i])
            out.append(b"".join(parts))
    return time.process_time() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="path of the encoding.py to compare with")
    ap.add_argument("--level", type=int, default=8)
    ap.add_argument("--parents", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--per-variable", action="store_true")
    args = ap.parse_args()
    gc.disable()
    old = load(args.old, "old_encoding")
    model, frontier, pairs = sample(args.level, args.parents)
    n = len(pairs)
    print(f"{len(frontier)} parents, {n} successors")
    times = {"old": [], "new": []}
    ref = None
    for _ in range(args.repeat):
        for name, mod in (("old", old), ("new", new)):
            t, out = loop(mod, frontier, model)
            times[name].append(t)
            if ref is None:
                ref = out
            elif out != ref:
                sys.exit(f"{name} encoder: different bytes")
            del out
    print({k: [round(1e6 * t / n, 1) for t in v] for k, v in times.items()})
    for name, ts in times.items():
        print(f"{name}: {1e6 * statistics.median(ts) / n:6.2f} us/successor (median of {len(ts)}), "
              f"{1e6 * min(ts) / n:6.2f} (min)")
    print(f"new/old: {statistics.median(times['new']) / statistics.median(times['old']):.3f} (medians), "
          f"{min(times['new']) / min(times['old']):.3f} (minima)")
    if args.per_variable:
        for i, var in enumerate(model.variables):
            objs = [succ[i] for st, succ in pairs if st[i] is not succ[i]]
            row = []
            for mod in (old, new):
                getattr(mod, "clear_caches", mod._cache.clear)()
                for st, _, _ in frontier:
                    mod.encode(st[i])
                enc = mod.encode
                if hasattr(mod, "VariableEncoders"):  # the engine's choice for this variable
                    enc = mod._plain
                    try:
                        for o in objs:
                            enc(o)
                    except TypeError:
                        enc = mod.encode
                t0 = time.process_time()
                for o in objs:
                    enc(o)
                row.append(time.process_time() - t0)
            print(f"{var:26} changed {len(objs):7}  old {1e6 * row[0] / max(1, len(objs)):6.2f}"
                  f"  new {1e6 * row[1] / max(1, len(objs)):6.2f} us each")


if __name__ == "__main__":
    main()
