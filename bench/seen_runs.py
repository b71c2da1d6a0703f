"""The seen-set work of one merge task, in-process: format 2 (the partition's
whole seen set as one blob, shuffled, unpacked into a set and written
again every level) against format 3 (sorted runs, checker/search/spark/seen.py),
for a level of a fixed number of candidates after more and more seen
fingerprints. Format 2's CPU grows with the seen set, format 3's with the
candidates (plus a compaction now and then, amortized).

    .venv/bin/python bench/seen_runs.py                    # 100k candidates, seen 0.1M..6.4M
    .venv/bin/python bench/seen_runs.py --candidates 20000 --seen 100000 1000000
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.search import codec  # noqa: E402
from checker.search.spark import levels, seen  # noqa: E402


def old_format(seen_blob: bytes, cands: list, bits: int = 64) -> float:
    """tasks._merge of format 2: the seen blob to a set, the new ones, the grown blob."""
    t = time.process_time()
    s = set(codec.unpack_fps(seen_blob, bits))
    new = sorted(fp for fp in cands if fp not in s)
    blob = seen_blob + codec.pack_fps(new, bits)
    assert len(blob) >= len(seen_blob)
    return time.process_time() - t


def new_format(root: Path, level: int, cands: list, bits: int = 64) -> tuple[float, int]:
    """One merge task's SeenSet work at `level` (lookups, the new run and
    index), then the level committed; returns (CPU s, runs after)."""
    tmp = levels.tmp_level_dir(root.parent, level)
    t = time.process_time()
    s = seen.SeenSet(levels.previous_level(tmp, level), 0, 1, bits)
    fresh = s.drop_seen(set(cands))
    idx = s.write_next(tmp, level, sorted(fresh))
    cpu = time.process_time() - t
    tmp.rename(levels.level_dir(root.parent, level))
    return cpu, len(idx["runs"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidates", type=int, default=100_000)
    ap.add_argument("--seen", type=int, nargs="+", default=[100_000, 400_000, 1_600_000, 6_400_000])
    args = ap.parse_args()
    rng = random.Random(1)
    print(f"one merge task, {args.candidates:,} candidates (half of them seen before), 64-bit fingerprints")
    print(f"{'seen':>10} {'format 2 cpu s':>14} {'format 3 cpu s':>14} {'runs':>5} "
          f"{'format 2 MiB':>13} {'format 3 MiB':>13}  (peak Python heap of the seen work)")
    for total in args.seen:
        work = Path(tempfile.mkdtemp(prefix="kmc-bench-seen-"))
        root = work / "levels"
        root.mkdir()
        try:
            old = sorted({rng.getrandbits(64) for _ in range(total)})
            # the seen set as a run folder would hold it: levels growing 2x, then a plateau
            sizes, left = [], total
            while left > 0:
                n = max(1, min(left, left // 2 if left > 1000 else left))
                sizes.append(n)
                left -= n
            sizes.reverse()
            rng.shuffle(old)
            start = 0
            for lv, n in enumerate(sizes):
                part = sorted(old[start:start + n])
                start += n
                if lv == 0:
                    seen.write_seen(levels.tmp_level_dir(work, 0), 0, 0, 1, 64, part)
                    levels.tmp_level_dir(work, 0).rename(levels.level_dir(work, 0))
                else:
                    new_format(root, lv, part)
            cands = rng.sample(old, args.candidates // 2) + [rng.getrandbits(64) for _ in range(args.candidates // 2)]
            blob = codec.pack_fps(old)
            t_old = min(old_format(blob, cands) for _ in range(2))
            tracemalloc.start()
            old_format(blob, cands)
            m_old = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            t_new, runs = new_format(root, len(sizes), cands)
            # the same level again, traced (its run is already committed: level + 1)
            tracemalloc.start()
            new_format(root, len(sizes) + 1, cands)
            m_new = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"{total:>10,} {t_old:>14.3f} {t_new:>14.3f} {runs:>5} {m_old / 2**20:>13.1f} {m_new / 2**20:>13.1f}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
