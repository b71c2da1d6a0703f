"""`zk`: ZooKeeper-era Kafka replication of one partition, with and without
KIP-101 leader epochs.

Built from Kafka's design documents, not from a reference specification
(docs/sources.md): the 0.8 replication design (the Apache Kafka wiki's
"Kafka Replication": ISR, HW, flush and HW checkpoint, failure handling,
replica placement), the detailed design V2 ("Kafka Detailed Replication
Design V2": ZooKeeper paths, leader election, becomeLeader /
becomeFollower, the commit thread, fetching) and KIP-101 (the two failure
scenarios of HW truncation and the leader-epoch fix; unclean leader
election).

Variants:
- `hw_truncation`: a follower that restarts or becomes follower truncates to
  its (checkpointed) HW, then fetches from there (the 0.8 design);
- `leader_epoch`: records carry the leader epoch; a follower asks the leader
  for the end offset of its latest epoch (OffsetsForLeaderEpoch) and
  truncates only what the leader's log does not have (KIP-101 as written,
  without the later KIP-279 checks).

Who elects (constant Election, both variants): `registration` (the default,
the 0.8 replication design and the detailed design V2: the replicas race to register as leader in
ZooKeeper) or `controller` (what Kafka did from 0.8 on: a controller elects
from the ISR and removes a failed broker from it when it learns of the
broker's session loss, v3.5 description 2.8; with the ZooKeeper controller's
blind spot for a broker that bounced unseen, and BrokerEpochs for the
fixes: controller.py).

Modules, one per actor: zookeeper (the registry, elections by
registration), controller (Election = controller), broker (power loss,
process crash, controlled shutdown, restart, session expiry), storage (flush,
HW checkpoint), replica (roles, truncation, commit, ISR), fetch, producer
(Acks all or 1), consumer (Consumer = true: an observer reading up to a
leader's HW), ghost (acknowledged records for the properties), placement
(the 0.8 replication design's replica placement rule), state, config, model (Init / Next:
ZkModel).

Modelling choices (each one a reading of these documents; a different reading is a
new variant or constant, not an edit):
1. ZooKeeper is one atomic step per operation; the leader, its epoch and the
   ISR share one versioned znode, as in 0.8. Election = registration: the
   leader entry is cleared when the leader's session ends (V2: it is
   ephemeral). Election = controller: only the controller writes the leader.
2. Three ways to stop, each bounded, as the kraft storage variants name them:
   PowerLoss (the log falls back to its flushed prefix), ProcessCrash (the
   page cache survives: nothing is lost), ControlledShutdown (flush and HW
   checkpoint first; with the controller, Kafka's several steps:
   ControlledShutdownSteps). Each ends the broker's session at once (no session
   timeout) and loses the in-memory HW; restart recovers the HW as
   min(checkpointed HW, LEO) (V2 startReplica).
3. The ISR is written by the leader (and, Election = controller, by the
   controller): a dead follower stays in it until the leader shrinks it or
   the controller handles its session loss. The leader drops a follower that
   has not caught up to its LEO within replica.lag.time.max.ms: untimed, one
   whose last fetch was below the LEO at any time, and one whose last fetch
   reached it when it then stalls (FollowerStallLimit; 0 is Kafka 2.1 on,
   KAFKA-7152). It is re-added when a fetch reaches the leader's LEO ("fully
   catches up", 0.8 replication design). An election keeps the ISR's live
   members.
4. A fetch is two steps (the leader handles the request; the follower handles
   the response); a response carries every record from the fetch offset on.
5. A flush syncs the whole log written so far; a HW checkpoint writes the
   current HW. Both are steps that may happen at any time.
6. A follower whose fetch offset is beyond the leader's LEO truncates to the
   leader's LEO (0.8's handleOffsetOutOfRange).
7. Only the assigned replicas act; other brokers have no replica.
8. Elections race with every other step: a leader that lost its session
   (and, with PowerLoss, its unflushed log) may restart and win the
   registration against a live ISR member that has the data (V2 startReplica
   calls leaderElection when no leader exists; 0.8 replication design: "the replica that
   registers first becomes the new leader"). PromptElection restores the
   old scheduling assumption (a due election is the only step), under which
   KIP-101's "immediate leader election" is told.
9. Fetch requests carry no leader epoch (as before KIP-320): a follower not
   yet told of a new epoch fetches from whichever broker it follows, if that
   broker leads; a fetch response in flight survives its sender's crash.
10. Acknowledgements, keepers and the `truncated` flag are ghost state
   (ghost.py); `faults` counts the faults against their limits and holds
   the ghost flags of two witnesses (ElectionRaced, the unclean leader).
"""
from __future__ import annotations

from model.base import ModelDef
from model.budget import fault_budget
from model.zk.config import CONSTANTS, VARIANTS


def build(variant: str, constants: dict):
    """ModelDef.build: a ZkModel, or ModelConfigError for bad constants."""
    from model.zk.model import ZkModel
    return ZkModel(variant, dict(constants))


MODEL = ModelDef(
    name="zk",
    doc="ZooKeeper-era Kafka replication (one partition): HW truncation vs KIP-101 leader epochs",
    variants={name: CONSTANTS for name in VARIANTS},
    build=build,
    budget=fault_budget,
    properties="invariants.zk:zk_properties",
    temporal="invariants.zk.liveness:zk_temporal",
    fairness="invariants.zk.liveness:zk_fairness",
    view="model.zk.view:TRACE_VIEW",
)
