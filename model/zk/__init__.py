"""`zk`: ZooKeeper-era Kafka replication of one partition, with and without
KIP-101 leader epochs.

Built from the seeds, not from a reference specification: 003 (the 0.8
high-level design: ISR, HW, flush and HW checkpoint, failure handling,
replica placement), 001 (the V2 detailed design: ZooKeeper paths, leader
election, becomeLeader / becomeFollower, the commit thread, fetching) and
004 (KIP-101: the two failure scenarios of HW truncation and the leader-epoch
fix; unclean leader election).

Variants:
- `hw_truncation`: a follower that restarts or becomes follower truncates to
  its (checkpointed) HW, then fetches from there (the 0.8 design);
- `leader_epoch`: records carry the leader epoch; a follower asks the leader
  for the end offset of its latest epoch (OffsetsForLeaderEpoch) and
  truncates only what the leader's log does not have (KIP-101 as written,
  without the later KIP-279 checks).

Modules, one per actor: zookeeper (the registry, elections), broker (crash,
restart, session expiry), storage (flush, HW checkpoint), replica (roles,
truncation, commit, ISR), fetch, producer, ghost (acknowledged records for
the properties), placement (the seed's replica placement rule), state,
config, model (Init / Next: ZkModel).

Modelling choices (each one a reading of the seeds; a different reading is a
new variant or constant, not an edit):
1. ZooKeeper is one atomic step per operation; the leader, its epoch and the
   ISR share one versioned znode, as in 0.8. The leader entry is cleared when
   the leader's session ends (V2: it is ephemeral).
2. A crash ends the broker's session at once (no session timeout), loses the
   log beyond the flushed offset and the in-memory HW; restart recovers the
   HW as min(checkpointed HW, LEO) (V2 startReplica).
3. The ISR is written by the leader only: a dead follower stays in it until
   the leader shrinks it for lagging (its last fetch offset is below the
   leader's LEO); it is re-added when a fetch reaches the leader's LEO
   ("fully catches up", seed 003). An election keeps the ISR's live members.
4. A fetch is two steps (the leader handles the request; the follower handles
   the response); a response carries every record from the fetch offset on.
5. A flush syncs the whole log written so far; a HW checkpoint writes the
   current HW. Both are steps that may happen at any time.
6. A follower whose fetch offset is beyond the leader's LEO truncates to the
   leader's LEO (0.8's handleOffsetOutOfRange).
7. Only the assigned replicas act; other brokers have no replica.
8. Elections are prompt: while no leader is registered and a live replica
   may be elected, an election is the only step (the controller reacts to
   the leader's session loss before anything else happens). Without this a
   leader that crashed and lost its unflushed log could restart and win the
   registration race against a live ISR member that has the data.
9. Fetch requests carry no leader epoch (as before KIP-320): a follower not
   yet told of a new epoch fetches from whichever broker it follows, if that
   broker leads; a fetch response in flight survives its sender's crash.
10. Acknowledgements, keepers and the `truncated` flag are ghost state
   (ghost.py); `crashes` and `expiries` count against the limits.
"""
from __future__ import annotations

from model.base import ModelDef
from model.registry import register
from model.zk.config import CONSTANTS, VARIANTS


def build(variant: str, constants: dict):
    """ModelDef.build: a ZkModel, or ModelConfigError for bad constants."""
    from model.zk.model import ZkModel
    return ZkModel(variant, dict(constants))


MODEL = register(ModelDef(
    name="zk",
    doc="ZooKeeper-era Kafka replication (one partition): HW truncation vs KIP-101 leader epochs",
    variants={name: CONSTANTS for name in VARIANTS},
    build=build,
))
