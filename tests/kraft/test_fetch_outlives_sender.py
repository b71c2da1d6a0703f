"""FetchRequestsSurviveStop: a follower's fetch request outlives its sender
(KIP-903's race) and the two halves of KIP-903's fix (model/kraft/fetch.py)."""
from __future__ import annotations

from model.base import Action
from model.kraft.config import resolve
from model.kraft.model import KraftModel
from model.kraft.state import MsgType

C = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=2, InitIsrSize=2,
         NoDataLossShutdownLimit=0, DataLossShutdownLimit=1, FenceBrokerLimit=0,
         LeaderShrinkIsrLimit=0, ReassignmentLimit=0)


def one(m, s, name, b):
    """The successor by the action; of several metadata updates, the one that
    applies the most records."""
    out = m.successors_of(s, Action(name, (b,)))
    if name == "ReceiveMetadataUpdate":
        return max(out, key=lambda t: len(t.broker_metadata_log[b - 1]))
    assert len(out) == 1, f"{name}({b}): {len(out)} successors"
    return out[0]


def requests(s):
    return [m for m in s.messages if m.type == MsgType.FetchRequest]


def fetched_then_stopped(m):
    s = m.init_states()[0]
    for name, b in (("WriteRecordToLeader", 1), ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1),
                    ("ReceiveFetchResponse", 2), ("SendFetchRequest", 2), ("DataLossShutdown", 2)):
        s = one(m, s, name, b)
    return s


def test_the_request_is_dropped_by_default_and_kept_on_request():
    for variant in ("kip966", "v3_5"):
        # the reference's behaviour: like its other defaults, not listed among the constants
        assert "FetchRequestsSurviveStop" not in resolve(variant, {})[1]
    for variant in ("kip966_storage", "v3_5_storage"):
        # Kafka's behaviour by default; listed only when set to the reference's
        assert "FetchRequestsSurviveStop" not in resolve(variant, {})[1]
        off = resolve(variant, {"FetchRequestsSurviveStop": False})[1]
        assert off["FetchRequestsSurviveStop"] is False
    m = KraftModel("kip966", {**C, "FetchRequestsSurviveStop": True})
    assert m.constants["FetchRequestsSurviveStop"] is True
    assert requests(fetched_then_stopped(KraftModel("kip966", C))) == []
    (req,) = requests(fetched_then_stopped(KraftModel("kip966", {**C, "FetchRequestsSurviveStop": True})))
    assert (req.source, req.broker_epoch, req.partition.fetch_offset) == (2, 2, 2)


def test_the_leader_fences_a_fetch_of_an_earlier_incarnation_and_its_answer_is_lost():
    m = KraftModel("kip966", {**C, "FetchRequestsSurviveStop": True})
    s = fetched_then_stopped(m)
    for name, b in (("BrokerStart", 2), ("ReceiveBrokerRegRequest", 2), ("ReceiveMetadataUpdate", 1),
                    ("ReceiveBrokerRegResponse", 2), ("ReceiveMetadataUpdate", 2),
                    ("SendFetchRequest", 2)):
        s = one(m, s, name, b)
    assert s.broker_state[1].broker_epoch == 3 and s.partition_data[1].log == ()
    stale, new = sorted(requests(s), key=lambda r: r.broker_epoch)
    assert (stale.broker_epoch, stale.partition.fetch_offset) == (2, 2)
    assert (new.broker_epoch, new.partition.fetch_offset) == (3, 1)
    # the leader takes the new incarnation's fetch first, then the stale one
    (s,) = [t for t in m.successors_of(s, Action("ReceiveFetchRequest", (1,))) if stale in t.messages]
    assert s.partition_replica_state[0][1].broker_epoch == 3
    (t,) = [t for t in m.successors_of(s, Action("ReceiveFetchRequest", (1,))) if stale not in t.messages]
    assert t.partition_replica_state[0][1] == s.partition_replica_state[0][1]  # fenced: LEO kept at 1
    assert [r for r in t.messages if r.type == MsgType.FetchResponse] == [
        r for r in s.messages if r.type == MsgType.FetchResponse]  # no answer to a gone connection
