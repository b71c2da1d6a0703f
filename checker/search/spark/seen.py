"""The seen fingerprints of a Spark run, per fingerprint partition, as
append-only sorted runs (log-structured), so that a level costs what its
own states cost, not what every earlier level saw.

On disk, beside a level's rows (checker/search/spark/levels.py):

    <level>/seen/part-00003.run    the fingerprints this level added to partition 3,
                                   sorted (possibly merged with older runs: below)
    <level>/seen/part-00003.json   partition 3's seen set after this level: the
                                   partition count it is split by, its size, and
                                   its runs, oldest first: [[level, partition, n], ...]

A run is written once, by the merge task of its level, and never rewritten;
an older level's run stays where it is (its level is committed, so
immutable) and later indexes refer to it. When a partition's newest runs
are about as big as the one before them (`_plan`) they are merged into the
new level's run, so a partition has O(log n) runs and each fingerprint is
rewritten O(log n) times. A run file holds little-endian uint64s: the sorted
fingerprints (64-bit), or for 128-bit fingerprints their high words then
their low words, sorted by (high, low).

A lookup drops the seen fingerprints from a set of candidates: a run up to
SCAN_RATIO times as big as the candidates is read whole and subtracted (C
loops); a bigger one is mapped and each candidate bisected (only the pages
touched are read). Files are written to a temp name and renamed, and a
retried task writes the same bytes again.
"""
from __future__ import annotations

import json
import mmap
import os
import sys
from array import array
from bisect import bisect_left

_BIG = sys.byteorder == "big"
MAX_RUNS = 8       # a partition's runs, at most
SCAN_RATIO = 8     # bisecting a candidate costs ~8x scanning one run entry (measured)


class SeenFormatError(Exception):
    """A level without its seen index (a damaged run folder)."""


def seen_dir(level_path) -> str:
    return os.path.join(str(level_path), "seen")


def run_path(levels_root, level: int, q: int) -> str:
    return os.path.join(str(levels_root), f"level-{level:05d}", "seen", f"part-{q:05d}.run")


def index_path(level_path, q: int) -> str:
    return os.path.join(seen_dir(level_path), f"part-{q:05d}.json")


def _write_atomic(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{id(data):x}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def read_index(level_path, q: int) -> dict:
    path = index_path(level_path, q)
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise SeenFormatError(f"{path} is missing: the level has no seen index "
                              f"(a damaged run folder, or one of an older kmc)") from None


# ---- run files ---------------------------------------------------------------------

def _words(fps: list, bits: int) -> array:
    """Sorted fingerprints as the run file's uint64 words."""
    if bits == 64:
        a = array("Q", fps)
    else:
        a = array("Q", [fp >> 64 for fp in fps])
        a.extend(fp & 0xFFFFFFFFFFFFFFFF for fp in fps)
    if _BIG:
        a.byteswap()
    return a


def load_run(path: str, n: int, bits: int) -> list | array:
    """A run's fingerprints, sorted (an array of 64-bit ones, else a list)."""
    a = array("Q")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if _BIG:
        a.byteswap()
    if len(a) != n * (bits // 64):
        raise SeenFormatError(f"{path}: {len(a)} words, expected {n * (bits // 64)}")
    if bits == 64:
        return a
    return [(h << 64) | lo for h, lo in zip(a[:n], a[n:])]


def _bisect_out(path: str, n: int, bits: int, cands: set) -> None:
    """Drop from cands those in the run at path, a candidate at a time."""
    if n == 0 or not cands:
        return
    with open(path, "rb") as f:
        if _BIG:  # no native view of little-endian words
            run = load_run(path, n, bits)
            hi = run if bits == 64 else [fp >> 64 for fp in run]
            lo = None if bits == 64 else [fp & 0xFFFFFFFFFFFFFFFF for fp in run]
            _probe(hi, lo, n, cands)
            return
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            words = memoryview(m).cast("Q")
            try:
                if len(words) != n * (bits // 64):
                    raise SeenFormatError(f"{path}: {len(words)} words, expected {n * (bits // 64)}")
                if bits == 64:
                    _probe(words, None, n, cands)
                else:
                    _probe(words[:n], words[n:], n, cands)
            finally:
                words.release()
        finally:
            m.close()


def _probe(hi, lo, n: int, cands: set) -> None:
    found = []
    if lo is None:
        for fp in cands:
            i = bisect_left(hi, fp)
            if i < n and hi[i] == fp:
                found.append(fp)
    else:
        mask = 0xFFFFFFFFFFFFFFFF
        for fp in cands:
            h, low = fp >> 64, fp & mask
            i = bisect_left(hi, h)
            while i < n and hi[i] == h:  # equal high words: rare
                if lo[i] == low:
                    found.append(fp)
                    break
                i += 1
    cands.difference_update(found)


# ---- a partition's seen set ----------------------------------------------------------

class SeenSet:
    """Partition q's seen fingerprints after a committed level (its index),
    as the merge task of the next level uses them."""

    def __init__(self, level_path, q: int, partitions: int, bits: int):
        self.root = os.path.dirname(os.path.normpath(str(level_path)))
        self.q, self.partitions, self.bits = q, partitions, bits
        idx = read_index(level_path, 0)  # every level has a partition 0
        if idx["partitions"] == partitions:
            idx = read_index(level_path, q) if q else idx
            self.count = idx["count"]
            self.runs = [tuple(r) for r in idx["runs"]]
            self.resplit = None
        else:
            # written with another partition count (the first big level, a
            # resume with --partitions): every old partition's runs, of which
            # this partition's fingerprints become one run when written
            old = [read_index(level_path, p) for p in range(idx["partitions"])]
            self.runs = []
            self.resplit = [tuple(r) for i in old for r in i["runs"]]
            mine = set()
            for lv, p, n in self.resplit:
                mine.update(fp for fp in load_run(run_path(self.root, lv, p), n, bits)
                            if fp % partitions == q)
            self.mine = mine
            self.count = len(mine)

    def drop_seen(self, cands: set) -> set:
        """cands minus the seen fingerprints (cands itself, changed)."""
        if self.resplit is not None:
            cands.difference_update(self.mine)
            return cands
        for lv, p, n in self.runs:
            if not cands:
                break
            path = run_path(self.root, lv, p)
            if n <= SCAN_RATIO * len(cands):
                cands.difference_update(load_run(path, n, self.bits))
            else:
                _bisect_out(path, n, self.bits, cands)
        return cands

    def write_next(self, level_path, level: int, new_fps: list) -> dict:
        """Write level `level`'s run of this partition (new_fps, not seen
        before; merged with the newest older runs when `_plan` says so) and
        its index, into level_path (the level's temp folder)."""
        if self.resplit is not None:
            keep, merged = [], sorted(self.mine.union(new_fps))
        else:
            keep, take = _plan(self.runs, len(new_fps))
            merged = list(new_fps)
            for lv, p, n in take:
                merged.extend(load_run(run_path(self.root, lv, p), n, self.bits))
            merged.sort()
        return write_seen(level_path, level, self.q, self.partitions, self.bits, merged,
                          keep, self.count + len(new_fps))


def _plan(runs: list, new: int) -> tuple[list, list]:
    """(runs kept as they are, runs merged into the new one): the newest runs
    while the merged run is at least as big as the next older one, and
    the oldest ones beyond MAX_RUNS. Sizes then halve at least from run to
    run, and a fingerprint is merged again only when its run doubles."""
    keep = list(runs)
    size = new
    take: list = []
    while keep and (size >= keep[-1][2] or len(keep) + 1 > MAX_RUNS):
        r = keep.pop()
        take.append(r)
        size += r[2]
    return keep, take


def write_seen(level_path, level: int, q: int, partitions: int, bits: int, fps_sorted: list,
               older: list = (), count: int | None = None) -> dict:
    """Write partition q's run of level `level` (sorted fingerprints) and
    the index of its seen set: the older runs, then this one."""
    runs = [list(r) for r in older]
    if fps_sorted:
        _write_atomic(os.path.join(seen_dir(level_path), f"part-{q:05d}.run"),
                      _words(fps_sorted, bits).tobytes())
        runs.append([level, q, len(fps_sorted)])
    idx = {"partitions": partitions, "bits": bits,
           "count": count if count is not None else sum(r[2] for r in runs), "runs": runs}
    _write_atomic(index_path(level_path, q), json.dumps(idx).encode())
    return idx
