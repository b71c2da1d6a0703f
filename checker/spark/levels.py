"""The durable levels of a Spark run, under the run's results folder:

    <run>/run.json                      what is being checked (resume checks it)
    <run>/spark.log                     the JVM's output (when this run launched it)
    <run>/levels/level-00007/parquet/   one finished BFS level, one Parquet file per
                                        fingerprint partition; rows by `kind`:
        states   up to 2048 new states: packed fingerprints, BFS keys, parent
                 fingerprints, actions (msgpack), states (per-variable canonical
                 msgpack encodings); `part` = fingerprint partition
        seen     every fingerprint seen so far in that partition (`seq` = the
                 partition count it was split with)
    <run>/levels/level-00007/stats/     per partition, the level's statistics (msgpack)
    <run>/levels/level-00007/stats.json cumulative statistics after this level

A level is written to levels/.level-00007.tmp and renamed when complete (its
stats.json included), so a level directory without the leading dot is whole.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from checker.results import write_atomic

LEVEL_RE = re.compile(r"^level-(\d{5,})$")


def levels_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "levels"


def level_dir(run_dir: Path, level: int) -> Path:
    return levels_dir(run_dir) / f"level-{level:05d}"


def tmp_level_dir(run_dir: Path, level: int) -> Path:
    return levels_dir(run_dir) / f".level-{level:05d}.tmp"


def parquet_dir(level_path: Path) -> Path:
    return Path(level_path) / "parquet"


def stats_dir(level_path: Path) -> Path:
    return Path(level_path) / "stats"


def read_partition_stats(level_path: Path) -> list[dict]:
    from checker.spark.codec import unpack
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
    return json.loads((level_dir(run_dir, level) / "stats.json").read_text())


def write_json(path: Path, obj: dict) -> None:
    write_atomic(Path(path), json.dumps(obj, indent=1) + "\n")


def commit_level(run_dir: Path, level: int, stats: dict) -> Path:
    """stats.json into the temp directory, then the rename that commits it."""
    tmp = tmp_level_dir(run_dir, level)
    write_json(tmp / "stats.json", stats)
    final = level_dir(run_dir, level)
    if final.exists():  # a level re-done after an interrupted commit clean-up
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def clean_partial(run_dir: Path) -> None:
    """Remove temp levels an interrupted run left behind."""
    root = levels_dir(run_dir)
    if root.is_dir():
        for p in root.iterdir():
            if p.name.startswith(".level-"):
                shutil.rmtree(p, ignore_errors=True)
