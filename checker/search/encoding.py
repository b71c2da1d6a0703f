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
(`is`), and only the changed variables are encoded (`encode_successor`; the
engine uses `VariableEncoders`: msgpack's C packer for the variables whose
values hold no set, `encode` for the others). `encode` caches by object
identity, structurally (see "encoding" below), so a changed variable costs
about its changed sub-objects only. The caches are bounded and only ever a
speed-up: the bytes of a value never depend on them. The fingerprint is xxh3
over the concatenated parts of the projection's variables; as each part is a
complete msgpack object, the concatenation is injective (it is exactly the
body of the msgpack array of those variables).
"""
from __future__ import annotations

import io
from operator import itemgetter
from typing import Any, Callable, Iterable, Sequence

import msgpack
import xxhash

from checker.search import native

FROZENSET_EXT = 1


# ---- encoding ------------------------------------------------------------------
#
# msgpack's plain C packer encodes every value without a set in one call (a
# NamedTuple is a tuple, an IntEnum member an int). It never calls back into
# Python, so one instance serves every nesting level; it refuses sets
# (TypeError), which are ours to encode.
_plain = msgpack.Packer(autoreset=True).pack

# Values holding sets are encoded structurally and cached by object
# identity. Successors share the unchanged sub-objects of their parent
# (`_replace`, `except_at`, `msgs | {m}`), so a changed variable is mostly
# made of objects encoded before: a per-broker tuple that changed at one
# broker re-encodes that broker's item only, a metadata log that grew its new
# record only.
# - A tuple holding a set (found out when msgpack refuses it; remembered per
#   NamedTuple type), or a plain tuple whose first item is a tuple or a set,
#   is encoded item by item: array header + the items' encodings (exactly an
#   array's encoding), each container item cached on its own. Any other tuple
#   is one C call and not cached.
# - A frozenset: its elements' encodings sorted bytewise and joined, as an
#   ExtType (sets of plain ints are also kept by value: _int_sets).
# An entry holds the object itself, so its id cannot be reused while cached
# (and it is keyed by identity, never by value: True == 1 would otherwise let
# {True} take {1}'s bytes). The cache is cleared when it reaches
# _CACHE_LIMIT entries: a bound on memory; the bytes never depend on it.
_cache: dict[int, tuple] = {}   # id -> (obj, bytes) or, for a set, (obj, bytes, ExtType)
_CACHE_LIMIT = 1 << 17

# ExtType's validating __new__ is Python code and costs ~1 us; our code and
# payload are valid by construction, so build the namedtuple directly.
_ExtType = msgpack.ExtType
_new_tuple = tuple.__new__
# types msgpack packs by itself, as scalars (int and str subclasses, IntEnum
# members among them, join as they are met)
_SCALARS: set = {int, str, bool, type(None), float, bytes}
# NamedTuple types seen holding a set: encoded item by item from then on
_ITEMWISE: set = set()
_HEADERS = tuple(bytes([0x90 | n]) for n in range(16))


def _py_encode(obj: Any, _get=_cache.get, _id=id) -> bytes:
    """The canonical msgpack bytes of a value (pure Python)."""
    # (the keyword defaults bind hot names locally; _cache is only ever cleared)
    hit = _get(_id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    return _encode_uncached(obj)


def _encode_uncached(obj: Any) -> bytes:
    t = type(obj)
    if t is frozenset:
        return _frozenset_bytes(obj)
    if t is tuple:
        if obj and (type(obj[0]) in _ITEMWISE or type(obj[0]) is tuple
                    or type(obj[0]) is frozenset):
            b = _items(obj)
        else:
            try:
                return _plain(obj)
            except TypeError:
                b = _items(obj)
    elif t in _ITEMWISE:
        b = _items(obj)
    elif t in _SCALARS:
        return _plain(obj)
    elif isinstance(obj, tuple):
        try:
            return _plain(obj)
        except TypeError:
            _ITEMWISE.add(t)
            b = _items(obj)
    else:
        return _encode_other(obj)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[id(obj)] = (obj, b)
    return b


def _items(obj, _get=_cache.get, _id=id) -> bytes:
    """A tuple item by item: the msgpack array header, then the items'
    encodings (an array's encoding is exactly that)."""
    n = len(obj)
    head = _HEADERS[n] if n < 16 else _array_header(n)
    scalars = _SCALARS
    # (encode() inlined: most items are scalars or cached)
    return head + b"".join([_plain(x) if type(x) in scalars
                            else h[1] if (h := _get(_id(x))) is not None and h[0] is x
                            else _encode_uncached(x) for x in obj])


def _frozenset_bytes(obj: frozenset) -> bytes:
    """A frozenset not in the identity cache."""
    for x in obj:
        if type(x) is not int:
            return _set_encoding(obj)[0]
    # only plain ints (or empty): by value, then by identity too (the same
    # set objects recur in records, metadata, messages)
    b = _int_sets.get(obj)
    if b is None:
        b = _int_set_bytes(obj)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[id(obj)] = (obj, b)
    return b


# Sets of plain ints (broker ids, offsets, ...) are rebuilt as new objects
# with values met before (`isr - {b}`, `replicas | adding`), so their
# encodings are kept by value, in a table of their own. Only sets whose
# elements are all exactly `int` are looked up there: {True} and {1.0} equal
# {1} but encode otherwise.
_int_sets: dict[frozenset, bytes] = {}
_INT_SETS_LIMIT = 1 << 14


def _int_set_bytes(obj: frozenset) -> bytes:
    encs = list(map(_plain, obj))
    encs.sort()
    b = _plain(_new_tuple(_ExtType, (FROZENSET_EXT, b"".join(encs))))
    if len(_int_sets) >= _INT_SETS_LIMIT:
        _int_sets.clear()
    _int_sets[obj] = b
    return b


def _set_encoding(obj) -> tuple:
    """(bytes, ExtType) of a frozenset (cached by identity) or set: the
    elements' encodings sorted bytewise (iteration order is irrelevant) and
    concatenated (each is self-delimiting, so the payload decodes uniquely)."""
    scalars = _SCALARS
    get = _cache.get
    encs = []
    for x in obj:
        if type(x) in scalars:
            encs.append(_plain(x))
            continue
        hit = get(id(x))
        if hit is not None and hit[0] is x:
            encs.append(hit[1])
            continue
        # a new set re-encodes all its elements: cache every tuple element
        # (a message set that gained a message re-packs that message only)
        e = _encode_uncached(x)
        if isinstance(x, tuple):
            _cache[id(x)] = (x, e)
        encs.append(e)
    encs.sort()
    ext = _new_tuple(_ExtType, (FROZENSET_EXT, b"".join(encs)))
    b = _plain(ext)
    if type(obj) is frozenset:  # a mutable set may change under its id
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[id(obj)] = (obj, b, ext)
    return b, ext


if native.ENABLED:
    _native_encode = native._native.encode

    def encode(obj: Any) -> bytes:
        """The canonical msgpack bytes of a value (compiled; the same bytes as
        _py_encode, which takes the values it refuses: lists, dicts, ...)."""
        try:
            return _native_encode(obj)
        except TypeError:
            return _py_encode(obj)
else:
    encode = _py_encode


# Anything else (a mutable set, a list or dict holding sets, an int or str
# subclass not met yet, an unsupported type) goes through msgpack with a
# `default` hook. That packer calls back into Python, and msgpack's C Packer
# is not re-entrant: a packer per nesting depth (created on first need).
_nested_packers: list = []
_depth = 0


def _default(obj: Any):
    if isinstance(obj, (frozenset, set)):
        return _set_encoding(obj)[1]
    raise TypeError(f"kmc cannot encode a value of type {type(obj).__name__}: {obj!r}")


def _encode_other(obj: Any) -> bytes:
    global _depth
    if isinstance(obj, (frozenset, set)):
        return _set_encoding(obj)[0]
    if isinstance(obj, (int, str)):  # msgpack packs a subclass as its base value
        _SCALARS.add(type(obj))
        return _plain(obj)
    d = _depth
    if d == len(_nested_packers):
        _nested_packers.append(msgpack.Packer(default=_default, autoreset=True))
    _depth = d + 1
    try:
        return _nested_packers[d].pack(obj)
    finally:
        _depth = d


def clear_caches() -> None:
    """Forget every cached encoding (they are only ever a speed-up)."""
    _cache.clear()
    _int_sets.clear()


class VariableEncoders(list):
    """Per variable index, the function the engine encodes its values with:
    msgpack's C packer while the variable's values hold no set (most
    variables never do), `encode` from the first value that does. Both give
    the same bytes; switching is only about speed. The engine calls
    `fallback` when the C packer refuses a value."""

    def __init__(self, n: int):
        super().__init__([_plain] * n)

    def fallback(self, i: int, value: Any) -> bytes:
        self[i] = encode
        return encode(value)

    def __reduce__(self):  # a fresh one in another process (a packer does not pickle)
        return (VariableEncoders, (len(self),))


def encode_changed(encoders: VariableEncoders, parent: Sequence, parent_parts: Sequence[bytes],
                   succ: Sequence) -> list[bytes]:
    """Per-variable encodings of `succ` with `encoders`, falling back to
    `encode` where the C packer refuses a value (the engine's slow path)."""
    parts = list(parent_parts)
    for i, (a, b) in enumerate(zip(parent, succ)):
        if a is not b:
            try:
                parts[i] = encoders[i](b)
            except TypeError:
                parts[i] = encoders.fallback(i, b)  # raises for a value kmc cannot encode
    return parts


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


def projection_selector(variables: Sequence[str],
                        projection: Sequence[str] | None) -> Callable[[Sequence[bytes]], bytes]:
    """parts -> the bytes the fingerprint covers: all variables (default) or
    the fingerprint projection's (TLC's VIEW), always in state order (so its
    spelling order is irrelevant)."""
    if projection is None or tuple(projection) == tuple(variables):
        return b"".join
    index = {name: i for i, name in enumerate(variables)}
    unknown = [v for v in projection if v not in index]
    if unknown:
        raise ValueError(f"unknown projection variable(s): {', '.join(unknown)}")
    idx = sorted({index[v] for v in projection})
    if len(idx) == 1:
        i = idx[0]
        return lambda parts: parts[i]
    get = itemgetter(*idx)
    join = b"".join
    return lambda parts: join(get(parts))


def projection_indices(variables: Sequence[str], projection: Sequence[str] | None) -> tuple[int, ...] | None:
    """The indices of the parts projection_selector joins, in state order;
    None for every variable (the compiled successor's form of the same choice)."""
    if projection is None or tuple(projection) == tuple(variables):
        return None
    index = {name: i for i, name in enumerate(variables)}
    return tuple(sorted({index[v] for v in projection}))


def state_fingerprint(state: Sequence, bits: int = 64, variables: Sequence[str] | None = None,
                      projection: Sequence[str] | None = None) -> int:
    """The fingerprint of one state, computed from scratch (tests, replay)."""
    parts = encode_state(state)
    names = variables if variables is not None else getattr(state, "_fields", range(len(state)))
    return fingerprint_function(bits)(projection_selector(tuple(names), projection)(parts))
