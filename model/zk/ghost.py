"""Ghost bookkeeping of acknowledged records, for the durability properties.

Kafka promises that a committed (acks=all) record survives "as long as at least
one replica remains in sync" (Kafka's design docs, "Unclean leader election": "If all the
nodes replicating a partition die, this guarantee no longer holds"). We make
that premise exact with a set of *keepers* per acknowledged value:

"Acknowledged" here is acks=all's acknowledgement: the HW passed the record
(replica.commit). With Acks = "1" the producer hears back at the leader's
append, and Kafka promises nothing for that acknowledgement: the promise
below still covers a record once the HW passes it (Kafka's promise is for
committed records, whatever the producer waited for), and never a record
only the leader's append acknowledged (NoAcksOneRecordLost, which is not a
promise, shows those lost).

- a broker becomes a keeper of v when it is in the ISR (the znode's) and holds
  v: at the acknowledgement (every ISR member holding v), when it joins the ISR
  holding v, or when a fetch brings v to an ISR member;
- it stops being one when it leaves the ISR (shrink, or an election that drops
  it) or when a crash loses v (v was beyond its flushed offset); a broker down
  after a clean shutdown stays one when the ISR drops it while it is down (it
  holds v on disk; the ISR only notes its absence) until it restarts outside
  the ISR, unless an unclean election replaces the ISR (Kafka's documented
  trade-off: no ISR member was alive);
- truncating v away *by protocol* (to the HW, to a leader's offset) does not
  end it: that truncation is exactly what the properties check.

v is *protected* while at every moment since its acknowledgement some keeper
was up: running, or down after a clean shutdown (which flushed everything and
lost nothing: a broker restarted after a rolling upgrade is still the replica
Kafka promised with). Once no keeper is up, its keepers are emptied for good
(the record is outside the promise; states that differ only there then
coincide). The functions take `up`, per broker whether it is up in that sense
(up_of below).
"""
from __future__ import annotations

from model.zk.state import Acked

EMPTY = frozenset()


def values_of(log) -> frozenset:
    return frozenset(r.value for r in log)


def up_of(running: tuple, clean_down: frozenset) -> tuple:
    """Per broker: running, or down after a clean shutdown."""
    if not clean_down:
        return running
    return tuple(r or b in clean_down for b, r in enumerate(running))


def _up_keeper(keepers, up) -> bool:
    for m in keepers:
        if up[m]:
            return True
    return False


def acknowledge(acked: tuple, values, isr, logs) -> tuple:
    """`values` (in log order) are acknowledged now: every member of `isr`
    holding a value keeps it. A value committed again (a leader that kept a
    lower HW, ElectionHw kept, passes it once more) enters the promise anew
    if it had left it; one still protected keeps its keepers."""
    new = list(acked)
    for v in values:
        old = next((a for a in new if a.value == v), None)
        if old is not None:
            if old.keepers:
                continue
            new.remove(old)
        keepers = frozenset(m for m in isr if any(r.value == v for r in logs[m]))
        new.append(Acked(v, keepers))
    new.sort()
    return tuple(new)


def _with_keepers(acked: tuple, new_keepers) -> tuple:
    """`acked` with each record's keepers replaced by new_keepers(a); the same
    tuple when no record's keepers changed (new_keepers returns a.keepers)."""
    changed = False
    new = []
    for a in acked:
        keepers = new_keepers(a)
        if keepers is not a.keepers:
            changed = True
            a = Acked(a.value, keepers)
        new.append(a)
    return tuple(new) if changed else acked


def crash(acked: tuple, b: int, lost: frozenset, up) -> tuple:
    """Broker b stopped (up[b] is False unless it shut down cleanly) and lost
    the values in `lost`."""
    if not acked:
        return acked

    def keepers(a):
        k = a.keepers
        if k:
            if b in k and a.value in lost:
                k = k - {b}
            if not _up_keeper(k, up):
                k = EMPTY
        return k
    return _with_keepers(acked, keepers)


def isr_changed(acked: tuple, isr, running, clean_down, unclean: bool = False) -> tuple:
    """The ISR is now `isr` (by an unclean election: `unclean`): restrict,
    where a broker down after a clean shutdown keeps its records unless the
    election was unclean."""
    if not acked:
        return acked
    keep = isr if unclean or not clean_down else isr | clean_down
    return restrict(acked, keep, up_of(running, clean_down))


def restrict(acked: tuple, isr, up) -> tuple:
    """Keepers outside `isr` stop being keepers."""
    if not acked:
        return acked

    def keepers(a):
        k = a.keepers
        if k and not k <= isr:
            k = k & isr
            if not _up_keeper(k, up):
                k = EMPTY
        return k
    return _with_keepers(acked, keepers)


def gain(acked: tuple, b: int, held) -> tuple:
    """ISR member b now holds the values in `held`: it keeps the protected ones."""
    if not acked:
        return acked

    def keepers(a):
        k = a.keepers
        return k | {b} if k and b not in k and a.value in held else k
    return _with_keepers(acked, keepers)
