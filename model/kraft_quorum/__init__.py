"""`kraft_quorum`: KRaft, the Raft quorum of Kafka's controllers (KIP-595),
with dynamic voters (KIP-853, Kafka 3.9) and pre-vote (KIP-996, Kafka 4.0).

Written from the public TLA+ specification Vanlightly/kafka-tlaplus, folder
kraft/kip_996 ("final version of KIP-996 with KIP-853", MIT licence): its
variables, actions and constants keep their names, and variant `kip996`
explores exactly the states TLC explores (tests/conformance). Variant
`kip853` is the same protocol without pre-vote: an election timeout starts
an election in a new epoch at once, as Kafka 3.9 does (beyond the reference).

Modules, one per actor or concern: state (the variables and their values),
config (constants, variants), network (messages and connectivity
primitives), connectivity (ChangeNetworkConnectivity), roles (a server's
state transitions), elections (timeouts, pre-vote, vote, leader, resign),
begin_quorum (BeginQuorumEpoch), replication (client writes, fetch, the
high watermark), reconfig (AddVoter, RemoveVoter), identity (servers as
(host, disk id), StartNewServer), faults (restart, crash, power loss),
storage (flushing, beyond the reference), limits (the reference's
TestLiveness conditions), mutants (seeded bugs), model (Init, Next), view
(how a trace reads).

Where the reference (and so the default model) differs from Kafka:
1. A new server sends its first fetch straight to a leader (the
   reference's shortcut); its answer is never read (the fetch is not its
   pending one), so it waits as an observer until a leader adds it.
2. A leader appends AddVoter without waiting for the new voter to catch up.
3. A leader accepts fetches only from members of its configuration: an
   observer's fetch at a valid position is never answered (the reference's
   HandleObserverFetch is unreachable).
4. A single-voter configuration never elects a new leader (BecomeLeader
   both sets and keeps the HWM there, and TLC finds no successor) and never
   acknowledges; SingleVoterLeads = true is Kafka's single voter.
5. Storage is not modelled: an append is durable at once, and a crash
   either keeps everything (RestartWithState) or loses the disk for good
   (CrashLoseState). MaxPowerLosses > 0 adds what Kafka does (storage.py).
6. A follower keeps has_fetch_success when it moves to a new leader or epoch
   (FollowerState = "new": Kafka's new FollowerState).
7. A leader resigns by an oracle over connectivity (CheckQuorum = "fetch":
   Kafka's check-quorum timer over the fetches it accepts, KAFKA-15489).
8. A follower takes the HWM of each answer, lower or not (FollowerHwm =
   "monotonic": Kafka's FollowerState.updateHighWatermark).
Departures 4 and 6-8 are constants whose default is the reference's in
kip996 and Kafka's in kip853 (config.KAFKA_DEFAULTS).
Each fault and each disruption is bounded by its constant (MaxRestarts, ...),
as in the reference; TestLiveness adds the reference's liveness conditions.
"""
from __future__ import annotations

from model.base import ModelDef
from model.kraft_quorum.config import VARIANT_CONSTANTS, budget


def build(variant: str, constants: dict):
    """ModelDef.build: a QuorumModel, or ModelConfigError for bad constants."""
    from model.kraft_quorum.model import QuorumModel
    return QuorumModel(variant, dict(constants))


MODEL = ModelDef(
    name="kraft_quorum",
    doc="KRaft's controller quorum (KIP-595 Raft, KIP-853 dynamic voters, KIP-996 pre-vote)",
    variants=VARIANT_CONSTANTS,
    build=build,
    budget=budget,
    properties="invariants.kraft_quorum:quorum_properties",
    temporal="invariants.kraft_quorum.liveness:quorum_temporal",
    fairness="invariants.kraft_quorum.liveness:reference_fairness",
    view="model.kraft_quorum.view:TRACE_VIEW",
    mutants="model.kraft_quorum.mutants:MUTANTS",
)
