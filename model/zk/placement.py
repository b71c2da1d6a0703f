"""Replica placement of the ZooKeeper-era high-level design (0.8 replication design,
"Replica placements / Initial placement").

The design's words: "We sort the list of brokers and the list of partitions.
If there are n brokers, we assign the ith partition to the (i mod n)th broker.
The first replica of this partition will reside on this assigned broker and
is referred to as the preferred replica of this partition. We want to place
the other replicas in such a way that if a broker is down, its load is spread
evenly to all surviving brokers, instead of to a single one. In order to
achieve that, suppose there are m partitions assigned to a broker i. The jth
replica of partition k will be assigned to broker (i + j + k) mod n."

How we read it (interpretation, tested in tests/zk/test_placement.py):
- "partition k" is the k-th partition of broker i (k = 0..m-1, i.e. the
  global partition i + k*n), not the global partition id: with the global id
  every partition of broker i would get the same followers, the opposite of
  the stated goal;
- "the jth replica" counts the followers, j = 1..RF-1: j = 0 would put the
  first replica on broker i + k, contradicting "the first replica ... will
  reside on this assigned broker".

What the rule does (measured by the tests, not just claimed):
- preferred replicas are spread evenly (counts differ by at most one);
- the rule is only valid while k + j never reaches n: once a broker has more
  than n - RF + 1 partitions, (i + j + k) mod n wraps onto broker i itself and
  a partition gets two replicas on one broker (with the design's own example of
  3 brokers and 100 partitions, RF 2, partition 6 is placed twice on broker 0);
- where it is valid, the followers of a failed broker's partitions cover
  brokers i+1 .. i+m+RF-2: all n-1 survivors only when m >= n - RF + 1,
  so exactly when m = n - RF + 1; then each survivor holds between 1 and
  min(RF-1, m) of them (even only for RF = 2). The new leaders (the
  first follower, j = 1) land on m brokers only: for RF > 2 fewer than n - 1.
- the figure the design gives ("p0 to p14 on broker-0 to broker-4 ... if
  broker-0 goes down, partitions p0, p1, and p2 can be served from all
  remaining 4 brokers") numbers partitions per broker (p0, p1, p2 on broker-0,
  contiguous), not round robin (p0, p5, p10): read with our indexing, broker-0's
  three partitions with RF 3 have followers on all 4 other brokers (1, 2, 2, 1
  of them), but only brokers 1, 2, 3 take over their leadership.

`assign_replicas` is the collision-free form Kafka shipped (AdminUtils
.assignReplicasToBrokers: the follower shift is 1 + (shift + j) mod (n - 1),
never 0): it equals the design's rule wherever that is valid and keeps the
spread for any number of partitions. The model places its partition with it.
"""
from __future__ import annotations

from collections import Counter


def _check(n: int, partitions: int, rf: int) -> None:
    if n < 1:
        raise ValueError(f"need at least one broker, got {n}")
    if partitions < 0:
        raise ValueError(f"partitions must be >= 0, got {partitions}")
    if not 1 <= rf <= n:
        raise ValueError(f"replication factor must be in 1..{n}, got {rf}")


def design_placement(n: int, partitions: int, rf: int) -> list[tuple[int, ...]]:
    """The design's rule, literally: partition p's replicas, preferred first.
    Partition p goes to broker i = p mod n as its k = p div n-th partition;
    follower j (1..rf-1) goes to (i + j + k) mod n. May repeat a broker."""
    _check(n, partitions, rf)
    out = []
    for p in range(partitions):
        i, k = p % n, p // n
        out.append((i,) + tuple((i + j + k) % n for j in range(1, rf)))
    return out


def assign_replicas(n: int, partitions: int, rf: int) -> list[tuple[int, ...]]:
    """The design's rule with Kafka's fix: follower j of broker i's k-th
    partition goes to i + 1 + ((k + j - 1) mod (n - 1)), mod n. Distinct
    brokers per partition; equal to design_placement while k + rf - 1 < n."""
    _check(n, partitions, rf)
    out = []
    for p in range(partitions):
        i, k = p % n, p // n
        out.append((i,) + tuple((i + 1 + (k + j - 1) % (n - 1)) % n for j in range(1, rf)))
    return out


def preferred_counts(assignment, n: int) -> list[int]:
    """How many partitions each broker is the preferred replica of."""
    c = Counter(r[0] for r in assignment)
    return [c.get(b, 0) for b in range(n)]


def follower_spread(assignment, failed: int, n: int) -> dict[int, int]:
    """Of the partitions whose preferred replica is on `failed`, how many
    follower replicas each other broker holds (the load it takes over)."""
    c = Counter(b for r in assignment if r[0] == failed for b in r[1:] if b != failed)
    return {b: c.get(b, 0) for b in range(n) if b != failed}


def new_leader_spread(assignment, failed: int, n: int) -> dict[int, int]:
    """Of the partitions led by `failed` (its preferred replica), how many
    each other broker leads once `failed` is down (the first live replica
    in assignment order)."""
    c = Counter(next((b for b in r if b != failed), None) for r in assignment if r[0] == failed)
    return {b: c.get(b, 0) for b in range(n) if b != failed}


def has_collision(assignment) -> bool:
    """Some partition has two replicas on one broker."""
    return any(len(set(r)) != len(r) for r in assignment)
