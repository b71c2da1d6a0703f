"""The small kip966 configuration the liveness tests run (2 brokers, RF 2,
MinISR 1, one value, no shutdowns; TLC's kip966-b2 with FenceBrokerLimit 0,
kip966-b2f1 with 1), as spec text."""


def kip966_b2(head: str = "", fence: int = 1) -> str:
    """A spec: `head` goes before [constants] (invariants, properties, fairness)."""
    return f"""model = "kraft"
variant = "kip966"
{head}
[constants]
BrokerCount = 2
InitReplicationFactor = 2
Values = ["A"]
MinISR = 1
InitIsrSize = 2
NoDataLossShutdownLimit = 0
DataLossShutdownLimit = 0
FenceBrokerLimit = {fence}
LeaderShrinkIsrLimit = 0
ReassignmentLimit = 0
"""
