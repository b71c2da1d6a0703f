#!/usr/bin/env python3
"""Two revisions of kmc on the same check, at the same time, one core each (a lever's worth).

The machine's speed drifts by 10-20% within minutes, more than most levers
are worth; two runs made in turns cannot tell them apart. Here the base
revision (a git worktree, its compiled hot path built in it) and the working
tree run the same `kmc check` together, pinned to cores 0 and 1, swapping
cores every pair, so both see the same machine. Per pair: each one's CPU
time (user + system) and wall time, and new / base; then the mean and range
of new / base over the pairs. With --callgrind N, also each revision's
instruction count (valgrind's callgrind) for expanding the first N states of
the spec in BFS order, properties checked: a figure that does not depend on
the load.

    .venv/bin/python bench/revisions_side_by_side.py --base HEAD~1            # config B, 4 pairs
    .venv/bin/python bench/revisions_side_by_side.py --base v1 --config A --pairs 6 --callgrind 8000

The check is one of tlc_side_by_side.py's configurations (complete state
spaces whose counts are TLC's); both revisions must report them, or the
script exits 1.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROG = "revisions_side_by_side.py"
_spec = importlib.util.spec_from_file_location("tlc_side_by_side", ROOT / "bench" / "tlc_side_by_side.py")
side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side)

# Expand the first N states of a spec breadth-first with every property, in
# the revision found on sys.path (run under callgrind).
EXPAND = """
import sys, tomllib
from checker.search.registry import build
from checker.search.engine import ExpandContext, expand_chunk
spec = tomllib.load(open(sys.argv[1], "rb"))
model, props = build(spec["model"], spec["variant"], spec["constants"])
ctx = ExpandContext.create(model, props)
frontier = [ctx.entry(s) for s in model.init_states()]
seen, done, limit = {e[2] for e in frontier}, 0, int(sys.argv[2])
while frontier and done < limit:
    frontier = frontier[:limit - done]
    done += len(frontier)
    frontier = [e[:3] for e in expand_chunk(ctx, frontier, seen).new]
print(done, len(seen))
"""


class Fail(Exception):
    """Bad input: one line, exit 2."""


def worktree(rev: str, folder: Path) -> Path:
    """A checkout of `rev` with its compiled hot path built in place."""
    r = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(folder), rev],
                       capture_output=True, text=True)
    if r.returncode:
        last = (r.stderr.strip().splitlines() or [f"git exited {r.returncode}"])[-1]
        raise Fail(f"cannot check out {rev!r}: {last}")
    if (folder / "setup.py").exists():
        r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=folder,
                           capture_output=True, text=True)
        if r.returncode:
            raise Fail(f"cannot build {rev}'s compiled hot path: {r.stderr.strip()[-300:]}")
    return folder


def kmc(tree: Path, cpu: int, spec: Path, out: Path) -> tuple:
    """The job that runs `tree`'s kmc (the venv's interpreter, `tree` first on sys.path)."""
    cmd = side.pin(str(cpu)) + ["env", f"PYTHONPATH={tree}", sys.executable, "-m", "checker.front.cli",
                                "check", str(spec), "--json", "--quiet", "--out", str(out)]
    return cmd, tree, None


def instructions(tree: Path, spec: Path, states: int) -> int:
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        sys.executable, "-c", EXPAND, str(spec), str(states)],
                       cwd=tree, env={**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"},
                       capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode or not found:
        raise side.Void(f"callgrind failed in {tree}: {r.stderr.strip()[-300:]}")
    return int(found.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the git revision to compare the working tree with")
    ap.add_argument("--config", default="B", choices=sorted(c for c in side.CONFIGS if c != "tiny") + ["tiny"])
    ap.add_argument("--pairs", type=int, default=4, help="runs of both at once (cores swap each pair)")
    ap.add_argument("--callgrind", type=int, metavar="N", help="also count instructions over N states")
    args = ap.parse_args(argv)
    try:
        if args.pairs < 1:
            raise Fail("--pairs must be at least 1")
        if args.callgrind is not None and (args.callgrind < 1 or not shutil.which("valgrind")):
            raise Fail("--callgrind needs N >= 1 and valgrind on PATH")
        if len(os.sched_getaffinity(0)) < 2:
            raise Fail("needs two cores to run the revisions side by side")
        return run(args)
    except Fail as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except side.Void as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1


def run(args) -> int:
    cfg = side.CONFIGS[args.config]
    work = Path(tempfile.mkdtemp(prefix="kmc-bench-revs-"))
    try:
        trees = {"base": worktree(args.base, work / "base"), "new": ROOT}
        spec = side.write_kmc_spec(args.config, cfg, work)
        print(f"config {args.config}; base {args.base}, new: the working tree; load average before: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("pair  base core  base cpu s  base wall s  new cpu s  new wall s  new/base cpu")
        ratios = []
        cpus = sorted(os.sched_getaffinity(0))[:2]
        for i in range(args.pairs):
            cores = {"base": cpus[i % 2], "new": cpus[1 - i % 2]}
            procs = side.run_together({k: kmc(trees[k], cores[k], spec, work / f"out-{k}") for k in trees})
            for k, p in procs.items():
                r = side.kmc_result(p)
                if (r["distinct"], r["generated"]) != (cfg["tlc"]["distinct"], cfg["tlc"]["generated"]):
                    raise side.Void(f"{k}: COUNTS DIFFER ({r['distinct']:,} / {r['generated']:,})")
            b, n = procs["base"], procs["new"]
            ratios.append(n["cpu_s"] / b["cpu_s"])
            print(f"{i + 1:>4}  {cores['base']:>9}  {b['cpu_s']:>10.1f}  {b['wall_s']:>11.1f}  "
                  f"{n['cpu_s']:>9.1f}  {n['wall_s']:>10.1f}  {ratios[-1]:>12.3f}")
        print(f"new / base CPU time over {len(ratios)} pairs: mean {statistics.mean(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
        if args.callgrind:
            counts = {k: instructions(t, spec, args.callgrind) for k, t in trees.items()}
            print(f"instructions, first {args.callgrind:,} states expanded: base {counts['base']:,}, "
                  f"new {counts['new']:,}, new / base {counts['new'] / counts['base']:.3f}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "base")],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
