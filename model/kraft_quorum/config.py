"""Constants and variants of the `kraft_quorum` model, and their validation.

The reference's constants keep its names and its .cfg's values as defaults
(kraft/kip_996/kraft_kip_996.cfg: 5 hosts, 3 values, every fault, TestLiveness
TRUE); model-value sets are lists of names (`Hosts = ["h1", "h2", "h3"]`).
The constants after them go beyond the reference: the storage ones default
to what the reference does (no power losses) and, with storage on, to
Kafka's flushing; KAFKA_CONSTANTS name where the reference departs from
Kafka's code, the reference's behaviour by default in variant kip996 (the
reference, so that TLC conformance stays exact) and Kafka's in kip853. Every assumption
is checked here and raised as a ModelConfigError (exit 2) naming the
constant.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from model.base import Constant, ModelConfigError
from model.constants import resolve_constants

VOTER_FLUSH = ("end_offset_first", "before_fetch", "lazy")
VOTER_IDENTITY = ("disk_id", "node_id")
FOLLOWER_STATE = ("kept", "new")
CHECK_QUORUM = ("connectivity", "fetch")
FOLLOWER_HWM = ("leader", "monotonic")

REFERENCE_CONSTANTS = (
    Constant("MaxEpoch", int, 3,
             "TestLiveness FALSE: a server starts an election only below this epoch (no effect "
             "with TestLiveness TRUE)"),
    Constant("MaxRestarts", int, 1, "restarts that keep the disk (RestartWithState)"),
    Constant("MaxPermCrashes", int, 1,
             "crashes that lose the disk for good (CrashLoseState; the host may come back as a "
             "new server with a new disk id)"),
    Constant("MaxValuesPerEpoch", int, 1, "client values a leader appends per epoch"),
    Constant("MaxAddReconfigs", int, 2, "AddVoter commands a leader may accept"),
    Constant("MaxRemoveReconfigs", int, 2, "RemoveVoter commands a leader may accept"),
    Constant("MaxConnectivityChanges", int, 2,
             "network changes: each makes any set of server pairs the connected ones (2^(n(n-1)/2) "
             "successors for n = MaxSpawnedServers: 1,024 with 5, 8 with 3)"),
    Constant("MaxDisruptiveElectionTriggers", int, 2,
             "election timeouts and leader resignations without a cause (a fetch or election "
             "timeout with a reason is never limited)"),
    Constant("MaxSpawnedServers", int, 5,
             "servers ever started, the initial ones included (server ids 1..MaxSpawnedServers)"),
    Constant("InitClusterSize", int, 3, "voters of the initial configuration (servers 1..n)"),
    Constant("MinClusterSize", int, 3, "RemoveVoter only from a configuration larger than this"),
    Constant("MaxClusterSize", int, 5, "AddVoter only to a configuration smaller than this"),
    Constant("Value", (list, str), ["v1", "v2", "v3"], "client values, each written at most once"),
    Constant("Hosts", (list, str), ["h1", "h2", "h3", "h4", "h5"],
             "hosts; initial server i runs on the i-th, a new server on any"),
    Constant("TestLiveness", bool, True,
             "the reference's liveness mode: no epoch limit, pre-vote counter, and the extra "
             "conditions of kraft_kip_996_liveness.tla that keep a cluster able to progress. TRUE "
             "makes the state space infinite (a check needs a depth bound); FALSE bounds it by "
             "MaxEpoch (specs/quorum/first-check.toml)"),
)

# Beyond the reference: each default is the reference's behaviour.
STORAGE_CONSTANTS = (
    Constant("MaxPowerLosses", int, 0,
             "power losses (PowerLoss): the process stops and the unflushed suffix of the log is "
             "lost; the flushed log and the quorum-state file (epoch, vote) are kept. 0: the model "
             "tracks no flushing (the reference)"),
    Constant("VoterFlush", str, "end_offset_first",
             "with MaxPowerLosses > 0: end_offset_first (Kafka's KafkaRaftClient: a leader "
             "updates its end offset before it flushes its appends, flushLeaderLog, so a fetch "
             "waiting at its end is answered with entries not yet on its disk; a follower flushes "
             "in appendAsFollower, before its next Fetch reports the entries; a single voter "
             "commits before it flushes), before_fetch (also the leader flushes before it "
             "answers any Fetch) or lazy (a voter acknowledges before it flushes: a flush is a "
             "step of its own)", choices=VOTER_FLUSH),
    Constant("VoterIdentity", str, "disk_id",
             "disk_id (KIP-853: a voter is (id, directory id); a server that lost its disk comes "
             "back as a new server, an observer until added) or node_id (a voter is its node id, "
             "as a static quorum before KIP-853: a server that lost its disk rejoins as the same "
             "voter with an empty log, RestartAfterDiskLoss)", choices=VOTER_IDENTITY),
    Constant("Mutants", (list, str), [], "seeded protocol bugs (mutants.py); none by default"),
)

# Where the reference departs from Kafka's code: the reference's behaviour in
# the reference variant (kip996), Kafka's in kip853 (KAFKA_DEFAULTS).
KAFKA_CONSTANTS = (
    Constant("SingleVoterLeads", bool, False,
             "a single voter acknowledges a value once it appends it and elects itself "
             "(KafkaRaftClient: its own end offset is a majority; LeaderState.updateLocalState "
             "moves the high watermark). false: the reference's BecomeLeader has no successor "
             "for a single voter and its HandleClientRequest never acknowledges"),
    Constant("FollowerState", str, "kept",
             "kept (the reference: a follower that moves to a new leader or epoch keeps "
             "has_fetch_success, which decides the pre-votes it grants) or new (Kafka: "
             "QuorumState.transitionToFollower builds a new FollowerState, "
             "hasFetchedFromLeader false)", choices=FOLLOWER_STATE),
    Constant("CheckQuorum", str, "connectivity",
             "connectivity (the reference's ShouldResign: a leader resigns when fewer than a "
             "majority of its configuration are connected and not in a higher epoch) or fetch "
             "(Kafka, KAFKA-15489: LeaderState.updateCheckQuorumForFollowingVoter - a leader "
             "resigns when its check-quorum timer expires before it accepted fetches from a "
             "majority; CheckQuorumResign is that expiry)", choices=CHECK_QUORUM),
    Constant("FollowerHwm", str, "leader",
             "leader (the reference: a follower takes the high watermark of each fetch "
             "response, which a new leader may answer lower than the follower's) or monotonic "
             "(Kafka: FollowerState.updateHighWatermark refuses a decrease; KafkaRaftClient "
             "keeps the higher)", choices=FOLLOWER_HWM),
)
KAFKA_DEFAULTS = {"SingleVoterLeads": True, "FollowerState": "new", "CheckQuorum": "fetch",
                  "FollowerHwm": "monotonic"}

CONSTANTS = REFERENCE_CONSTANTS + STORAGE_CONSTANTS + KAFKA_CONSTANTS
KIP853_CONSTANTS = tuple(replace(c, default=KAFKA_DEFAULTS[c.name]) if c.name in KAFKA_DEFAULTS
                         else c for c in CONSTANTS)
VARIANT_CONSTANTS = {"kip996": CONSTANTS, "kip853": KIP853_CONSTANTS}

# Bounds that keep a run in what an explicit-state checker can do: every
# connectivity change enumerates every subset of the server pairs.
MAX_SERVERS = 9
MAX_SERVERS_WITH_CONNECTIVITY = 6


@dataclass(frozen=True)
class Variant:
    """How the variants differ (read by elections.py)."""

    name: str
    # KIP-996: a timeout makes a voter Prospective, asking for pre-votes in its
    # epoch; only a pre-vote majority starts an election. Without it (Kafka 3.9,
    # KIP-853 alone) a timeout starts an election in a new epoch at once.
    pre_vote: bool


KIP996 = Variant("kip996", pre_vote=True)
KIP853 = Variant("kip853", pre_vote=False)
VARIANTS = {v.name: v for v in (KIP996, KIP853)}


def resolve(variant: str, constants: dict) -> tuple[Variant, dict]:
    """The variant and the complete constants (defaults filled in), every
    assumption checked; ModelConfigError otherwise."""
    where = f"kraft_quorum/{variant}"
    if variant not in VARIANTS:
        raise ModelConfigError(f"kraft_quorum: unknown variant {variant!r} "
                               f"(known: {', '.join(VARIANTS)})")
    # no values is a quorum without client writes: said with MaxValuesPerEpoch = 0
    if constants.get("Value", None) == [] and constants.get("MaxValuesPerEpoch") != 0:
        raise ModelConfigError(f"{where}: Value must be a non-empty list of non-empty strings, got [] "
                               f"(MaxValuesPerEpoch = 0 switches client writes off)")
    cfg = resolve_constants(where, VARIANT_CONSTANTS[variant], constants)
    init, lo, hi = cfg["InitClusterSize"], cfg["MinClusterSize"], cfg["MaxClusterSize"]
    hosts, spawned = cfg["Hosts"], cfg["MaxSpawnedServers"]
    if init < 1:
        raise ModelConfigError(f"{where}: InitClusterSize must be at least 1, got {init}")
    if lo > hi:
        raise ModelConfigError(f"{where}: MinClusterSize ({lo}) is above MaxClusterSize ({hi})")
    if not lo <= init <= hi:
        raise ModelConfigError(f"{where}: InitClusterSize ({init}) must lie in MinClusterSize.."
                               f"MaxClusterSize ({lo}..{hi})")
    if len(hosts) < init:
        raise ModelConfigError(f"{where}: Hosts names {len(hosts)} host(s), fewer than "
                               f"InitClusterSize ({init}): each initial server needs its own host")
    if len(hosts) < hi:
        raise ModelConfigError(f"{where}: Hosts names {len(hosts)} host(s), fewer than "
                               f"MaxClusterSize ({hi})")
    if spawned < init:
        raise ModelConfigError(f"{where}: MaxSpawnedServers ({spawned}) is below InitClusterSize "
                               f"({init}): the initial servers are spawned servers")
    if spawned > MAX_SERVERS:
        raise ModelConfigError(f"{where}: MaxSpawnedServers must be at most {MAX_SERVERS}, "
                               f"got {spawned}")
    if cfg["MaxConnectivityChanges"] and spawned > MAX_SERVERS_WITH_CONNECTIVITY:
        raise ModelConfigError(
            f"{where}: with MaxConnectivityChanges > 0, MaxSpawnedServers must be at most "
            f"{MAX_SERVERS_WITH_CONNECTIVITY} (a change enumerates every subset of the "
            f"{spawned * (spawned - 1) // 2} server pairs), got {spawned}")
    if cfg["VoterFlush"] != VOTER_FLUSH[0] and not cfg["MaxPowerLosses"]:
        raise ModelConfigError(f"{where}: VoterFlush = {cfg['VoterFlush']!r} needs MaxPowerLosses "
                               f"> 0 (without power losses nothing unflushed is ever lost)")
    return VARIANTS[variant], cfg


def budget(constants: dict, defaults: dict) -> str:
    """ModelDef.budget: a spec's constants in a few words for the result
    tables - sizes, values, every fault and disruption limit, the epoch
    limit, liveness mode, and the constants beyond the reference where set."""
    c = {**defaults, **constants}
    init, lo, hi = c["InitClusterSize"], c["MinClusterSize"], c["MaxClusterSize"]
    sizes = f"{init} voters" + (f" ({lo}..{hi})" if (lo, hi) != (init, init) else "")
    parts = [sizes, f"{c['MaxSpawnedServers']} servers", f"{len(c['Hosts'])} hosts",
             f"{len(c['Value'])} value{'s' if len(c['Value']) != 1 else ''}"]
    if not c["TestLiveness"]:
        parts.append(f"MaxEpoch {c['MaxEpoch']}")
    for name, label in (("MaxRestarts", "restarts"), ("MaxPermCrashes", "disk losses"),
                        ("MaxPowerLosses", "power losses"), ("MaxAddReconfigs", "AddVoter"),
                        ("MaxRemoveReconfigs", "RemoveVoter"),
                        ("MaxConnectivityChanges", "network changes"),
                        ("MaxDisruptiveElectionTriggers", "disruptive timeouts")):
        if c[name]:
            parts.append(f"{label} {c[name]}")
    if c["MaxValuesPerEpoch"] != 1:
        parts.append(f"{c['MaxValuesPerEpoch']} values per epoch")
    parts.append("TestLiveness " + str(c["TestLiveness"]).lower())
    if c["MaxPowerLosses"]:
        parts.append(f"flush {c['VoterFlush']}")
    if c["VoterIdentity"] != "disk_id":
        parts.append(f"identity {c['VoterIdentity']}")
    kafka = [label for name, label in (("SingleVoterLeads", "single voter leads"),
                                       ("FollowerState", "new FollowerState"),
                                       ("CheckQuorum", "fetch check-quorum"),
                                       ("FollowerHwm", "monotonic follower HWM"))
             if c[name] == KAFKA_DEFAULTS[name]]
    if kafka:
        parts.append("Kafka's " + ", ".join(kafka))
    if c["Mutants"]:
        parts.append("Mutants " + ", ".join(c["Mutants"]))
    return "; ".join(parts)
