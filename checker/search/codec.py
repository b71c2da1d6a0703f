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

from checker.search.encoding import decode_state, encode, parts_to_bytes

__all__ = ["key_component", "child_key", "key_components", "parent_key", "pack_fps", "unpack_fps",
           "fp_to_str", "fp_from_str", "pack", "unpack", "pack_states", "unpack_columns",
           "unpack_states", "StateDecoder"]

_BIG = sys.byteorder == "big"
_MASK64 = (1 << 64) - 1


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
    values; the columns are built with C loops (dict.fromkeys, map), where a
    Python loop over every part cost a tenth of a task's time."""
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
    return pack([len(states), cols])


def unpack_columns(data: bytes) -> tuple[int, list]:
    """A packed batch as (n, per variable (distinct parts, indices or None
    when the variable has one part in the whole batch))."""
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
        out.append((table, a))
    return n, out


def unpack_states(data: bytes) -> list[list[bytes]]:
    """The parts lists back; equal parts are one bytes object (hashed once)."""
    n, cols = unpack_columns(data)
    if not cols:
        return [[] for _ in range(n)]
    return list(map(list, zip(*(_column(t, a, n) for t, a in cols))))


def _column(table: list, idx, n: int):
    """One variable's n entries of a batch (an iterator)."""
    return repeat(table[0], n) if idx is None else map(table.__getitem__, idx)


# ---- states back from their parts ----------------------------------------------

_MISSING = object()


class StateDecoder:
    """Rebuilds states from their parts with a per-variable cache: part bytes ->
    (the canonical bytes object, the rebuilt value). Most variables take few
    distinct values across a level, so a state usually costs a few dict
    lookups; on a miss the whole state is decoded and rebuilt with
    model.from_plain (the model's own rebuild) and every part is cached.
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

    def decode(self, parts: Sequence[bytes]):
        """(state, canonical parts list)."""
        caches = self.caches
        hits = [c.get(p, _MISSING) for c, p in zip(caches, parts)]
        if _MISSING not in hits and self.make is not None:
            return self.make([h[1] for h in hits]), [h[0] for h in hits]
        state = self.model.from_plain(decode_state(parts_to_bytes(parts)))
        return self._fill(parts, state, hits, True)

    def decode_batch(self, data: bytes) -> list[tuple]:
        """decode() of every state of a packed batch (pack_states), column by
        column: each distinct part of a variable is looked up once, and the
        states are assembled by C loops. States with a part not cached yet
        are first decoded one by one (which caches their parts)."""
        n, cols = unpack_columns(data)
        for attempt in range(2):
            looked = []
            bad_rows: set = set()
            for c, (table, idx) in zip(self.caches, cols):
                hits = [c.get(p, _MISSING) for p in table]
                if _MISSING in hits:
                    bad = {i for i, h in enumerate(hits) if h is _MISSING}
                    bad_rows.update(range(n) if idx is None else
                                    (j for j, t in enumerate(idx) if t in bad))
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
        return [self.decode(parts) for parts in unpack_states(data)]

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

    def intern(self, parts: Sequence[bytes], state):
        """`state` (whose per-variable encodings are `parts`) made of the
        cached values of its parts, the new ones cached as they are: equal
        values become one object, as in rebuilt states."""
        caches = self.caches
        hits = [c.get(p, _MISSING) for c, p in zip(caches, parts)]
        if _MISSING not in hits and self.make is not None:
            return self.make([h[1] for h in hits])
        return self._fill(parts, state, hits, False)[0]

    def _fill(self, parts, state, hits, encode_new: bool):
        """(state made of cached values, canonical parts): the values not yet
        cached are cached as they are (and, when rebuilt, made of shared
        sub-values and encoded once, so the encoder knows them)."""
        if self.make is None:
            self.make = type(state)._make
        canon = []
        values = []
        for c, p, v, h in zip(self.caches, parts, state, hits):
            if h is _MISSING:
                if len(c) >= self.LIMIT:
                    c.clear()
                if encode_new:
                    v = self._share(v)
                h = c[p] = (p, v)
                if encode_new:
                    encode(v)
            canon.append(h[0])
            values.append(h[1])
        return self.make(values), canon
