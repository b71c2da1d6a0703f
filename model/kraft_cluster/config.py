"""Constants of the `kraft_cluster` model: every constant of kraft's variant
(same name, same meaning, same default), then the controllers'. The
controllers' faults keep kraft_quorum's names, prefixed with Controller
where a broker's could be meant."""
from __future__ import annotations

from model.base import Constant, ModelConfigError
from model.constants import resolve_constants
from model.kraft import mutants as kraft_mutants
from model.kraft.config import KIP966_CONSTANTS, V3_5_CONSTANTS
from model.kraft_cluster import mutants

_MUTANTS = Constant("Mutants", (list, str), [],
                    "seeded bugs to switch on, by name: kraft's (model/kraft/mutants.py) and the "
                    "cluster's (model/kraft_cluster/mutants.py); [] = none")
CONTROLLER_CONSTANTS = (
    Constant("Controllers", (list, str), ["c1", "c2", "c3"],
             "the controllers (KRaft voters), quorum servers 1..n in this order; the first leads "
             "epoch 1"),
    Constant("MaxControllerFailovers", int, 1,
             "controller leaders elected after the first (0: the first leader stays active)"),
    Constant("ControllerMaxEpoch", int, 3,
             "kraft_quorum's MaxEpoch: a controller starts an election only below this epoch"),
    Constant("ControllerMaxRestarts", int, 0,
             "kraft_quorum's MaxRestarts: controller restarts that keep the disk (the in-memory "
             "state and the high watermark are lost)"),
    Constant("MaxDisruptiveElectionTriggers", int, 1,
             "kraft_quorum's: controller election timeouts and resignations without a cause"),
    Constant("ControllerIdleFetches", bool, False,
             "false (default, Kafka): a following controller fetches only when the fetch can change "
             "something (kraft_quorum's LIVENESS_HelpsMakeProgress: KafkaRaftClient's leader parks "
             "a fetch with nothing new, so an idle fetch has no effect); true: every fetch, as "
             "kraft_quorum with TestLiveness false"),
)


def _kraft_part(decls):
    # MinIsrChanges: not modelled here (the partition under the quorum keeps MinISR)
    return tuple(c for c in decls if c.name not in ("Mutants", "MinIsrChanges", "MinIsrChangeBumpsPartitionEpoch"))


CONSTANTS = {"kip966": _kraft_part(KIP966_CONSTANTS) + CONTROLLER_CONSTANTS + (_MUTANTS,),
             "v3_5": _kraft_part(V3_5_CONSTANTS) + CONTROLLER_CONSTANTS + (_MUTANTS,)}


def resolve(variant: str, constants: dict) -> tuple[dict, dict, list]:
    """(kraft's constants, the controllers' constants, the cluster's mutant
    names), every rule checked; ModelConfigError (one line) otherwise."""
    where = f"kraft_cluster/{variant}"
    if variant not in CONSTANTS:
        raise ModelConfigError(f"kraft_cluster: unknown variant {variant!r} "
                               f"(known: {', '.join(CONSTANTS)})")
    decls = CONSTANTS[variant]
    own_names = {c.name for c in CONTROLLER_CONSTANTS} | {"Mutants"}
    unknown = sorted(set(constants) - {c.name for c in decls})
    if unknown:
        raise ModelConfigError(f"{where}: unknown constant(s) {', '.join(unknown)} "
                               f"(known: {', '.join(c.name for c in decls)})")
    own = resolve_constants(where, CONTROLLER_CONSTANTS + (_MUTANTS,),
                            {k: v for k, v in constants.items() if k in own_names}, {},
                            nonempty=("Controllers",))
    names = own["Mutants"]
    unknown = [n for n in names if n not in kraft_mutants.MUTANTS and n not in mutants.MUTANTS]
    if unknown:
        raise ModelConfigError(f"{where}: unknown mutant(s) {', '.join(map(repr, unknown))} "
                               f"(known: {', '.join(list(kraft_mutants.MUTANTS) + list(mutants.MUTANTS))})")
    kraft = {k: v for k, v in constants.items() if k not in own_names}
    kraft_names = [n for n in names if n in kraft_mutants.MUTANTS]
    if kraft_names:
        kraft["Mutants"] = kraft_names
    if len(own["Controllers"]) > 5:
        raise ModelConfigError(f"{where}: Controllers names {len(own['Controllers'])} "
                               f"controllers; at most 5")
    return kraft, own, [n for n in names if n in mutants.MUTANTS]
