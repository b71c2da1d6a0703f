"""The local engine's packed, spilled frontiers and level logs
(checker/search/frontier.py, checker.search.engine.LevelLog) give exactly the answers of
the all-in-memory path, and its spill folder goes away whatever the end."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from checker.search import registry
from checker.search.codec import StateDecoder
from checker.search.engine import (CHUNK_STATES, CheckOptions, ExpandContext, LevelLog, MemoryLimitError,
                            check, local_search)
from checker.search.frontier import Frontier, SpillDir

ROOT = Path(__file__).resolve().parents[2]


def build(spec: str):
    with open(ROOT / "specs" / spec, "rb") as f:
        s = tomllib.load(f)
    model, props = registry.build(s["model"], s.get("variant"), s.get("constants", {}))
    return model, registry.select_properties(props, s.get("invariants"))


@pytest.fixture
def writes(monkeypatch):
    """How many packed chunks the frontiers wrote."""
    count = [0]
    real = Frontier._write

    def spy(self):
        count[0] += len(self.entries) // self.chunk
        real(self)

    monkeypatch.setattr(Frontier, "_write", spy)
    return count


def figures(result):
    stats = result.statistics()
    for key in ("wall_time_s", "generated_per_s", "distinct_per_s", "peak_memory_kb", "bytes_per_state"):
        stats.pop(key)
    return stats


def traces(result):
    return [(v.property, v.depth, [(a, s) for a, s in v.trace]) for v in result.violations]


def both(spec: str, tmp_path: Path, threshold: int, **options):
    model, props = build(spec)
    memory = check(model, props, CheckOptions(spill_states=None, **options))
    model, props = build(spec)
    spilled = check(model, props, CheckOptions(spill_states=threshold, spill_dir=str(tmp_path),
                                               **options))
    assert list(tmp_path.iterdir()) == []  # the spill folder is gone
    return memory, spilled


def test_spilled_kraft_reference_search_gives_every_figure(tmp_path, writes):
    # kip966 reference within 7 steps: 24,252 states, levels up to 15,080
    memory, spilled = both("kraft-kip966-reference.toml", tmp_path, 700, max_depth=7)
    assert writes[0] == 3   # levels 5 (2,193 states) and 6 (5,980) came back from disk
    assert memory.distinct == 24252
    assert figures(spilled) == figures(memory)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 8 states (both paths), so that small state spaces pack."""
    from checker.search import core
    monkeypatch.setattr(core, "CHUNK_STATES", 8)


def test_spilled_search_finds_the_same_counterexample(tmp_path, writes, small_chunks):
    # the violation at depth 8 is found while expanding a packed level
    memory, spilled = both("mutants/skip_partition_epoch_check.toml", tmp_path, 16, max_depth=10)
    assert writes[0] > 0
    assert memory.violated == ["ReplicationQuorumSupersetProperty"]
    assert figures(spilled) == figures(memory)
    assert traces(spilled) == traces(memory)


def test_spilled_search_with_continue_and_128_bit_fingerprints(tmp_path, writes, small_chunks):
    # every violated property, each trace rebuilt from spilled level logs
    memory, spilled = both("mutants/skip_follower_hwm_check.toml", tmp_path, 4, max_depth=8,
                           stop_on_violation=False, fingerprint_bits=128)
    assert writes[0] > 0
    assert len(memory.violations) >= 1
    assert figures(spilled) == figures(memory)
    assert traces(spilled) == traces(memory)


def test_spilled_deadlocks_at_the_bound(tmp_path, writes, small_chunks):
    # states without successors, found in packed levels and, with a bound, in
    # the last level read back from disk
    found = 0
    for depth in (2, 3, 5, None):   # the first deadlock is 3 steps deep
        options = dict(max_depth=depth, check_deadlock=True, stop_on_violation=False)
        model, props = registry.build("randgraph", None, {"Nodes": 400, "Degree": 3, "Seed": 24,
                                                          "Initial": 3})
        memory = check(model, props, CheckOptions(spill_states=None, **options))
        spilled = check(model, props, CheckOptions(spill_states=3, spill_dir=str(tmp_path), **options))
        assert figures(spilled) == figures(memory)
        assert traces(spilled) == traces(memory)
        found += "Deadlock" in memory.violated
    assert found == 3 and writes[0] > 0
    assert list(tmp_path.iterdir()) == []


def test_frontier_chunks_are_the_lists_chunks(tmp_path):
    model, props = build("kraft-kip966-reference.toml")
    ctx = ExpandContext.create(model, props)
    entries = [ctx.entry(s) for s in model.init_states()]
    # a frontier of real successors: expand the initial states a few times
    for _ in range(4):
        entries = entries + [ctx.entry(s) for e in entries for _, s in model.successors(e[0])]
        entries = list({e[2]: e for e in entries}.values())
    spill = SpillDir(str(tmp_path))
    for chunk in (7, CHUNK_STATES):
        packed = Frontier(chunk, 10, spill, StateDecoder(model))
        plain = Frontier(chunk, None, None, None)
        for i in range(0, len(entries), 5):  # appended a few at a time, as chunks' results are
            packed.extend(entries[i:i + 5])
            plain.extend(entries[i:i + 5])
        assert packed.packed and not plain.packed and len(packed) == len(plain) == len(entries)
        got = list(packed.chunks())
        want = list(plain.chunks())
        assert [len(c) for c in got] == [len(c) for c in want]
        for a, b in zip(got, want):
            assert [(s, list(p), f) for s, p, f in a] == [(s, list(p), f) for s, p, f in b]
            assert all(isinstance(p, list) for _, p, _ in a)  # successors copy and patch it
        packed.close()
    assert list(spill.path.iterdir()) == []
    spill.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bits", [64, 128])
def test_level_log_spilled_in_blocks(tmp_path, bits):
    spill = SpillDir(str(tmp_path))
    log = LevelLog(bits, spill, block=3)
    high = (1 << 64) if bits == 128 else 0
    fps = [(i * 7919 + 1) | (high * (i % 3)) for i in range(10)]
    if bits == 128:
        fps[9] = fps[1] & ((1 << 64) - 1) | (5 << 64)   # same low half as fps[1]
    parents = [f + 1 for f in fps]
    for i in range(0, 10, 4):
        log.add(fps[i:i + 4], parents[i:i + 4], list(range(i, min(i + 4, 10))))
    assert log.spilled == 8 and len(log) == 10   # two blocks on disk, two entries in memory
    assert [log.find(f) for f in fps] == list(range(10))
    assert [log.parent(i) for i in range(10)] == parents
    assert [log.action(i) for i in range(10)] == list(range(10))
    assert list(log.fingerprints()) == fps
    with pytest.raises(ValueError):
        log.find(123456789)
    spill.close()
    assert list(tmp_path.iterdir()) == []


def test_spill_folder_removed_on_interrupt(tmp_path):
    model, props = build("kraft-kip966-reference.toml")

    def interrupt(info):
        if info["level"] >= 5:
            raise KeyboardInterrupt

    search = local_search(model, props, CheckOptions(max_depth=8, spill_states=100, spill_dir=str(tmp_path),
                                               progress=interrupt, progress_interval=0))
    with pytest.raises(KeyboardInterrupt):
        search.run()
    assert search.spill.path is None
    assert list(tmp_path.iterdir()) == []


def test_memory_limit_stops_the_search(tmp_path):
    model, props = build("kraft-kip966-reference.toml")
    search = local_search(model, props, CheckOptions(max_depth=8, max_memory=1 << 20, spill_states=100,
                                               spill_dir=str(tmp_path)))
    with pytest.raises(MemoryLimitError) as e:
        search.run()
    text = e.value.one_line()
    assert text.startswith("memory limit 1 MiB reached at level 0 after 10 distinct states")
    assert "--checkpoint" in text and "--max-memory" in text
    assert e.value.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_bytes_per_state_is_reported():
    model, props = build("toy-twophase.toml")
    r = check(model, props, CheckOptions())
    assert r.bytes_per_state == r.peak_memory_kb * 1024 // r.distinct > 0
    assert r.statistics()["bytes_per_state"] == r.bytes_per_state


def test_decoder_caches_dropped_mid_level_change_nothing(tmp_path, writes, small_chunks, monkeypatch):
    # caches of a few values: cleared again and again while levels are rebuilt
    from checker.search import core
    monkeypatch.setattr(core, "DECODER_LIMIT", 4)
    monkeypatch.setattr(core, "DECODER_SHARED_LIMIT", 16)
    memory, spilled = both("mutants/skip_partition_epoch_check.toml", tmp_path, 16, max_depth=10,
                           stop_on_violation=False)
    assert writes[0] > 0
    assert figures(spilled) == figures(memory)
    assert traces(spilled) == traces(memory)
