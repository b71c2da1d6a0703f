"""What the Spark engine's records are made of, on executors and in level files.

- A state travels as the list of its variables' canonical msgpack encodings
  ("parts", checker.encoding); `parts_to_bytes(parts)` is its canonical bytes.
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
from typing import Sequence

import msgpack

from checker.encoding import decode_state, encode, parts_to_bytes

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
    """A batch of states (their parts lists) with each distinct part stored
    once: msgpack [distinct parts, per state the indices of its parts]. The
    states of a level share most of their variables' values."""
    index: dict[bytes, int] = {}
    table: list[bytes] = []
    rows = []
    for parts in states:
        row = []
        for p in parts:
            i = index.get(p)
            if i is None:
                i = index[p] = len(table)
                table.append(p)
            row.append(i)
        rows.append(row)
    return pack([table, rows])


def unpack_states(data: bytes) -> list[list[bytes]]:
    """The parts lists back; equal parts are one bytes object (hashed once)."""
    table, rows = unpack(data)
    return [[table[i] for i in row] for row in rows]


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
    puts it and its sub-objects in that cache (checker.encoding.encode), so
    the successors that keep most of it re-encode their changes only, as in
    the local engine, where every value was encoded when it was made."""

    LIMIT = 1 << 17  # entries per variable before that variable's cache is dropped

    def __init__(self, model):
        self.model = model
        self.caches: list[dict] = [dict() for _ in model.variables]
        self.make = None  # the state class's _make, learnt from from_plain

    def decode(self, parts: Sequence[bytes]):
        """(state, canonical parts list)."""
        caches = self.caches
        hits = [c.get(p, _MISSING) for c, p in zip(caches, parts)]
        if _MISSING not in hits and self.make is not None:
            return self.make([h[1] for h in hits]), [h[0] for h in hits]
        state = self.model.from_plain(decode_state(parts_to_bytes(parts)))
        return self._fill(parts, state, hits, True)

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
        cached are cached as they are (and encoded once, when rebuilt, so the
        encoder knows them)."""
        if self.make is None:
            self.make = type(state)._make
        canon = []
        values = []
        for c, p, v, h in zip(self.caches, parts, state, hits):
            if h is _MISSING:
                if len(c) >= self.LIMIT:
                    c.clear()
                h = c[p] = (p, v)
                if encode_new:
                    encode(v)
            canon.append(h[0])
            values.append(h[1])
        return self.make(values), canon
