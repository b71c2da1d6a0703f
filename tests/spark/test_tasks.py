"""The executors' task functions, in-process (no Spark): the level files and
the checks of the level at the depth bound."""
from __future__ import annotations

import gc
import json

from checker.search import codec
from checker.search.checks import Checks
from checker.search.engine import ExpandContext, expand_chunk
from checker.search.spark import levels, tasks
from model.base import ALWAYS, EvaluationError, Property


def _cfg(partitions: int = 2) -> tasks.TaskConfig:
    return tasks.TaskConfig(model="twophase", variant=_variant(),
                            constants_json=json.dumps({"RMCount": 3}, sort_keys=True),
                            properties=(), projection=None, partitions=partitions)


def _variant():
    from checker.search import registry
    return registry.variant_constants(registry.model_def("twophase"), None)[0]


def test_level_files_round_trip(tmp_path):
    rows = [(tasks.STATES, 1, 0, 2, b"\x01" * 16, codec.pack([b"\x00\x01", b"\x00\x02"]),
             b"\x00" * 16, codec.pack([None, None]), codec.pack_states([[b"\xc0"], [b"\xc3"]]),
             codec.pack([1, 3]), None),
            (tasks.STATES, 1, 1, 1, b"\x02" * 16, codec.pack([b"\x00\x03", b"\x00\x04"]), b"\x00" * 16,
             codec.pack([None, None]), None, None, codec.pack_picks([1]))]
    path = levels.write_part(tmp_path, 1, rows)
    assert levels.part_files(tmp_path) == [path]
    back = list(levels.read_part(path))
    assert [tuple(r[c] for c in levels.COLUMNS) for r in back] == rows
    assert not [p for p in (tmp_path / "rows").iterdir() if p.name.endswith(".tmp")]


def test_a_level_splits_into_key_ranges_of_about_as_many_states():
    """levels.key_ranges cuts at row boundaries by state count; range_slices
    gives each range the byte spans of the rows that may hold its keys."""
    k = codec.key_component
    # [partition, start byte, end byte, states, first key, last key], rows of two files
    index = [[0, 0, 10, 4, k(0), k(6)], [0, 10, 20, 4, k(8), k(15)],
             [1, 0, 10, 4, k(1), k(7)], [1, 10, 20, 4, k(9), k(14)]]
    assert levels.key_ranges(index, 2) == [k(8)]
    assert levels.key_ranges(index, 4) == [k(1), k(8), k(9)]
    assert levels.key_ranges(index, 1) == []
    assert levels.key_ranges([[0, 0, 0, 0, k(0), k(0)]], 2) == []   # an empty level: one task
    # weights: the shares of the states in key order (16 states: 8, 4, 4), and
    # ranges smaller than a row merge with the next (cuts fall on row starts)
    assert levels.key_ranges(index, [2, 1, 1]) == [k(8), k(9)]
    assert levels.key_ranges(index, [1, 1]) == levels.key_ranges(index, 2)
    assert levels.key_ranges(index, [12, 1, 1, 1, 1]) == [k(9)]
    assert levels.guided_weights(2) == [38, 38, 1, 1, 1, 1]
    p0, p1 = levels.part_path("L", 0), levels.part_path("L", 1)
    assert levels.range_slices("L", index, [k(8)]) == [
        [(p0, 0, 10, None, k(8)), (p1, 0, 10, None, k(8))],
        [(p0, 10, 20, k(8), None), (p1, 10, 20, k(8), None)]]
    # a cut inside a row: the row goes to both sides, its keys split by the range
    assert levels.range_slices("L", index, [k(3)]) == [
        [(p0, 0, 10, None, k(3)), (p1, 0, 10, None, k(3))],
        [(p0, 0, 20, k(3), None), (p1, 0, 20, k(3), None)]]


def test_a_task_reads_its_slice_of_a_level_file(tmp_path):
    """read_part of a byte span gives that span's rows; with a key range the
    frontier keeps only the states in it."""
    k = codec.key_component
    rows, offsets = [], []
    for seq, keys in enumerate([[k(0), k(2)], [k(4), k(6)]]):
        rows.append((tasks.STATES, 0, seq, 2, codec.pack_fps([10 + seq, 20 + seq]), codec.pack(keys),
                     codec.pack_fps([0, 0]), codec.pack([None, None]), codec.pack_states([[b"\xc0"], [b"\xc3"]]),
                     None, None))
    path = levels.write_part(tmp_path, 0, rows, offsets)
    assert offsets[0][0] == 0 and offsets[0][1] == offsets[1][0] and offsets[1][1] == (tmp_path / path).stat().st_size
    back = list(levels.read_part(path, *offsets[1]))
    assert [r["seq"] for r in back] == [1] and "range" not in back[0]

    class Decoder:
        def decode_batch(self, packed, picks=None):
            return [(None, parts) for parts in codec.unpack_states(packed, picks)]

    def frontier(*slice_):
        return [(e[0], e[1]) for e in tasks._read_frontier(_cfg(), levels.read_part(path, *slice_), Decoder())]

    assert frontier(0, None, k(2), k(6)) == [(k(2), 20), (k(4), 11)]
    assert frontier(*offsets[1], None, k(6)) == [(k(4), 11)]
    assert frontier() == [(k(0), 10), (k(2), 20), (k(4), 11), (k(6), 21)]


def test_a_level_without_a_row_index_is_read_a_file_per_task(tmp_path):
    """Level 0 (written by the driver) and the levels of runs made before the
    index have no `rows` in their statistics: one task per file, as then."""
    k = codec.key_component
    for q in (0, 1):
        row = (tasks.STATES, q, 0, 1, codec.pack_fps([q]), codec.pack([k(q)]), codec.pack_fps([0]),
               codec.pack([None]), codec.pack_states([[b"\xc0"]]), None, None)
        levels.write_part(tmp_path, q, [row])
        if q == 0:
            tasks.write_stats(str(levels.stats_dir(tmp_path)), q, {"part": q})
    whole = [[(levels.part_path(tmp_path, 0),)], [(levels.part_path(tmp_path, 1),)]]
    assert levels.task_inputs(tmp_path, 2) == whole   # one stats file missing
    tasks.write_stats(str(levels.stats_dir(tmp_path)), 1, {"part": 1})
    assert levels.task_inputs(tmp_path, 2) == whole   # no index in them
    for q in (0, 1):
        tasks.write_stats(str(levels.stats_dir(tmp_path)), q, {"part": q, "rows": [[q, 0, 10, 1, k(q), k(q)]]})
    assert levels.task_inputs(tmp_path, 2) == [[(levels.part_path(tmp_path, 0), 0, 10, None, k(1))],
                                               [(levels.part_path(tmp_path, 1), 0, 10, k(1), None)]]


def test_shuffled_records_round_trip():
    records = [(7, b"\x00\x01\x00\x00", 3, b"a", [b"\x01", b"\x02"], 1),
               (9, b"\x00\x01\x00\x01", 3, b"b", [b"\x01", b"\x03"], 6)]
    packed = tasks.pack_records(records, 64)
    assert all(isinstance(x, bytes) for x in packed)
    picks = [(records[1][1], 0, 1, 9), (records[0][1], 0, 0, 7)]
    assert tasks.unpack_records([packed], picks, 64) == [
        (9, records[1][1], 3, b"b", [b"\x01", b"\x03"], 6),
        (7, records[0][1], 3, b"a", [b"\x01", b"\x02"], 1)]


def test_the_merge_writes_the_shipped_batches_with_picks(tmp_path):
    """Batches of disjoint key ranges (the expand tasks' ranges of BFS order)
    become the level's rows as they were shipped, each with the indices of
    the states it wins: not seen in earlier levels, and the smallest key of
    their fingerprint. Batches of interleaved keys (tasks of whole files)
    are sorted and packed again. Either way the next job reads the same new
    states in BFS order."""
    from checker.search.encoding import encode
    from checker.search.spark import seen

    class Decoder:
        def decode_batch(self, packed, picks=None):
            return [(None, parts) for parts in codec.unpack_states(packed, picks)]

    cfg = _cfg(partitions=1)
    go = encode(("Go", ()))
    k = codec.key_component

    def batch(*fps_keys):
        return ("S", tasks.pack_records([(fp, key, 0, go, [bytes([fp])], 1) for fp, key in fps_keys], 64))

    def merged(name, *batches):
        root = tmp_path / name / "levels"
        seen.write_seen(root / "level-00000", 0, 0, 1, 64, [5])   # fingerprint 5 seen in level 0
        out = root / ".level-00001.tmp"
        items = [(0, b) for b in batches] + [(0, ("T", {"task": 1})), (0, ("T", {"task": 0}))]
        enabled = gc.isenabled()   # (a merge task turns its process's collector off)
        try:
            stats, = tasks.merge_partition(cfg, 1, str(out), 0, iter(items))
        finally:
            if enabled:
                gc.enable()
        rows = list(levels.read_part(levels.part_path(out, 0)))
        got = [(e[0], e[1], e[3]) for e in tasks._read_frontier(cfg, rows, Decoder())]
        return stats, rows, got

    a = [(1, k(0) + k(0)), (2, k(0) + k(1)), (5, k(0) + k(2))]   # task 0's range
    b = [(2, k(1) + k(0)), (3, k(1) + k(1))]                      # task 1's: 2 again, with a bigger key
    stats, rows, got = merged("ranges", batch(*b), batch(*a))     # (the shuffle's order)
    want = [(k(0) + k(0), 1, [b"\x01"]), (k(0) + k(1), 2, [b"\x02"]), (k(1) + k(1), 3, [b"\x03"])]
    assert got == want
    assert [codec.unpack_picks(r["picks"]).tolist() for r in rows] == [[0, 1], [1]]
    assert [r["n"] for r in rows] == [2, 1] and [r["seq"] for r in rows] == [0, 1]
    assert stats["new"] == 3 and stats["by_action"] == {"Go": 3} and stats["seen_total"] == 4
    assert [e["task"] for e in stats["expand"]] == [0, 1]
    assert [r[3:] for r in stats["rows"]] == [[2, k(0) + k(0), k(0) + k(1)], [1, k(1) + k(1), k(1) + k(1)]]
    # a batch whose states are all new is written without picks
    _, rows, got = merged("all-new", batch(*b[1:]), batch(*a[:2]))
    assert got == want and [r["picks"] for r in rows] == [None, None]
    # interleaved keys: one row, sorted, packed again
    stats, rows, got = merged("interleaved", batch(a[0], a[2], b[1]), batch(a[1], b[0]))
    assert got == want and len(rows) == 1 and rows[0]["picks"] is None and stats["new"] == 3


def test_checks_at_the_bound_note_an_evaluation_error_instead_of_raising():
    """A property that raises while the bound level is generated does not
    stop the task: it is noted, and the driver then checks that level the
    other way (rebuilding its states), which reports the error in BFS order."""
    w = tasks.Worker(_cfg())
    ctx = ExpandContext.create(w.model, [], 64)
    entries = [ctx.entry(s) for s in w.model.init_states()]
    res = expand_chunk(ctx, entries, {e[2] for e in entries})
    keys = [codec.child_key(b"\x00\x00", i) for i in range(len(res.new))]

    def raises(state):
        raise EvaluationError("cannot evaluate")

    def invariants(*named):  # reading every variable (reads None)
        return Checks(w.model, [Property(name, ALWAYS, pred) for name, pred in named])

    w.checks = invariants(("Fine", lambda s: True), ("Raises", raises))
    checks = tasks._NextChecks(w, ())
    checks.check(res.new, keys, res.changed)
    assert checks.failed and checks.violations == {}
    w.checks = invariants(("Fine", lambda s: True), ("Never", lambda s: False))
    checks = tasks._NextChecks(w, ())
    checks.check(res.new, keys, res.changed)
    assert not checks.failed
    assert checks.violations == {"Never": [keys[0], codec.fp_to_str(res.new[0][2])]}
    # a property reading no variable the step changed is not checked again
    w.checks = Checks(w.model, [Property("Never", ALWAYS, lambda s: False, reads=())])
    checks = tasks._NextChecks(w, ())
    checks.check(res.new, keys, res.changed)
    assert checks.violations == {}


def test_state_batches_pack_by_column():
    """pack_states stores each variable's distinct parts once (a one-part
    column without indices) and unpacks to the same parts lists; more than
    65,535 distinct parts of a variable take 32-bit indices."""
    states = [[b"\xc0", bytes([i % 3]), b"\x01"] for i in range(10)]
    packed = codec.pack_states(states)
    n, cols = codec.unpack_columns(packed)
    assert n == 10 and [idx is None for _, idx in cols] == [True, False, True]
    assert cols[1][0] == [b"\x00", b"\x01", b"\x02"]
    assert codec.unpack_states(packed) == states
    many = [[i.to_bytes(3, "big"), b"x"] for i in range(70_000)]
    n, cols = codec.unpack_columns(codec.pack_states(many))
    assert cols[0][1].typecode == "I"
    assert codec.unpack_states(codec.pack_states(many)) == many
    assert codec.unpack_states(codec.pack_states([])) == []


def _kraft_level(depth: int):
    """The kraft kip966 model (default constants) and its states `depth`
    steps from the initial ones, as (state, parts, fingerprint)."""
    from checker.search import registry
    model, _ = registry.build("kraft", "kip966", {})
    ctx = ExpandContext.create(model, [], 64)
    frontier = [ctx.entry(s) for s in model.init_states()]
    seen = {e[2] for e in frontier}
    for _ in range(depth):
        frontier = [(s, parts, fp) for s, parts, fp, _, _ in expand_chunk(ctx, frontier, seen).new]
    return model, frontier


def test_batch_decode_is_decode_state_by_state():
    """StateDecoder.decode_batch rebuilds a batch column by column: the same
    states and canonical parts as decode() one by one, with some parts in
    the cache already and some not."""
    from checker.search.encoding import encode_state
    model, frontier = _kraft_level(4)
    parts = [list(encode_state(s)) for s, _, _ in frontier]
    assert len(parts) > 100
    warm = codec.StateDecoder(model)
    for p in parts[:len(parts) // 2]:   # half the batch's values cached
        warm.decode(p)
    whole = codec.StateDecoder(model)   # a model without per-variable converters
    whole.converters = None
    whole.decode(parts[0])
    for decoder in (codec.StateDecoder(model), warm, whole):
        got = decoder.decode_batch(codec.pack_states(parts))
        assert [s for s, _ in got] == [s for s, _, _ in frontier]
        assert [c for _, c in got] == parts
    # only the states a row picks
    picks = codec.unpack_picks(codec.pack_picks(range(1, len(parts), 3)))
    hot = codec.StateDecoder(model)
    for i in picks:   # the picked states' parts cached, not all the others'
        hot.decode(parts[i])
    for decoder in (codec.StateDecoder(model), warm, hot):
        got = decoder.decode_batch(codec.pack_states(parts), picks)
        assert [s for s, _ in got] == [frontier[i][0] for i in picks]
        assert [c for _, c in got] == [parts[i] for i in picks]
    assert codec.unpack_states(codec.pack_states(parts), picks) == [parts[i] for i in picks]


def test_rebuilt_states_share_equal_sub_values():
    """StateDecoder shares what the local engine's states share: equal
    sub-values of rebuilt states (a broker's row, a log record) are one
    object, of the same type as the model made it (NamedTuples, IntEnums)."""
    from checker.search.encoding import encode_state
    model, frontier = _kraft_level(4)
    decoder = codec.StateDecoder(model)
    rebuilt = [decoder.decode(list(encode_state(s)))[0] for s, _, _ in frontier]
    assert rebuilt == [s for s, _, _ in frontier]

    def walk(x):
        yield x
        if isinstance(x, (tuple, frozenset)):
            for k in x:
                yield from walk(k)

    def same_types(a, b):
        return type(a) is type(b) and (not isinstance(a, (tuple, frozenset))
                                       or all(same_types(x, y) for x, y in zip(sorted(a, key=repr) if isinstance(a, frozenset) else a,
                                                                               sorted(b, key=repr) if isinstance(b, frozenset) else b)))

    assert all(same_types(r, s) for r, (s, _, _) in zip(rebuilt, frontier))
    # every tuple or frozenset met, by its repr (types by name, so that
    # BrokerFetcher(None, False) and PeerReplicaState(None, 0), equal as
    # tuples, stay apart), is one object
    by_value: dict = {}
    for state in rebuilt:
        for x in walk(state):
            if isinstance(x, (tuple, frozenset)) and len(x) > 1:
                by_value.setdefault((type(x), repr(x)), set()).add(id(x))
    assert by_value and all(len(ids) == 1 for ids in by_value.values())
