"""Constants and variants of the `zk` model, and their validation.

Both variants share the constants; a `Variant` is the switch the actions read
(never a copy of an action per variant). Every assumption the model makes of
its constants is checked here and raised as a ModelConfigError (exit 2) that
names the constant.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.base import Constant, ModelConfigError

CONSTANTS = (
    Constant("BrokerCount", int, 2, "number of brokers, ids 0..BrokerCount-1 (seed 003: broker-0, ...)"),
    Constant("ReplicationFactor", int, 2,
             "assigned replicas of the partition, placed by the seed's placement rule (placement.py)"),
    Constant("Values", (list, str), ["A"], "values the producer may write; each is written at most once"),
    Constant("CrashLimit", int, 2, "how many broker crashes may happen (a crash loses the unflushed log tail)"),
    Constant("UncleanLeaderElection", bool, False,
             "a live replica outside the ISR may be elected when no ISR member is alive (seed 004)"),
    Constant("SessionExpiryLimit", int, 0,
             "how many ZooKeeper sessions may expire while the broker keeps running (a zombie leader)"),
    Constant("ConditionalIsrUpdate", bool, True,
             "the leader writes the ISR under a check of the znode version it last saw"),
)

# Upper bounds that keep a run in the range an explicit-state checker can do;
# they are assumptions of the model, not of the protocol.
MAX_BROKERS = 5
MAX_VALUES = 4


@dataclass(frozen=True)
class Variant:
    """How the two protocol versions differ (read by replica.py and producer.py)."""

    name: str
    # KIP-101: records carry the leader epoch; a follower truncates to the end
    # offset of its latest epoch on the leader (OffsetsForLeaderEpoch) instead
    # of to its high watermark.
    leader_epoch: bool


HW_TRUNCATION = Variant("hw_truncation", leader_epoch=False)
LEADER_EPOCH = Variant("leader_epoch", leader_epoch=True)
VARIANTS = {v.name: v for v in (HW_TRUNCATION, LEADER_EPOCH)}


def resolve(variant: str, constants: dict) -> tuple[Variant, dict]:
    """The variant and the complete constants (defaults filled in), every
    assumption checked; ModelConfigError otherwise."""
    if variant not in VARIANTS:
        raise ModelConfigError(f"zk: unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    known = {c.name: c for c in CONSTANTS}
    unknown = sorted(set(constants) - set(known))
    if unknown:
        raise ModelConfigError(f"zk/{variant}: unknown constant(s) {', '.join(unknown)} "
                               f"(known: {', '.join(known)})")
    cfg = {c.name: constants.get(c.name, c.default) for c in CONSTANTS}
    where = f"zk/{variant}"
    for c in CONSTANTS:
        val = cfg[c.name]
        if c.type is int:
            if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                raise ModelConfigError(f"{where}: {c.name} must be a natural number, got {val!r}")
        elif c.type is bool:
            if not isinstance(val, bool):
                raise ModelConfigError(f"{where}: {c.name} must be true or false, got {val!r}")
        else:
            if (not isinstance(val, (list, tuple)) or not val
                    or not all(isinstance(x, str) and x for x in val)):
                raise ModelConfigError(f"{where}: Values must be a non-empty list of non-empty "
                                       f"strings, got {val!r}")
            if len(set(val)) != len(val):
                raise ModelConfigError(f"{where}: Values must be unique, got {list(val)!r}")
            cfg[c.name] = list(val)
    n, rf = cfg["BrokerCount"], cfg["ReplicationFactor"]
    if not 1 <= n <= MAX_BROKERS:
        raise ModelConfigError(f"{where}: BrokerCount must be in 1..{MAX_BROKERS}, got {n}")
    if not 1 <= rf <= n:
        raise ModelConfigError(f"{where}: ReplicationFactor must be in 1..BrokerCount ({n}), got {rf}")
    if len(cfg["Values"]) > MAX_VALUES:
        raise ModelConfigError(f"{where}: at most {MAX_VALUES} Values, got {len(cfg['Values'])}")
    return VARIANTS[variant], cfg
