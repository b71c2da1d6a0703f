"""The durable levels of a Spark run, under the run's results folder:

    <run>/run.json                      what is being checked (resume checks it)
    <run>/spark.log                     the JVM's output (when this run launched it)
    <run>/levels/level-00007/rows/      one finished BFS level, one file per fingerprint
                                        partition (part-00003.msgpack: a stream of
                                        msgpack rows, written by the task that made
                                        them); rows by `kind`:
        states   a batch of up to 2048 states as an expand task shipped it:
                 packed fingerprints, BFS keys, parent fingerprints, actions
                 (msgpack), states (per-variable canonical msgpack
                 encodings, by column: codec.pack_states; None at the depth
                 bound, whose states are checked as they are generated and
                 never rebuilt); per state the mask of the variables its
                 witness step changed (msgpack ints; the properties a state
                 is checked against when rebuilt; absent at level 0: all);
                 `picks`: the indices of the batch's states that are new
                 states of this level (codec.pack_picks; None: all), the
                 others being seen before or won by a smaller key; `n`: how
                 many; `part` = fingerprint partition
    <run>/levels/level-00007/seen/      per partition, the fingerprints this level
                                        added, as a sorted run (part-00003.run), and
                                        the index of the partition's seen set after
                                        the level (part-00003.json: its runs in this
                                        and earlier levels); checker/search/spark/seen.py
    <run>/levels/level-00007/stats/     per partition, the level's statistics (msgpack),
                                        with the index of its rows (`rows`: [partition,
                                        first byte, end byte, states, first key, last
                                        key]), by which the next job splits the level
                                        into ranges of BFS keys (task_inputs)
    <run>/levels/level-00007/stats.json cumulative statistics after this level, and
                                        the size and xxh3 digest of each file of
                                        the level (`files`: a resume refuses a
                                        damaged level in one line)

A level is written to levels/.level-00007.tmp and renamed when complete (its
stats.json included), so a level directory without the leading dot is whole.
A partition file is written to a temp name and renamed, so a retried task
(which writes the same bytes) never leaves half a file. The rows are big
binary blobs, so they are plain msgpack files rather than Parquet: no Spark
SQL planning or JVM row conversion per level, and the run folder is shared
by the driver and the executors as before.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from itertools import accumulate
from pathlib import Path

from checker.search.files import digest_problem, file_digest, write_atomic

LEVEL_RE = re.compile(r"^level-(\d{5,})$")


def levels_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "levels"


def previous_level(out_dir, level: int) -> str:
    """The committed level before `level`, whose temp folder is out_dir."""
    return os.path.join(os.path.dirname(os.path.normpath(str(out_dir))), f"level-{level - 1:05d}")


def level_dir(run_dir: Path, level: int) -> Path:
    return levels_dir(run_dir) / f"level-{level:05d}"


def tmp_level_dir(run_dir: Path, level: int) -> Path:
    return levels_dir(run_dir) / f".level-{level:05d}.tmp"


# a level-file row, as the tasks see it (a dict of these columns)
COLUMNS = ("kind", "part", "seq", "n", "fps", "keys", "parents", "actions", "states", "changed", "picks")


def rows_dir(level_path: Path) -> Path:
    return Path(level_path) / "rows"


def part_path(level_path, q: int) -> str:
    return os.path.join(str(level_path), "rows", f"part-{q:05d}.msgpack")


def part_files(level_path: Path) -> list[str]:
    """A level's partition files, by partition number."""
    d = rows_dir(level_path)
    return sorted(str(p) for p in d.glob("part-*.msgpack")) if d.is_dir() else []


def write_part(level_path, q: int, rows, offsets: list | None = None) -> str:
    """Write partition q's rows (tuples in COLUMNS order), atomically;
    `offsets` gets each row's [start, end] byte offsets in the file."""
    import msgpack
    path = part_path(level_path, q)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{id(rows):x}.tmp"
    pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack
    at = 0
    with open(tmp, "wb") as f:
        for row in rows:
            data = pack(tuple(row))
            f.write(data)
            if offsets is not None:
                offsets.append([at, at + len(data)])
            at += len(data)
    os.replace(tmp, path)
    return path


def read_part(path: str, start: int = 0, end: int | None = None, lo: bytes | None = None,
              hi: bytes | None = None):
    """The rows of one partition file (or of its bytes start:end), as dicts
    of COLUMNS; with a key range, each row also has `range`: (lo, hi)."""
    import msgpack
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(end - start)
    unpacker = msgpack.Unpacker(raw=False, use_list=False, max_buffer_size=max(len(data), 1 << 20))
    unpacker.feed(data)
    ranged = lo is not None or hi is not None
    for row in unpacker:
        out = dict(zip(COLUMNS, row))
        if ranged:
            out["range"] = (lo, hi)
        yield out


def key_ranges(index: list, tasks) -> list:
    """Split a level into ranges of BFS keys from its rows' index ([partition,
    start, end, n, first key, last key] per row of every partition file):
    `tasks` ranges with about as many states each, or (a list of weights)
    one range per weight with that share of the states, in key order. The
    cut keys (ascending, none repeated; a task per gap, the first from the
    lowest key, the last to the highest) fall on row boundaries, so ranges
    smaller than a row merge. Duplicate successors come from nearby parents
    (interleavings of one state's actions), so a task holding a range of BFS
    order meets most of its duplicates itself (bench/frontier_split.py)."""
    weights = [1] * tasks if isinstance(tasks, int) else list(tasks)
    W = sum(weights)
    bounds = list(accumulate(weights[:-1]))  # integers: exact
    rows = sorted(index, key=lambda r: r[4])
    total = sum(r[3] for r in rows)
    cuts: list = []
    done = b = 0
    for r in rows:
        crossed = b
        while total and b < len(bounds) and done * W >= total * bounds[b]:
            b += 1
        if b > crossed and (not cuts or r[4] > cuts[-1]):
            cuts.append(r[4])
        done += r[3]
    return cuts


def guided_weights(cores: int) -> list[int]:
    """The shares of a level's expand tasks on `cores` cores: one big range
    per core, then 2 small ones per core (a twentieth of the level in all)
    that go to whichever core is free first. Spark starts a stage's tasks in
    index order, so the small ranges even out what the big ones cost: the
    states of one region cost more than another's (the upper half of a
    level 1.10-1.15x as much per state at levels 11-13, measured in the git history of bench/README.md), and
    cuts weighted by measured cost would make a level's bytes differ from run
    to run."""
    return [38] * cores + [1] * (2 * cores)


def task_inputs(level_path, tasks) -> list[list]:
    """A level split into ranges of its BFS keys (key_ranges: `tasks` of about
    as many states, or one per weight of a list), by the index of its rows
    its merge tasks recorded (their statistics' `rows`): per range the slices
    of the files that hold it (range_slices). Whole files (a task per
    fingerprint partition) for a level written without that index (level 0;
    a run of an older kmc)."""
    files = part_files(level_path)
    stats = read_partition_stats(level_path)
    if len(stats) != len(files) or any("rows" not in st for st in stats):
        return [[(path,)] for path in files]
    index = [row for st in stats for row in st["rows"]]
    return range_slices(level_path, index, key_ranges(index, tasks))


# Expand tasks are ranges of BFS keys: a range of BFS order holds most of its
# successors' duplicates itself, so the shuffle carries 1.04x the new states
# where splitting by fingerprint carried 1.79x (bench/frontier_split.py, two
# tasks). Per fingerprint partition of the next level, one big range and two
# small ones (guided_weights); GUIDED = False: one range each
GUIDED = True


def expand_inputs(level_path, partitions: int) -> list[list]:
    """The expand tasks of a level as the engine splits it: ranges of its BFS
    keys, by the partitions of the next level (task_inputs, guided_weights)."""
    n = max(partitions, len(part_files(level_path)))
    return task_inputs(level_path, guided_weights(n) if GUIDED and n > 1 else n)


def range_slices(level_path, index: list, cuts: list) -> list[list]:
    """Per key range (cuts as from key_ranges), the byte ranges of the
    partition files whose rows may hold its states: [(path, start, end, lo, hi)]."""
    bounds = [None] + list(cuts) + [None]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        by_part: dict = {}
        for part, start, end, n, first, last in index:
            if (lo is None or last >= lo) and (hi is None or first < hi):
                span = by_part.setdefault(part, [start, end])
                span[0], span[1] = min(span[0], start), max(span[1], end)
        out.append([(part_path(level_path, q), s, e, lo, hi) for q, (s, e) in sorted(by_part.items())])
    return out


def stats_dir(level_path: Path) -> Path:
    return Path(level_path) / "stats"


def read_partition_stats(level_path: Path) -> list[dict]:
    from checker.search.codec import unpack
    d = stats_dir(level_path)
    if not d.is_dir():
        return []
    return [unpack(p.read_bytes()) for p in sorted(d.glob("part-*.msgpack"))]


def committed_levels(run_dir: Path) -> list[int]:
    root = levels_dir(run_dir)
    if not root.is_dir():
        return []
    out = []
    for p in root.iterdir():
        m = LEVEL_RE.match(p.name)
        if m and (p / "stats.json").is_file():
            out.append(int(m.group(1)))
    return sorted(out)


def read_stats(run_dir: Path, level: int) -> dict:
    """A committed level's stats.json (ValueError: not readable JSON, or not an object)."""
    try:
        obj = json.loads((level_dir(run_dir, level) / "stats.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read its stats.json: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError("its stats.json is not a JSON object")
    return obj


def level_files(level_path: Path) -> dict:
    """{path relative to the level folder: [size, digest]} of its data files."""
    root = Path(level_path)
    return {str(p.relative_to(root)): file_digest(p)
            for sub in ("rows", "seen", "stats") if (root / sub).is_dir()
            for p in sorted((root / sub).iterdir()) if p.is_file() and not p.name.endswith(".tmp")}


def damaged_files(run_dir: Path, level: int, stats: dict) -> list[str]:
    """The files of a committed level that differ from the digests its
    stats.json recorded (a level committed before digests: none checked)."""
    root = level_dir(run_dir, level)
    files = stats.get("files") or {}
    if not isinstance(files, dict):
        return ["stats.json"]
    problems = ((rel, digest_problem(root / rel, digest)) for rel, digest in files.items())
    return [f"{rel} ({problem})" for rel, problem in problems if problem is not None]


def write_json(path: Path, obj: dict) -> None:
    write_atomic(Path(path), json.dumps(obj, indent=1) + "\n")


def commit_level(run_dir: Path, level: int, stats: dict) -> Path:
    """stats.json into the temp directory, then the rename that commits it."""
    tmp = tmp_level_dir(run_dir, level)
    write_json(tmp / "stats.json", {**stats, "files": level_files(tmp)})
    final = level_dir(run_dir, level)
    if final.exists():  # a level re-done after an interrupted commit clean-up
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def rewrite_stats(run_dir: Path, level: int, stats: dict) -> None:
    """A committed level's stats.json replaced (the run's end), its file digests kept."""
    path = level_dir(run_dir, level) / "stats.json"
    try:
        files = json.loads(path.read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        files = None
    write_json(path, {**stats, "files": files} if files is not None else stats)


def clean_partial(run_dir: Path) -> None:
    """Remove temp levels an interrupted run left behind."""
    root = levels_dir(run_dir)
    if root.is_dir():
        for p in root.iterdir():
            if p.name.startswith(".level-"):
                shutil.rmtree(p, ignore_errors=True)
