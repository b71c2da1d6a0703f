"""The network of the reference (network.tla): a set of messages in flight and
a set of processed ones.

`messages` is a TLA+ set, not a bag: sending a message equal to one already
in flight is a no-op, and a processed message moves to `messages_discard`
(where __AvoidCycle's PreviouslySent finds it). Each function returns the new
pair (messages, messages_discard); callers put them into the successor state.
"""
from __future__ import annotations

from model.kraft.state import MsgType, RecoveryMsgType


def send(messages: frozenset, m) -> frozenset:
    """Send(m): messages' = messages \\union {m}."""
    return messages.union((m,))


def reply(messages: frozenset, discard: frozenset, d, m) -> tuple[frozenset, frozenset]:
    """Reply(d, m): consume d (moved to the processed set) and send m."""
    return messages.difference((d,)).union((m,)), discard.union((d,))


def discard(messages: frozenset, discarded: frozenset, d) -> tuple[frozenset, frozenset]:
    """Discard(d): consume d."""
    return messages.difference((d,)), discarded.union((d,))


def drop(messages: frozenset, discarded: frozenset, ms) -> tuple[frozenset, frozenset]:
    """Drop(msgs): consume every message of ms."""
    return messages.difference(ms), discarded.union(ms)


def previously_sent_witnesses(messages: frozenset, discarded: frozenset, m) -> int:
    """How many disjuncts of PreviouslySent(m) hold (0, 1 or 2).

    PreviouslySent is a disjunction; where the reference uses it in action
    position (__AvoidCycle), TLC explores each true disjunct as its own branch,
    so a message both in flight and processed yields two successors.
    """
    return (m in messages) + (m in discarded)


_N_TYPES = len(MsgType) + len(RecoveryMsgType)


def by_type(messages: frozenset) -> tuple[list, ...]:
    """The messages in flight bucketed by MsgType, each bucket in a canonical
    order so successors come out deterministically (never in the frozenset's
    hash order, which varies with PYTHONHASHSEED). The model remembers the
    buckets of the sets that recur (KraftModel.successors), so this runs
    once per distinct set while remembered."""
    buckets = [[] for _ in _TYPE_RANGE]
    for m in messages:
        buckets[m[0]].append(m)
    for bucket in buckets:
        if len(bucket) > 1:
            bucket.sort(key=_message_key)
    return tuple(buckets)


_TYPE_RANGE = range(_N_TYPES)


# A message object lives on in the successors' message sets (set operations
# keep the elements), so its sort key is remembered by identity; the entry
# holds the message, so its id cannot be reused while remembered. Bounded:
# cleared when full (only ever a speed-up).
_keys: dict[int, tuple] = {}
_KEYS_LIMIT = 1 << 16


def _message_key(m, _get=_keys.get, _id=id):
    hit = _get(_id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    key = canonical_key(m)
    if len(_keys) >= _KEYS_LIMIT:
        _keys.clear()
    _keys[_id(m)] = (m, key)
    return key


def canonical_key(v):
    """A total, hash-independent order over message values."""
    if v is None:
        return (0,)
    if isinstance(v, (bool, int)):
        return (1, int(v))
    if isinstance(v, str):
        return (2, v)
    if isinstance(v, frozenset):
        return (4, tuple(sorted(canonical_key(x) for x in v)))
    return (3, tuple(canonical_key(x) for x in v))
