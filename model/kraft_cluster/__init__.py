"""`kraft_cluster`: KRaft as one system - kraft's partition replication
(model/kraft) under kraft_quorum's controller quorum (model/kraft_quorum),
with controller failover and metadata lag.

The KRaft description that comes with the reference TLA+
(Vanlightly/kafka-tlaplus, kraft v3.5) says the controller "is a replicated
state machine based on Raft", that metadata changes "are first written to
the controller Raft log and once committed are executed", that each broker
replicates the metadata log "lagging behind the controller by some
arbitrary amount" and keeps it on disk, and that a broker's registration
"is added to the Raft metadata log which means this information survives
controller fail-overs". This model checks that composition, reusing both
models' modules as they are:

- the controllers (constant Controllers) run kraft_quorum's elections and
  replication (its kip996 rules: pre-vote); the active controller is the
  quorum leader whose epoch's LeaderChangeRecord has committed;
- every controller decision of kraft (a registration with its broker epoch,
  fence, unfence, a partition change with leader, epochs, ISR, ELR and
  LastKnownELR) is a batch of records appended to the leader's log; its
  answer (AlterPartition, registration) goes out once the log up to it
  commits (QuorumController's deferred responses);
- a new active controller rebuilds its state from its log: the deposed
  one's uncommitted batches and pending answers are lost, the brokers
  re-send their requests;
- brokers apply the committed metadata log with any lag (kraft's
  ReceiveMetadataUpdate over the committed records); their copy survives
  a restart, as in kraft.

With Controllers = ["c1"] and MaxControllerFailovers = 0 every decision
commits as it is appended, and the projection `kraft` (kraft's variables)
has kraft's distinct states level by level (tests/conformance).

Modules: state (the variables), config (constants), metadata (records,
batches, replay), controller (the active controller: decisions, answers,
failover), model (Init, Next), mutants (seeded bugs), view (the trace view).
"""
from __future__ import annotations

from model.base import ModelDef
from model.budget import fault_budget
from model.kraft_cluster.config import CONSTANTS


def build(variant: str, constants: dict):
    """ModelDef.build: a ClusterModel, or ModelConfigError for bad constants."""
    from model.kraft_cluster.model import ClusterModel
    return ClusterModel(variant, dict(constants))


MODEL = ModelDef(
    name="kraft_cluster",
    doc="KRaft as one system: kraft's partition replication under kraft_quorum's controllers",
    variants=dict(CONSTANTS),
    build=build,
    budget=fault_budget,
    properties="invariants.kraft_cluster:cluster_properties",
    view="model.kraft_cluster.view:TRACE_VIEW",
    mutants="model.kraft_cluster.mutants:MUTANTS",
)
