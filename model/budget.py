"""How a Kafka spec's constants read in the result tables' "fault budget"
column (ModelDef.budget of kraft and zk): sizes first, the number of
values, every fault limit above 0, the flush policy and recovery strategy,
the rest where not default."""
from __future__ import annotations

SIZES = (("BrokerCount", "{} brokers"), ("InitReplicationFactor", "RF {}"),
         ("ReplicationFactor", "RF {}"), ("MinISR", "MinISR {}"), ("InitIsrSize", "ISR {}"))
# shown even at their default: what a reader must know to trust the row
ALWAYS_SHOWN = {"FlushPolicy": "flush {}", "UncleanRecoveryStrategy": "recovery {}",
                "PromptElection": "prompt elections {}", "Election": "election by {}"}


def fault_budget(constants: dict, defaults: dict) -> str:
    """The constants in a few words: sizes, values, every fault limit above
    0, the flush policy and recovery strategy, the rest where not default."""
    parts, done = [], set()
    for name, fmt in SIZES:
        if name in constants:
            parts.append(fmt.format(constants[name]))
            done.add(name)
    if isinstance(constants.get("Values"), list):
        n = len(constants["Values"])
        parts.append(f"{n} value{'s' if n != 1 else ''}")
        done.add("Values")
    for name, value in constants.items():
        if name in done:
            continue
        if name.endswith("Limit") and isinstance(value, int) and not isinstance(value, bool):
            if value > 0:
                parts.append(f"{name[:-len('Limit')]} {value}")
        elif name in ALWAYS_SHOWN:
            text = ALWAYS_SHOWN[name].format(str(value).lower() if isinstance(value, bool) else value)
            if value == "every_n" and "FlushEveryN" in constants:
                text += f" (N {constants['FlushEveryN']})"
            elif value == "segment_roll" and "SegmentSize" in constants:
                text += f" (segment {constants['SegmentSize']})"
            parts.append(text)
        elif name in ("FlushEveryN", "SegmentSize"):
            continue
        elif value != defaults.get(name):
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            parts.append(f"{name} {str(shown).lower() if isinstance(value, bool) else shown}")
    return "; ".join(parts) or "-"
