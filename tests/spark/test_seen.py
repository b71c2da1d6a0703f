"""The seen fingerprints as append-only sorted runs (checker/search/spark/seen.py),
in-process: lookups against a plain set, the log-structured compaction,
re-splitting, and that old runs are never rewritten."""
from __future__ import annotations

import os
import random

import pytest

from checker.search.spark import levels, seen


def _commit(root, level):
    """The temp folder of `level` renamed into place, as levels.commit_level does."""
    tmp = root / f".level-{level:05d}.tmp"
    os.replace(tmp, root / f"level-{level:05d}")
    return root / f"level-{level:05d}"


def _grow(root, levels_new, partitions, bits):
    """Levels of new fingerprints through SeenSet, checked against a set."""
    rng = random.Random(7)
    truth: list[set] = [set() for _ in range(partitions)]
    first = levels_new[0]
    tmp = root / ".level-00000.tmp"
    for q in range(partitions):
        mine = sorted(fp for fp in first if fp % partitions == q)
        seen.write_seen(tmp, 0, q, partitions, bits, mine)
        truth[q].update(mine)
    _commit(root, 0)
    for level, new in enumerate(levels_new[1:], start=1):
        tmp = root / f".level-{level:05d}.tmp"
        for q in range(partitions):
            s = seen.SeenSet(levels.previous_level(tmp, level), q, partitions, bits)
            assert s.count == len(truth[q])
            mine = {fp for fp in new if fp % partitions == q}
            # candidates: the new ones and some seen before
            old = rng.sample(sorted(truth[q]), min(len(truth[q]), len(mine) + 3))
            fresh = s.drop_seen(mine | set(old))
            assert fresh == mine - truth[q]
            s.write_next(tmp, level, sorted(fresh))
            truth[q] |= fresh
        _commit(root, level)
    return truth


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("scan_ratio", [0, 8, 10 ** 9])   # always bisect, measured, always scan
def test_lookups_match_a_set(tmp_path, monkeypatch, bits, scan_ratio):
    monkeypatch.setattr(seen, "SCAN_RATIO", scan_ratio)
    rng = random.Random(bits + scan_ratio)
    sizes = [5, 9, 30, 70, 40, 41, 12, 12, 12, 12, 12, 12, 12, 3, 0, 1]
    lv = [{rng.getrandbits(bits) for _ in range(n)} for n in sizes]
    # 128-bit fingerprints sharing their high word: the scan over equal high words
    lv[3] |= {(5 << 64) | i for i in range(10)} if bits == 128 else set()
    truth = _grow(tmp_path, lv, 2, bits)
    for q in range(2):
        idx = seen.read_index(tmp_path / f"level-{len(sizes) - 1:05d}", q)
        assert idx["count"] == len(truth[q])
        assert sum(r[2] for r in idx["runs"]) == len(truth[q])
        assert len(idx["runs"]) <= seen.MAX_RUNS
        got = set()
        for lvl, p, n in idx["runs"]:
            got.update(seen.load_run(seen.run_path(tmp_path, lvl, p), n, bits))
        assert got == truth[q]


def test_runs_are_never_rewritten_and_stay_few(tmp_path):
    """Equal levels (a plateau): runs pile up as a binary counter, a run
    file once written keeps its bytes, and a partition has O(log) runs."""
    rng = random.Random(1)
    lv = [{rng.getrandbits(64) for _ in range(50)} for _ in range(40)]
    stamps: dict = {}
    _grow(tmp_path, lv, 1, 64)
    counts = []
    for level in range(40):
        d = tmp_path / f"level-{level:05d}"
        idx = seen.read_index(d, 0)
        counts.append(len(idx["runs"]))
        assert idx["runs"][-1][0] == level  # every level wrote a run
        for lvl, p, n in idx["runs"]:
            path = seen.run_path(tmp_path, lvl, p)
            data = open(path, "rb").read()
            assert len(data) == 8 * n
            assert stamps.setdefault(path, data) == data
    assert max(counts) <= 6 and max(counts) >= 3  # log2(40) ~ 5.3
    # growing levels (BFS): the new run takes in the older ones, so one run
    lv = [{rng.getrandbits(64) for _ in range(3 * 2 ** i)} for i in range(8)]
    (tmp_path / "growing").mkdir()
    _grow(tmp_path / "growing", lv, 1, 64)
    assert len(seen.read_index(tmp_path / "growing" / "level-00007", 0)["runs"]) == 1


def test_plan_merges_the_newest_runs_while_as_big():
    runs = [[0, 0, 100], [1, 0, 40], [2, 0, 10]]
    assert seen._plan(runs, 5) == (runs, [])
    assert seen._plan(runs, 10) == (runs[:2], [runs[2]])
    assert seen._plan(runs, 30) == (runs[:1], [runs[2], runs[1]])
    assert seen._plan(runs, 60) == ([], [runs[2], runs[1], runs[0]])
    many = [[i, 0, 1000 >> i] for i in range(seen.MAX_RUNS)]
    keep, take = seen._plan(many, 1)
    assert len(keep) + 1 <= seen.MAX_RUNS and take


@pytest.mark.parametrize("old,new", [(1, 2), (2, 3), (4, 2)])
def test_a_new_partition_count_re_splits_the_seen_set(tmp_path, old, new):
    rng = random.Random(old * 10 + new)
    first = {rng.getrandbits(64) for _ in range(200)}
    tmp = tmp_path / ".level-00000.tmp"
    for q in range(old):
        seen.write_seen(tmp, 0, q, old, 64, sorted(fp for fp in first if fp % old == q))
    _commit(tmp_path, 0)
    more = {rng.getrandbits(64) for _ in range(100)}
    tmp = tmp_path / ".level-00001.tmp"
    for q in range(new):
        s = seen.SeenSet(tmp_path / "level-00000", q, new, 64)
        mine = {fp for fp in first | more if fp % new == q}
        assert s.count == len({fp for fp in first if fp % new == q})
        fresh = s.drop_seen(set(mine))
        assert fresh == {fp for fp in more if fp % new == q}
        idx = s.write_next(tmp, 1, sorted(fresh))
        assert idx["partitions"] == new and len(idx["runs"]) == 1
        assert set(seen.load_run(os.path.join(tmp, "seen", f"part-{q:05d}.run"), idx["count"], 64)) == mine


def test_a_missing_index_is_one_clear_error(tmp_path):
    (tmp_path / "level-00003").mkdir()
    with pytest.raises(seen.SeenFormatError, match="no seen index"):
        seen.SeenSet(tmp_path / "level-00003", 0, 2, 64)
