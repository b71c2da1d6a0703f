"""What states are packed as: the Spark engine's records (on executors and in
level files) and the local engine's spilled frontiers (checker/search/frontier.py).
No pyspark here.

- A state travels as the list of its variables' canonical msgpack encodings
  ("parts", checker.search.encoding); `parts_to_bytes(parts)` is its canonical bytes.
  Lists of parts pack as msgpack arrays of bins, which unpack in C without
  re-splitting the canonical bytes.
- Fingerprints travel packed: 8 bytes (xxh3_64) or 16 bytes (xxh3_128) each,
  little-endian.
- A BFS position ("key") is the local engine's discovery order made explicit:
  the key of an initial state is its index among the distinct initial states,
  the key of a successor is its parent's key followed by its rank among the
  parent's successors that were new to the expanding task. Components are
  order-preserving and prefix-free (2 bytes, or 0xFFFF + 4 bytes), so
  comparing keys as bytes compares discovery order: level k+1 in the local
  engine is exactly the new states sorted by the minimum key of their
  witnesses, and the first witness is the parent the local engine records.
"""
from __future__ import annotations

import sys
from array import array
from itertools import repeat
from typing import Sequence

import msgpack

from checker.search import native
from checker.search.encoding import decode, decode_state, encode, parts_to_bytes

__all__ = ["key_component", "child_key", "key_components", "parent_key", "pack_fps", "unpack_fps",
           "fp_to_str", "fp_from_str", "pack", "unpack", "pack_states", "unpack_columns",
           "unpack_states", "pack_picks", "unpack_picks", "picked", "StateDecoder"]

_BIG = sys.byteorder == "big"
_columns = native._native.columns if native.ENABLED else None


# ---- BFS positions -----------------------------------------------------------

def key_component(i: int) -> bytes:
    """Order-preserving, prefix-free encoding of a non-negative int."""
    if i < 0xFFFF:
        return i.to_bytes(2, "big")
    return b"\xff\xff" + i.to_bytes(4, "big")


_COMPONENTS = [key_component(i) for i in range(4096)]


def child_key(parent_key: bytes, rank: int) -> bytes:
    return parent_key + (_COMPONENTS[rank] if rank < 4096 else key_component(rank))


def key_components(key: bytes) -> list[int]:
    out, i = [], 0
    while i < len(key):
        if key[i:i + 2] == b"\xff\xff":
            out.append(int.from_bytes(key[i + 2:i + 6], "big"))
            i += 6
        else:
            out.append(int.from_bytes(key[i:i + 2], "big"))
            i += 2
    return out


def parent_key(key: bytes) -> bytes:
    """The key without its last component (the parent's position)."""
    comps = key_components(key)
    return b"".join(key_component(c) for c in comps[:-1])


# ---- fingerprints ------------------------------------------------------------

def pack_fps(fps: Sequence[int], bits: int = 64) -> bytes:
    if bits == 64:
        a = array("Q", fps)
        if _BIG:
            a.byteswap()
        return a.tobytes()
    return b"".join(f.to_bytes(16, "little") for f in fps)


def unpack_fps(data: bytes | None, bits: int = 64):
    """A sequence of ints (an array for 64-bit fingerprints)."""
    if not data:
        return array("Q") if bits == 64 else []
    if bits == 64:
        a = array("Q")
        a.frombytes(data)
        if _BIG:
            a.byteswap()
        return a
    return [int.from_bytes(data[i:i + 16], "little") for i in range(0, len(data), 16)]


def fp_to_str(fp: int) -> str:
    return f"{fp:x}"


def fp_from_str(text: str) -> int:
    return int(text, 16)


# ---- record batches ------------------------------------------------------------

def pack(obj) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def unpack(data: bytes):
    return msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=False)


def pack_states(states: Sequence[Sequence[bytes]]) -> bytes:
    """A batch of states (their parts lists, all of one length) column by
    column, each distinct part of a variable stored once: msgpack [n,
    per variable [the one part] or [distinct parts, index typecode, indices as
    a packed array]]. The states of a batch share most of their variables'
    values. The columns are built in C where it is compiled
    (checker/search/_native.c, columns: it was 6% of an expand task),
    else with C loops (dict.fromkeys, map): a Python loop over every part
    cost a tenth of a task's time."""
    if _columns is not None and type(states) is list:
        try:
            return pack([len(states), _columns(states)])
        except TypeError:  # parts that are not bytes, states of several lengths: as below
            pass
    return pack([len(states), _py_columns(states)])


def _py_columns(states: Sequence[Sequence[bytes]]) -> list:
    """pack_states' columns in Python: the twin of _native.columns."""
    cols = []
    for col in zip(*states):
        table = list(dict.fromkeys(col))
        if len(table) == 1:
            cols.append(table)
            continue
        index = {p: i for i, p in enumerate(table)}
        a = array("H" if len(table) <= 0xFFFF else "I", map(index.__getitem__, col))
        if _BIG:
            a.byteswap()
        cols.append([table, a.typecode, a.tobytes()])
    return cols


def unpack_columns(data: bytes, picks: array | None = None) -> tuple[int, list]:
    """A packed batch as (n, per variable (distinct parts, indices or None
    when the variable has one part in the whole batch)); with `picks` (the
    indices of the states wanted, ascending) only those states."""
    n, cols = unpack(data)
    out = []
    for col in cols:
        if len(col) == 1:
            out.append((col, None))
            continue
        table, code, raw = col
        a = array(code)
        a.frombytes(raw)
        if _BIG:
            a.byteswap()
        if picks is not None:
            a = array(code, map(a.__getitem__, picks))
        out.append((table, a))
    return (n if picks is None else len(picks)), out


def unpack_states(data: bytes, picks: array | None = None) -> list[list[bytes]]:
    """The parts lists back (of the states `picks` names, if given); equal
    parts are one bytes object (hashed once)."""
    n, cols = unpack_columns(data, picks)
    if not cols:
        return [[] for _ in range(n)]
    return list(map(list, zip(*(_column(t, a, n) for t, a in cols))))


def pack_picks(indices: Sequence[int]) -> bytes:
    """The indices of the states of a batch that a level row keeps
    (ascending, each < 2**16), packed."""
    a = array("H", indices)
    if _BIG:
        a.byteswap()
    return a.tobytes()


def unpack_picks(data: bytes | None) -> array | None:
    """pack_picks' indices back (None: every state of the batch)."""
    if data is None:
        return None
    a = array("H")
    a.frombytes(data)
    if _BIG:
        a.byteswap()
    return a


def picked(items: Sequence, picks: array | None) -> Sequence:
    """The items a batch's picks name (all of them when picks is None)."""
    return items if picks is None else [items[i] for i in picks]


def _column(table: list, idx, n: int):
    """One variable's n entries of a batch (an iterator)."""
    return repeat(table[0], n) if idx is None else map(table.__getitem__, idx)


# ---- states back from their parts ----------------------------------------------

_MISSING = object()
_UNUSED = (None, None)


class StateDecoder:
    """Rebuilds states from their parts with a per-variable cache: part bytes ->
    (the canonical bytes object, the rebuilt value). Most variables take few
    distinct values across a level, so a state usually costs a few dict
    lookups. A part not cached is decoded and rebuilt alone when the model
    has per-variable converters (`plain_converters()`, from_plain one
    variable at a time), else the whole state is, with model.from_plain, and
    its parts are cached.
    Rebuilt states share their sub-objects, which the encoder's identity cache
    exploits: a value rebuilt on a miss is encoded once right away, which
    puts it and its sub-objects in that cache (checker.search.encoding.encode), so
    the successors that keep most of it re-encode their changes only, as in
    the local engine, where every value was encoded when it was made."""

    LIMIT = 1 << 17  # entries per variable before that variable's cache is dropped

    def __init__(self, model):
        self.model = model
        self.caches: list[dict] = [dict() for _ in model.variables]
        self.shared: dict = {}    # _share's table
        self.make = None  # the state class's _make, learnt from from_plain
        converters = getattr(model, "plain_converters", None)
        self.converters = converters() if converters is not None else None

    def decode(self, parts: Sequence[bytes]):
        """(state, canonical parts list)."""
        caches = self.caches
        hits = [c.get(p, _MISSING) for c, p in zip(caches, parts)]
        if _MISSING in hits and self.converters is not None and self.make is not None:
            hits = [self._part(i, p) if h is _MISSING else h for i, (p, h) in enumerate(zip(parts, hits))]
        if _MISSING not in hits and self.make is not None:
            return self.make([h[1] for h in hits]), [h[0] for h in hits]
        state = self.model.from_plain(decode_state(parts_to_bytes(parts)))
        return self._fill(parts, state, hits)

    def _part(self, i: int, p: bytes) -> tuple:
        """The cache entry (p, value) of part p of variable i, not cached yet:
        the value rebuilt alone, made of shared sub-values, encoded once."""
        c = self.caches[i]
        if len(c) >= self.LIMIT:
            c.clear()
        v = self._share(self.converters[i](decode(p)))
        encode(v)
        h = c[p] = (p, v)
        return h

    def decode_batch(self, data: bytes, picks: array | None = None) -> list[tuple]:
        """decode() of every state of a packed batch (pack_states), or of
        those `picks` names, column by column: each distinct part of a
        variable is looked up once, and the states are assembled by C loops.
        A part not cached yet is rebuilt alone (the model's
        plain_converters), or else the states that have one are first
        decoded one by one (which caches their parts)."""
        n, cols = unpack_columns(data, picks)
        alone = self.converters is not None and self.make is not None
        for attempt in range(2):
            looked = []
            bad_rows: set = set()
            for i, (c, (table, idx)) in enumerate(zip(self.caches, cols)):
                hits = [c.get(p, _MISSING) for p in table]
                if _MISSING in hits and alone:  # each new part rebuilt alone (if a state has it)
                    used = set(idx) if picks is not None and idx is not None else None
                    hits = [h if h is not _MISSING else self._part(i, table[t]) if used is None or t in used
                            else _UNUSED for t, h in enumerate(hits)]
                elif _MISSING in hits:
                    bad = {t for t, h in enumerate(hits) if h is _MISSING}
                    bad_rows.update(range(n) if idx is None else
                                    (j for j, t in enumerate(idx) if t in bad))
                    # (a part no picked state has: never looked at again)
                    hits = [_UNUSED if h is _MISSING else h for h in hits]
                looked.append((hits, idx))
            if not bad_rows and self.make is not None and cols:
                values = [_column([h[1] for h in hits], idx, n) for hits, idx in looked]
                canons = [_column([h[0] for h in hits], idx, n) for hits, idx in looked]
                return list(zip(map(self.make, zip(*values)), map(list, zip(*canons))))
            if attempt == 0 and len(bad_rows) < n:
                rows = sorted(bad_rows)
                columns = [list(_column(t, a, n)) for t, a in cols]
                for j in rows:
                    self.decode([col[j] for col in columns])
                continue
            break
        # many misses (or a cache dropped meanwhile): one by one
        return [self.decode(parts) for parts in unpack_states(data, picks)]

    SHARED_LIMIT = 1 << 18

    def _share(self, x):
        """x with every tuple (NamedTuples too) and frozenset in it replaced by
        the first equal one rebuilt (hash-consing, by type and the identity
        of the already shared elements). The local engine's states share
        what an action left unchanged, down to the records of a log; rebuilt
        values would share nothing, and the encoder's and the properties'
        identity caches miss on every copy."""
        t = type(x)
        if t is frozenset or isinstance(x, tuple):
            table = self.shared
            kids = [self._share(k) for k in x]
            key = (t, frozenset(map(id, kids)) if t is frozenset else tuple(map(id, kids)))
            hit = table.get(key)
            if hit is not None:
                return hit
            if any(a is not b for a, b in zip(kids, x)):  # (a frozenset iterates in one order)
                make = t if t is frozenset or t is tuple else getattr(t, "_make", None)
                if make is None:
                    return x  # a tuple type kmc cannot rebuild: left unshared
                x = make(kids)
            if len(table) >= self.SHARED_LIMIT:
                table.clear()
            table[key] = x  # x holds its elements: their ids stay theirs
        return x

    def _fill(self, parts, state, hits):
        """(state made of cached values, canonical parts) of a rebuilt state:
        the values not yet cached are made of shared sub-values, encoded once
        (so the encoder knows them) and cached."""
        if self.make is None:
            self.make = type(state)._make
        canon = []
        values = []
        for c, p, v, h in zip(self.caches, parts, state, hits):
            if h is _MISSING:
                if len(c) >= self.LIMIT:
                    c.clear()
                v = self._share(v)
                h = c[p] = (p, v)
                encode(v)
            canon.append(h[0])
            values.append(h[1])
        return self.make(values), canon
