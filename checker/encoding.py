"""Canonical encoding of states and their fingerprints (ARCHITECTURE.md,
"Fingerprints and dedup").

A value has exactly one encoding, the same in every process whatever its
PYTHONHASHSEED:
- None, bool, int, str: msgpack's own (an IntEnum member is its int);
- tuple / NamedTuple: a msgpack array of its items;
- frozenset: ExtType(FROZENSET_EXT, the elements' encodings sorted bytewise,
  concatenated). msgpack encodings are self-delimiting, so the payload decodes
  uniquely; sorting makes iteration order irrelevant; the ext type keeps a set
  apart from a tuple with the same elements.

Hot path: a state is kept beside its per-variable encodings ("parts"). A
successor reuses the parent's bytes of every variable whose object it shares
(`is`), and only the changed variables are encoded (`encode_successor`). The
fingerprint is xxh3 over the concatenated parts of the view's variables; as
each part is a complete msgpack object, the concatenation is injective (it is
exactly the body of the msgpack array of those variables).
"""
from __future__ import annotations

import io
from operator import itemgetter
from typing import Any, Callable, Iterable, Sequence

import msgpack
import xxhash

FROZENSET_EXT = 1


# msgpack's C Packer is not re-entrant: a frozenset met while packing is
# packed by the packer of the next nesting depth (created on first need).
# Creating a Packer per call (msgpack.packb) costs more than the packing.
_nested_packers: list = []
_depth = 0
_EMPTY_SET = msgpack.ExtType(FROZENSET_EXT, b"")
# ExtType's validating __new__ is Python code and costs ~1 us; our code and
# payload are valid by construction, so build the namedtuple directly.
_ExtType = msgpack.ExtType
_new_tuple = tuple.__new__


# Frozensets are the costly part of encoding (each element packed, then the
# encodings sorted). Successors share the unchanged sub-objects of their
# parent (`_replace`, `msgs | {m}`), so encodings are cached by object
# identity: a frozenset's ExtType, and the bytes of each tuple element of a
# set (a message set that gained one message re-packs only that message).
# An entry holds the object itself, so its id cannot be reused while cached.
# Identity, never value: True == 1 would otherwise let {True} take {1}'s bytes.
_cache: dict[int, tuple] = {}
_CACHE_LIMIT = 1 << 16


def _pack_elements(obj, pack) -> bytes:
    if isinstance(next(iter(obj)), tuple):
        get = _cache.get
        encs = []
        for e in obj:
            hit = get(id(e))
            if hit is not None and hit[0] is e:
                encs.append(hit[1])
            else:
                b = pack(e)
                encs.append(b)
                _cache[id(e)] = (e, b)
    else:  # ints, strings: packing is cheaper than a lookup
        encs = list(map(pack, obj))
    encs.sort()
    return b"".join(encs)


def _default(obj: Any, _get=_cache.get, _id=id, _frozenset=frozenset):
    # (the keyword defaults bind hot names locally; _cache is only ever cleared)
    global _depth
    if type(obj) is _frozenset or isinstance(obj, (frozenset, set)):
        if not obj:
            return _EMPTY_SET
        hit = _get(_id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        d = _depth
        if d == len(_nested_packers):
            _nested_packers.append(msgpack.Packer(default=_default, autoreset=True))
        _depth = d + 1
        try:
            payload = _pack_elements(obj, _nested_packers[d].pack)
        finally:
            _depth = d
        ext = _new_tuple(_ExtType, (FROZENSET_EXT, payload))
        if type(obj) is frozenset:  # a mutable set may change under its id
            _cache[id(obj)] = (obj, ext)
        return ext
    raise TypeError(f"kmc cannot encode a value of type {type(obj).__name__}: {obj!r}")


encode = msgpack.Packer(default=_default, autoreset=True).pack


def _ext_hook(code: int, data: bytes):
    if code == FROZENSET_EXT:
        return frozenset(msgpack.Unpacker(io.BytesIO(data), ext_hook=_ext_hook,
                                          use_list=False, raw=False, strict_map_key=False))
    return msgpack.ExtType(code, data)


def decode(data: bytes) -> Any:
    """Plain values back from `encode`: tuples for arrays (NamedTuples too),
    frozensets for sets. Model.from_plain rebuilds a state's NamedTuples."""
    return msgpack.unpackb(data, ext_hook=_ext_hook, use_list=False, raw=False,
                           strict_map_key=False)


def encode_state(state: Sequence) -> tuple[bytes, ...]:
    """Per-variable encodings of a whole state (initial states, replay)."""
    return tuple(map(encode, state))


def encode_successor(parent: Sequence, parent_parts: Sequence[bytes], succ: Sequence) -> list[bytes]:
    """Per-variable encodings of `succ`, re-encoding only the variables whose
    object differs from the parent's. (The engine inlines this loop.)"""
    return [p if a is b else encode(b) for p, a, b in zip(parent_parts, parent, succ)]


def parts_to_bytes(parts: Iterable[bytes]) -> bytes:
    """One state's canonical bytes: a msgpack array of its variables."""
    parts = tuple(parts)
    return _array_header(len(parts)) + b"".join(parts)


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x90 | n])
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def decode_state(data: bytes) -> tuple:
    """Inverse of `parts_to_bytes`: the plain tuple of variable values."""
    return decode(data)


def fingerprint_function(bits: int = 64) -> Callable[[bytes], int]:
    """bytes -> int fingerprint: xxh3_64 (default) or xxh3_128."""
    if bits == 64:
        return xxhash.xxh3_64_intdigest
    if bits == 128:
        return xxhash.xxh3_128_intdigest
    raise ValueError(f"fingerprint bits must be 64 or 128, not {bits}")


def view_selector(variables: Sequence[str], view: Sequence[str] | None) -> Callable[[Sequence[bytes]], bytes]:
    """parts -> the bytes the fingerprint covers: all variables (default) or
    the view's, always in state order (so a view's spelling order is irrelevant)."""
    if view is None or tuple(view) == tuple(variables):
        return b"".join
    index = {name: i for i, name in enumerate(variables)}
    unknown = [v for v in view if v not in index]
    if unknown:
        raise ValueError(f"unknown view variable(s): {', '.join(unknown)}")
    idx = sorted({index[v] for v in view})
    if len(idx) == 1:
        i = idx[0]
        return lambda parts: parts[i]
    get = itemgetter(*idx)
    join = b"".join
    return lambda parts: join(get(parts))


def state_fingerprint(state: Sequence, bits: int = 64, variables: Sequence[str] | None = None,
                      view: Sequence[str] | None = None) -> int:
    """The fingerprint of one state, computed from scratch (tests, replay)."""
    parts = encode_state(state)
    names = variables if variables is not None else getattr(state, "_fields", range(len(state)))
    return fingerprint_function(bits)(view_selector(tuple(names), view)(parts))
